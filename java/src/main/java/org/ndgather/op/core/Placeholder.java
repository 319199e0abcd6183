package org.ndgather.op.core;

import org.ndgather.NativeOps;
import org.ndgather.Operand;
import org.ndgather.Output;
import org.ndgather.Shape;
import org.ndgather.op.PrimitiveOp;
import org.ndgather.op.Scope;

/**
 * A placeholder op for a value that will be fed into the computation.
 *
 * @param <T> the type of the elements
 */
public final class Placeholder<T> extends PrimitiveOp implements Operand<T> {
  /** Optional attributes of {@link Placeholder}. */
  public static final class Options {
    private Shape shape;

    private Options() {}

    /**
     * @param shape the shape of the tensor (unknown by default)
     * @return these options
     */
    public Options shape(Shape shape) {
      this.shape = shape;
      return this;
    }
  }

  private final Output<T> output;

  private Placeholder(Output<T> output) {
    super(output.op());
    this.output = output;
  }

  /**
   * A placeholder of {@code dtype}.
   *
   * @param <T> the type of the elements
   * @param scope the scope (of a graph)
   * @param dtype the class of the elements
   * @param options the shape, optionally
   * @return the placeholder
   */
  public static <T> Placeholder<T> create(Scope scope, Class<T> dtype, Options... options) {
    Shape shape = null;
    for (Options o : options) {
      if (o.shape != null) {
        shape = o.shape;
      }
    }
    return new Placeholder<>(NativeOps.placeholder(scope, dtype, shape));
  }

  /**
   * @param shape the shape of the tensor
   * @return options with it
   */
  public static Options shape(Shape shape) {
    return new Options().shape(shape);
  }

  /** The placeholder's output. */
  public Output<T> output() {
    return output;
  }

  @Override
  public Output<T> asOutput() {
    return output;
  }
}
