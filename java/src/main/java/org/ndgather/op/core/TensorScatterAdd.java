package org.ndgather.op.core;

import org.ndgather.Operand;
import org.ndgather.op.Scope;

/**
 * TensorFlow's {@code TensorScatterAdd}: {@code tensor} with {@code updates} added at {@code indices}; repeated indices add up, rounded after each addition. Takes numbers (integers wrap). See
 * {@link TensorScatterOp}.
 *
 * <pre>{@code
 * Ops tf = Ops.create(EagerSession.create());
 * var table = tf.constant(new float[4][2]);
 * var out = tf.tensorScatterAdd(table, tf.constant(new int[][] {{1}, {3}, {1}}),
 *     tf.constant(new float[][] {{1, 2}, {3, 4}, {5, 6}}));
 * // out.asOutput().tensor() holds [[0, 0], [6, 8], [0, 0], [3, 4]]
 * }</pre>
 *
 * @param <T> the type of the elements
 */
public final class TensorScatterAdd<T> extends TensorScatterOp<T> {
  private TensorScatterAdd(org.ndgather.Output<T> output) {
    super(output);
  }

  /**
   * Factory method to create a class wrapping a new TensorScatterAdd operation.
   *
   * @param <T> the type of the elements
   * @param <U> the type of the indices (an integer type)
   * @param scope current scope
   * @param tensor the tensor to copy and update
   * @param indices index vectors into {@code tensor}
   * @param updates the slices, of {@code tensor}'s type
   * @param options carries optional attributes values
   * @return a new instance of TensorScatterAdd
   * @throws IllegalArgumentException for shapes, types or (eagerly) indices TensorFlow refuses,
   *     with its message
   */
  public static <T, U extends Number> TensorScatterAdd<T> create(
      Scope scope,
      Operand<T> tensor,
      Operand<U> indices,
      Operand<T> updates,
      TensorScatterOp.Options... options) {
    return new TensorScatterAdd<>(scatter(scope, "add", tensor, indices, updates, options));
  }
}
