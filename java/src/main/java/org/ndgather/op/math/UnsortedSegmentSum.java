package org.ndgather.op.math;

import org.ndgather.Operand;
import org.ndgather.Output;
import org.ndgather.op.Scope;

/**
 * Computes the sum along segments of a tensor. Each output row is the sum of the rows of {@code data} in its segment: the
 * registered op {@code unsorted_segment_sum}. See {@link SegmentReduction}.
 *
 * @param <T> the type of the elements
 */
public final class UnsortedSegmentSum<T> extends SegmentReduction<T> {
  private UnsortedSegmentSum(Output<T> output) {
    super(output);
  }

  /**
   * Factory method to create a class wrapping a new UnsortedSegmentSum operation.
   *
   * @param <T> the type of the elements
   * @param <U> the type of the segment ids (INT32 or INT64)
   * @param <V> the type of {@code numSegments}
   * @param scope current scope
   * @param data the rows to reduce
   * @param segmentIds a segment id for each element of {@code data}'s leading dimensions
   * @param numSegments the output's rows: a scalar, which a graph reads when it runs
   * @return a new instance of UnsortedSegmentSum
   * @throws IllegalArgumentException for shapes, types or ids TensorFlow refuses, with its
   *     message
   */
  public static <T, U extends Number, V extends Number> UnsortedSegmentSum<T> create(
      Scope scope, Operand<T> data, Operand<U> segmentIds, Operand<V> numSegments) {
    return new UnsortedSegmentSum<>(unsorted(scope, "unsorted_segment_sum", data, segmentIds, numSegments));
  }
}
