package org.ndgather.op.math;

import org.ndgather.Operand;
import org.ndgather.Output;
import org.ndgather.op.Scope;

/**
 * Computes the mean along segments of a tensor (Python's {@code tf.math.unsorted_segment_mean}, beyond TF Java). Each output row is the mean of the rows of {@code data} in its segment: the
 * registered op {@code unsorted_segment_mean}. See {@link SegmentReduction}.
 *
 * @param <T> the type of the elements; for integer data the output is FLOAT (8- and 16-bit
 *     integers) or DOUBLE, as Python's {@code /} makes it: read it with {@code
 *     tensor().expect(Float.class)} or {@code Double.class}
 */
public final class UnsortedSegmentMean<T> extends SegmentReduction<T> {
  private UnsortedSegmentMean(Output<T> output) {
    super(output);
  }

  /**
   * Factory method to create a class wrapping a new UnsortedSegmentMean operation.
   *
   * @param <T> the type of the elements
   * @param <U> the type of the segment ids (INT32 or INT64)
   * @param <V> the type of {@code numSegments}
   * @param scope current scope
   * @param data the rows to reduce
   * @param segmentIds a segment id for each element of {@code data}'s leading dimensions
   * @param numSegments the output's rows: a scalar, which a graph reads when it runs
   * @return a new instance of UnsortedSegmentMean
   * @throws IllegalArgumentException for shapes, types or ids TensorFlow refuses, with its
   *     message
   */
  public static <T, U extends Number, V extends Number> UnsortedSegmentMean<T> create(
      Scope scope, Operand<T> data, Operand<U> segmentIds, Operand<V> numSegments) {
    return new UnsortedSegmentMean<>(unsorted(scope, "unsorted_segment_mean", data, segmentIds, numSegments));
  }
}
