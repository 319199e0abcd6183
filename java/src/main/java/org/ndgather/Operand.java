package org.ndgather;

/**
 * Interface implemented by operands of an operation: an {@link Output}, or an op with one.
 *
 * @param <T> the type of the elements
 */
public interface Operand<T> {
  /** The symbolic handle of the tensor. */
  Output<T> asOutput();
}
