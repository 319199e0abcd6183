package org.ndgather.op.core;

import org.ndgather.Operand;
import org.ndgather.op.Scope;

/**
 * TensorFlow's {@code TensorScatterUpdate}: {@code tensor} with the slices at {@code indices} replaced by {@code updates}; a repeated index keeps its last update (TensorFlow promises no order; its CPU kernel writes in index order). Takes every element type. See
 * {@link TensorScatterOp}.
 *
 * <pre>{@code
 * Ops tf = Ops.create(EagerSession.create());
 * var table = tf.constant(new float[4][2]);
 * var out = tf.tensorScatterUpdate(table, tf.constant(new int[][] {{1}, {3}, {1}}),
 *     tf.constant(new float[][] {{1, 2}, {3, 4}, {5, 6}}));
 * // out.asOutput().tensor() holds [[0, 0], [5, 6], [0, 0], [3, 4]]
 * }</pre>
 *
 * @param <T> the type of the elements
 */
public final class TensorScatterUpdate<T> extends TensorScatterOp<T> {
  private TensorScatterUpdate(org.ndgather.Output<T> output) {
    super(output);
  }

  /**
   * Factory method to create a class wrapping a new TensorScatterUpdate operation.
   *
   * @param <T> the type of the elements
   * @param <U> the type of the indices (an integer type)
   * @param scope current scope
   * @param tensor the tensor to copy and update
   * @param indices index vectors into {@code tensor}
   * @param updates the slices, of {@code tensor}'s type
   * @param options carries optional attributes values
   * @return a new instance of TensorScatterUpdate
   * @throws IllegalArgumentException for shapes, types or (eagerly) indices TensorFlow refuses,
   *     with its message
   */
  public static <T, U extends Number> TensorScatterUpdate<T> create(
      Scope scope,
      Operand<T> tensor,
      Operand<U> indices,
      Operand<T> updates,
      TensorScatterOp.Options... options) {
    return new TensorScatterUpdate<>(scatter(scope, "update", tensor, indices, updates, options));
  }
}
