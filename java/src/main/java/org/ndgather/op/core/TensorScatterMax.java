package org.ndgather.op.core;

import org.ndgather.Operand;
import org.ndgather.op.Scope;

/**
 * TensorFlow's {@code TensorScatterMax}: {@code tensor} with each element at {@code indices} the larger of it and its updates (a NaN already there stays). Takes integers and real floats. See
 * {@link TensorScatterOp}.
 *
 * <pre>{@code
 * Ops tf = Ops.create(EagerSession.create());
 * var table = tf.constant(new float[4][2]);
 * var out = tf.tensorScatterMax(table, tf.constant(new int[][] {{1}, {3}, {1}}),
 *     tf.constant(new float[][] {{1, 2}, {3, 4}, {5, 6}}));
 * // out.asOutput().tensor() holds [[0, 0], [5, 6], [0, 0], [3, 4]]
 * }</pre>
 *
 * @param <T> the type of the elements
 */
public final class TensorScatterMax<T> extends TensorScatterOp<T> {
  private TensorScatterMax(org.ndgather.Output<T> output) {
    super(output);
  }

  /**
   * Factory method to create a class wrapping a new TensorScatterMax operation.
   *
   * @param <T> the type of the elements
   * @param <U> the type of the indices (an integer type)
   * @param scope current scope
   * @param tensor the tensor to copy and update
   * @param indices index vectors into {@code tensor}
   * @param updates the slices, of {@code tensor}'s type
   * @param options carries optional attributes values
   * @return a new instance of TensorScatterMax
   * @throws IllegalArgumentException for shapes, types or (eagerly) indices TensorFlow refuses,
   *     with its message
   */
  public static <T, U extends Number> TensorScatterMax<T> create(
      Scope scope,
      Operand<T> tensor,
      Operand<U> indices,
      Operand<T> updates,
      TensorScatterOp.Options... options) {
    return new TensorScatterMax<>(scatter(scope, "max", tensor, indices, updates, options));
  }
}
