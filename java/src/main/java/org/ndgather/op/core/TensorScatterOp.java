package org.ndgather.op.core;

import org.ndgather.NativeOps;
import org.ndgather.Operand;
import org.ndgather.Output;
import org.ndgather.op.PrimitiveOp;
import org.ndgather.op.Scope;

/**
 * What TensorFlow's {@code tensor_scatter_nd} ops share ({@link TensorScatterUpdate}, {@link
 * TensorScatterAdd}, {@link TensorScatterSub}, {@link TensorScatterMin}, {@link
 * TensorScatterMax}): a copy of {@code tensor} with {@code updates} applied at {@code indices},
 * one update at a time in the order of {@code indices}, as TensorFlow's CPU kernel applies
 * them, so repeated indices give TensorFlow's result bit for bit. {@code updates} has shape
 * {@code indices.shape[:-1] + tensor.shape[indices.shape[-1]:]}; the output has {@code
 * tensor}'s shape. Gradients flow through {@code tensor} and {@code updates} ({@link
 * Gradients}), as TensorFlow's registered gradients.
 *
 * @param <T> the type of the elements
 */
public abstract class TensorScatterOp<T> extends PrimitiveOp implements Operand<T> {
  /**
   * Optional attributes of the {@code tensor_scatter_nd} ops: the bad-index policy. "IGNORE"
   * and "FILL" drop a bad index vector's update (TensorFlow's "IGNORE"); "CLAMP", "NEGATIVE"
   * and "WRAP" map it into range.
   */
  public static final class Options extends PolicyOptions<Options> {
    private Options() {}

    @Override
    Options self() {
      return this;
    }
  }

  /**
   * @param badIndicesPolicy see {@link Options#badIndicesPolicy(String)}
   * @return options with it
   */
  public static Options badIndicesPolicy(String badIndicesPolicy) {
    return new Options().badIndicesPolicy(badIndicesPolicy);
  }

  private final Output<T> output;

  TensorScatterOp(Output<T> output) {
    super(output.op());
    this.output = output;
  }

  /** The op of {@code kind} ("update", "add", ...) in {@code scope}. */
  static <T> Output<T> scatter(
      Scope scope,
      String kind,
      Operand<T> tensor,
      Operand<?> indices,
      Operand<T> updates,
      Options[] options) {
    String policy = PolicyOptions.policy(options);
    return NativeOps.tensorScatter(scope, kind, tensor, indices, updates, policy);
  }

  /** A new tensor of {@code tensor}'s shape, with the updates applied. */
  public Output<T> output() {
    return output;
  }

  /** Returns the symbolic handle of a tensor. */
  @Override
  public Output<T> asOutput() {
    return output;
  }
}
