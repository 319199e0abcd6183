package org.ndgather.op.core;

import org.ndgather.NativeOps;
import org.ndgather.Operand;
import org.ndgather.Output;
import org.ndgather.op.PrimitiveOp;
import org.ndgather.op.Scope;

/**
 * NumPy's {@code take_along_axis} (ONNX's {@code GatherElements}), beyond TF Java: each output
 * element reads {@code arr} at its own position, except along {@code axis}, where it reads at
 * the index; {@code arr} and {@code indices} broadcast against each other elsewhere.
 *
 * <pre>{@code
 * Ops tf = Ops.create(EagerSession.create());
 * TakeAlongAxis<Integer> best =
 *     tf.takeAlongAxis(tf.constant(new int[][] {{10, 30, 20}, {60, 40, 50}}),
 *         tf.constant(new long[][] {{1}, {0}}), 1);
 * // best.asOutput().tensor() holds [[30], [60]]
 * }</pre>
 *
 * @param <T> the type of the elements
 */
public final class TakeAlongAxis<T> extends PrimitiveOp implements Operand<T> {
  /** Optional attributes of {@link TakeAlongAxis}. */
  public static final class Options extends PolicyOptions<Options> {
    private Options() {}

    @Override
    Options self() {
      return this;
    }
  }

  private final Output<T> output;

  private TakeAlongAxis(Output<T> output) {
    super(output.op());
    this.output = output;
  }

  /**
   * Creates the op.
   *
   * @param <T> the type of the elements
   * @param <U> the type of the indices
   * @param scope current scope
   * @param arr the values
   * @param indices the positions along {@code axis}
   * @param axis the axis (negative counts from the end)
   * @param options carries optional attributes values
   * @return a new instance of TakeAlongAxis
   */
  public static <T, U extends Number> TakeAlongAxis<T> create(
      Scope scope, Operand<T> arr, Operand<U> indices, long axis, Options... options) {
    String policy = PolicyOptions.policy(options);
    return new TakeAlongAxis<>(NativeOps.takeAlongAxis(scope, arr, indices, axis, policy));
  }

  /**
   * @param badIndicesPolicy see {@link Options#badIndicesPolicy(String)}
   * @return options with it
   */
  public static Options badIndicesPolicy(String badIndicesPolicy) {
    return new Options().badIndicesPolicy(badIndicesPolicy);
  }

  /** The values taken along the axis. */
  public Output<T> output() {
    return output;
  }

  @Override
  public Output<T> asOutput() {
    return output;
  }
}
