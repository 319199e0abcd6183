package org.ndgather.op.math;

import org.ndgather.Operand;
import org.ndgather.Output;
import org.ndgather.op.Scope;

/**
 * Computes the product along sorted segments of a tensor. Each output row is the product of the rows of {@code data} in its segment: the
 * registered op {@code segment_prod}. See {@link SegmentReduction}.
 *
 * @param <T> the type of the elements
 */
public final class SegmentProd<T> extends SegmentReduction<T> {
  private SegmentProd(Output<T> output) {
    super(output);
  }

  /**
   * Factory method to create a class wrapping a new SegmentProd operation.
   *
   * @param <T> the type of the elements
   * @param <U> the type of the segment ids (INT32 or INT64)
   * @param scope current scope
   * @param data the rows to reduce
   * @param segmentIds a segment id per row of {@code data}, in ascending order
   * @return a new instance of SegmentProd
   * @throws IllegalArgumentException for shapes, types or ids TensorFlow refuses, with its
   *     message
   */
  public static <T, U extends Number> SegmentProd<T> create(
      Scope scope, Operand<T> data, Operand<U> segmentIds) {
    return new SegmentProd<>(sorted(scope, "segment_prod", data, segmentIds));
  }
}
