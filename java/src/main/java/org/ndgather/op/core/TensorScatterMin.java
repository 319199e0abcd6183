package org.ndgather.op.core;

import org.ndgather.Operand;
import org.ndgather.op.Scope;

/**
 * TensorFlow's {@code TensorScatterMin}: {@code tensor} with each element at {@code indices} the smaller of it and its updates (a NaN already there stays). Takes integers and real floats. See
 * {@link TensorScatterOp}.
 *
 * <pre>{@code
 * Ops tf = Ops.create(EagerSession.create());
 * var table = tf.constant(new float[4][2]);
 * var out = tf.tensorScatterMin(table, tf.constant(new int[][] {{1}, {3}, {1}}),
 *     tf.constant(new float[][] {{1, 2}, {3, 4}, {5, 6}}));
 * // out.asOutput().tensor() holds [[0, 0], [0, 0], [0, 0], [0, 0]]
 * }</pre>
 *
 * @param <T> the type of the elements
 */
public final class TensorScatterMin<T> extends TensorScatterOp<T> {
  private TensorScatterMin(org.ndgather.Output<T> output) {
    super(output);
  }

  /**
   * Factory method to create a class wrapping a new TensorScatterMin operation.
   *
   * @param <T> the type of the elements
   * @param <U> the type of the indices (an integer type)
   * @param scope current scope
   * @param tensor the tensor to copy and update
   * @param indices index vectors into {@code tensor}
   * @param updates the slices, of {@code tensor}'s type
   * @param options carries optional attributes values
   * @return a new instance of TensorScatterMin
   * @throws IllegalArgumentException for shapes, types or (eagerly) indices TensorFlow refuses,
   *     with its message
   */
  public static <T, U extends Number> TensorScatterMin<T> create(
      Scope scope,
      Operand<T> tensor,
      Operand<U> indices,
      Operand<T> updates,
      TensorScatterOp.Options... options) {
    return new TensorScatterMin<>(scatter(scope, "min", tensor, indices, updates, options));
  }
}
