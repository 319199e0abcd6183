package org.ndgather.op.core;

import java.nio.ByteBuffer;
import org.ndgather.NativeOps;
import org.ndgather.Operand;
import org.ndgather.Output;
import org.ndgather.Tensor;
import org.ndgather.op.PrimitiveOp;
import org.ndgather.op.Scope;

/**
 * An operator producing a constant value.
 *
 * @param <T> the type of the elements
 */
public final class Constant<T> extends PrimitiveOp implements Operand<T> {
  private final Output<T> output;

  private Constant(Output<T> output) {
    super(output.op());
    this.output = output;
  }

  /**
   * A constant holding {@code object}'s elements (a Java scalar or rectangular array, as
   * {@link Tensor#create(Object, Class)} takes).
   *
   * @param <T> the type of the elements
   * @param scope the scope
   * @param object the value
   * @param type the class of the elements
   * @return the constant
   */
  public static <T> Constant<T> create(Scope scope, Object object, Class<T> type) {
    try (Tensor<T> value = Tensor.create(object, type)) {
      return create(scope, value);
    }
  }

  /**
   * A constant of {@code type} and {@code shape} from the elements' bytes in native order.
   *
   * @param <T> the type of the elements
   * @param scope the scope
   * @param type the class of the elements
   * @param shape the shape
   * @param data the bytes
   * @return the constant
   */
  public static <T> Constant<T> create(Scope scope, Class<T> type, long[] shape, ByteBuffer data) {
    try (Tensor<T> value = Tensor.create(type, shape, data)) {
      return create(scope, value);
    }
  }

  /**
   * A constant holding a copy of {@code value}.
   *
   * @param <T> the type of the elements
   * @param scope the scope
   * @param value the value (still the caller's to close)
   * @return the constant
   */
  public static <T> Constant<T> create(Scope scope, Tensor<T> value) {
    return new Constant<>(NativeOps.constant(scope, value));
  }

  /** The constant's value. */
  public Output<T> output() {
    return output;
  }

  @Override
  public Output<T> asOutput() {
    return output;
  }
}
