package org.ndgather;

import java.lang.ref.Cleaner;
import java.util.Objects;

/**
 * A symbolic handle to a tensor produced by an {@link Operation} (TF Java's {@code Output}).
 *
 * @param <T> the type of the elements
 */
public final class Output<T> implements Operand<T> {
  private final Tensor.Handle state;
  private final Cleaner.Cleanable cleanable;
  private final ExecutionEnvironment env;
  private final String name;
  private final String type;

  Output(ExecutionEnvironment env, long handle) {
    this.state = new Tensor.Handle(handle, Native::outputFree);
    this.cleanable = Tensor.CLEANER.register(this, state);
    this.env = env;
    try {
      this.name = Native.outputName(handle);
      this.type = Native.outputType(handle);
    } catch (RuntimeException e) {
      // No caller gets this output: free its handle now rather than at a collection.
      cleanable.clean();
      throw e;
    }
    NativeOps.register(env, this);
  }

  long handle() {
    return state.get("Output");
  }

  ExecutionEnvironment env() {
    return env;
  }

  /** The operation this output is the output of. */
  public Operation op() {
    return new Operation(this, name, type);
  }

  /** Which output of the op (the ops here have one). */
  public int index() {
    return 0;
  }

  /** The static shape (fully known in an eager session). */
  public Shape shape() {
    return Shape.of(state.call(this, "Output", Native::outputShape));
  }

  /** The type of the elements. */
  public DataType dataType() {
    return DataType.fromNative(state.call(this, "Output", Native::outputDtype));
  }

  @Override
  public Output<T> asOutput() {
    return this;
  }

  /**
   * The value of an eager op's output (or of a graph's constant).
   *
   * @return a new tensor; the caller closes it
   * @throws IllegalStateException for an output of a graph op, which only a {@link
   *     Session} computes
   */
  public Tensor<T> tensor() {
    long t = state.call(this, "Output", Native::outputValue);
    if (t == 0) {
      throw new IllegalStateException(
          "the output of '" + name + "' has no value: run its graph in a Session");
    }
    return new Tensor<>(t);
  }

  void free() {
    cleanable.clean();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Output<?> other && other.env == env && other.name.equals(name);
  }

  @Override
  public int hashCode() {
    return Objects.hash(System.identityHashCode(env), name);
  }

  @Override
  public String toString() {
    return String.format("<%s '%s:0' shape=%s dtype=%s>", type, name, shape(), dataType());
  }
}
