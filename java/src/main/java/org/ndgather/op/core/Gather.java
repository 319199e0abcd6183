package org.ndgather.op.core;

import org.ndgather.NativeOps;
import org.ndgather.Operand;
import org.ndgather.Output;
import org.ndgather.op.PrimitiveOp;
import org.ndgather.op.Scope;

/**
 * Gather slices from {@code params} axis {@code axis} according to {@code indices}
 * ({@code GatherV2}). The output has shape {@code params.shape[:axis] +
 * indices.shape[batch_dims:] + params.shape[axis + 1:]}.
 *
 * <pre>{@code
 * Ops tf = Ops.create(EagerSession.create());
 * Constant<Integer> params = tf.constant(new int[][] {{1, 2}, {3, 4}});
 * Gather<Integer> secondColumn = tf.gather(params, tf.constant(new int[] {1}), tf.constant(1));
 * // secondColumn.asOutput().tensor() holds [[2], [4]]
 * }</pre>
 *
 * @param <T> the type of the elements
 */
public final class Gather<T> extends PrimitiveOp implements Operand<T> {
  /** Optional attributes of {@link Gather}. */
  public static final class Options extends IndexOptions<Options> {
    private Options() {}

    @Override
    Options self() {
      return this;
    }
  }

  private final Output<T> output;

  private Gather(Output<T> output) {
    super(output.op());
    this.output = output;
  }

  /**
   * Factory method to create a class wrapping a new Gather operation.
   *
   * @param <T> the type of the elements
   * @param <U> the type of the indices (int32 or int64, or another integer type)
   * @param <V> the type of the axis (int32 or int64)
   * @param scope current scope
   * @param params The tensor from which to gather values. Must be at least rank {@code axis + 1}.
   * @param indices Index tensor. Must be in range {@code [0, params.shape[axis])}.
   * @param axis The axis in {@code params} to gather {@code indices} from; negative counts from the end.
   * @param options carries optional attributes values
   * @return a new instance of Gather
   * @throws IllegalArgumentException if the shapes, known now, cannot be gathered
   */
  public static <T, U extends Number, V extends Number> Gather<T> create(
      Scope scope, Operand<T> params, Operand<U> indices, Operand<V> axis, Options... options) {
    long batchDims = IndexOptions.batchDims(options);
    String policy = IndexOptions.policy(options);
    return new Gather<>(NativeOps.gather(scope, params, indices, axis, batchDims, policy));
  }

  /**
   * @param badIndicesPolicy see {@link Options#badIndicesPolicy(String)}
   * @return options with it
   */
  public static Options badIndicesPolicy(String badIndicesPolicy) {
    return new Options().badIndicesPolicy(badIndicesPolicy);
  }

  /**
   * @param batchDims see {@link Options#batchDims(Long)}
   * @return options with it
   */
  public static Options batchDims(Long batchDims) {
    return new Options().batchDims(batchDims);
  }

  /** Values from {@code params} gathered from indices given by {@code indices}. */
  public Output<T> output() {
    return output;
  }

  /** Returns the symbolic handle of a tensor. */
  @Override
  public Output<T> asOutput() {
    return output;
  }
}
