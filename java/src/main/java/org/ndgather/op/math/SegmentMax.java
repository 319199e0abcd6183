package org.ndgather.op.math;

import org.ndgather.Operand;
import org.ndgather.Output;
import org.ndgather.op.Scope;

/**
 * Computes the maximum along sorted segments of a tensor. Each output row is the maximum of the rows of {@code data} in its segment: the
 * registered op {@code segment_max}. See {@link SegmentReduction}.
 *
 * @param <T> the type of the elements
 */
public final class SegmentMax<T> extends SegmentReduction<T> {
  private SegmentMax(Output<T> output) {
    super(output);
  }

  /**
   * Factory method to create a class wrapping a new SegmentMax operation.
   *
   * @param <T> the type of the elements
   * @param <U> the type of the segment ids (INT32 or INT64)
   * @param scope current scope
   * @param data the rows to reduce
   * @param segmentIds a segment id per row of {@code data}, in ascending order
   * @return a new instance of SegmentMax
   * @throws IllegalArgumentException for shapes, types or ids TensorFlow refuses, with its
   *     message
   */
  public static <T, U extends Number> SegmentMax<T> create(
      Scope scope, Operand<T> data, Operand<U> segmentIds) {
    return new SegmentMax<>(sorted(scope, "segment_max", data, segmentIds));
  }
}
