package org.ndgather.op.core;

import org.ndgather.Operand;
import org.ndgather.Output;
import org.ndgather.op.PrimitiveOp;
import org.ndgather.op.Scope;

/**
 * TensorFlow's {@code ScatterNd}: a new tensor of {@code shape}, zeros but where {@code
 * updates} are added at {@code indices} (repeated indices add up). The registered op {@code
 * scatter_nd}, reached through the generic builder ({@link Scope#opBuilder(String)}).
 *
 * <pre>{@code
 * Ops tf = Ops.create(EagerSession.create());
 * var out = tf.scatterNd(tf.constant(new int[][] {{4}, {3}, {1}, {7}}),
 *     tf.constant(new float[] {9, 10, 11, 12}), tf.constant(new int[] {8}));
 * // out.asOutput().tensor() holds [0, 11, 0, 10, 9, 0, 0, 12]
 * }</pre>
 *
 * @param <T> the type of the elements
 */
public final class ScatterNd<T> extends PrimitiveOp implements Operand<T> {
  private final Output<T> output;

  private ScatterNd(Output<T> output) {
    super(output.op());
    this.output = output;
  }

  /**
   * Factory method to create a class wrapping a new ScatterNd operation.
   *
   * @param <U> the type of the indices and of {@code shape} (INT32 or INT64)
   * @param <T> the type of the elements
   * @param scope current scope
   * @param indices index vectors into the output
   * @param updates the slices to add, one per index vector
   * @param shape the output's shape: a vector, which a graph reads when it runs
   * @param options carries optional attributes values: the bad-index policy, as the tensor
   *     scatters take it ({@link TensorScatterOp#badIndicesPolicy(String)})
   * @return a new instance of ScatterNd
   * @throws IllegalArgumentException for shapes, types or (eagerly) indices TensorFlow refuses,
   *     with its message
   */
  public static <U extends Number, T> ScatterNd<T> create(
      Scope scope,
      Operand<U> indices,
      Operand<T> updates,
      Operand<U> shape,
      TensorScatterOp.Options... options) {
    var builder =
        scope
            .opBuilder("scatter_nd")
            .addInput(indices)
            .addInput(updates)
            .setAttr("shape", shape);
    String policy = PolicyOptions.policy(options);
    if (!policy.isEmpty() && !policy.equalsIgnoreCase("DEFAULT")) {
      // The op names its policies in lower case; TF Java's options spell them in upper case.
      builder.setAttr("bad_indices", policy.toLowerCase(java.util.Locale.ROOT));
    }
    return new ScatterNd<>(builder.build().output(0));
  }

  /** A new tensor of {@code shape}, with the updates added. */
  public Output<T> output() {
    return output;
  }

  /** Returns the symbolic handle of a tensor. */
  @Override
  public Output<T> asOutput() {
    return output;
  }
}
