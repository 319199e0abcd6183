package org.ndgather.op.core;

import org.ndgather.NativeOps;
import org.ndgather.Operand;
import org.ndgather.Output;
import org.ndgather.op.PrimitiveOp;
import org.ndgather.op.Scope;

/**
 * Gather slices from {@code params} into a Tensor with shape specified by {@code indices}.
 *
 * <p>{@code indices} is a K-dimensional integer tensor, best thought of as a (K-1)-dimensional
 * tensor of indices into {@code params}, where each element defines a slice of {@code
 * params}: {@code output[i_0, ..., i_{K-2}] = params[indices[i_0, ..., i_{K-2}]]}. The output
 * has shape {@code indices.shape[:-1] + params.shape[indices.shape[-1]:]}. An index out of
 * bounds is an error, as on TensorFlow's CPU, unless {@link #badIndicesPolicy(String)} says
 * otherwise.
 *
 * <pre>{@code
 * Ops tf = Ops.create(EagerSession.create());
 * Constant<Integer> params = tf.constant(new int[][] {{1, 2}, {3, 4}});
 * GatherNd<Integer> diagonal = tf.gatherNd(params, tf.constant(new int[][] {{0, 0}, {1, 1}}));
 * // diagonal.asOutput().tensor() holds [1, 4]
 * }</pre>
 *
 * @param <T> the type of the elements
 */
public final class GatherNd<T> extends PrimitiveOp implements Operand<T> {
  /** Optional attributes of {@link GatherNd}. */
  public static final class Options extends IndexOptions<Options> {
    private Options() {}

    @Override
    Options self() {
      return this;
    }
  }

  private final Output<T> output;

  private GatherNd(Output<T> output) {
    super(output.op());
    this.output = output;
  }

  /**
   * Factory method to create a class wrapping a new GatherNd operation.
   *
   * @param <T> the type of the elements
   * @param <U> the type of the indices (int32 or int64, or another integer type)
   * @param scope current scope
   * @param params The tensor from which to gather values.
   * @param indices Index tensor.
   * @param options carries optional attributes values
   * @return a new instance of GatherNd
   * @throws IllegalArgumentException if the shapes, known now, cannot be gathered
   */
  public static <T, U extends Number> GatherNd<T> create(
      Scope scope, Operand<T> params, Operand<U> indices, Options... options) {
    long batchDims = IndexOptions.batchDims(options);
    String policy = IndexOptions.policy(options);
    return new GatherNd<>(NativeOps.gatherNd(scope, params, indices, batchDims, policy));
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

  /**
   * Values from {@code params} gathered from indices given by {@code indices}, with shape
   * {@code indices.shape[:-1] + params.shape[indices.shape[-1]:]}.
   */
  public Output<T> output() {
    return output;
  }

  /** Returns the symbolic handle of a tensor. */
  @Override
  public Output<T> asOutput() {
    return output;
  }
}
