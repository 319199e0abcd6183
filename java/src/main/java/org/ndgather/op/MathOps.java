package org.ndgather.op;

import org.ndgather.Operand;
import org.ndgather.op.math.SegmentMax;
import org.ndgather.op.math.SegmentMean;
import org.ndgather.op.math.SegmentMin;
import org.ndgather.op.math.SegmentProd;
import org.ndgather.op.math.SegmentSum;
import org.ndgather.op.math.UnsortedSegmentMax;
import org.ndgather.op.math.UnsortedSegmentMean;
import org.ndgather.op.math.UnsortedSegmentMin;
import org.ndgather.op.math.UnsortedSegmentProd;
import org.ndgather.op.math.UnsortedSegmentSqrtN;
import org.ndgather.op.math.UnsortedSegmentSum;

/**
 * The {@code tf.math} ops of ndgather (TF Java's {@code MathOps}, reached as {@code
 * tf.math}): TensorFlow's segment reductions.
 *
 * <pre>{@code
 * Ops tf = Ops.create(EagerSession.create());
 * var max = tf.math.unsortedSegmentMax(tf.constant(new float[] {1, 5, 2}),
 *     tf.constant(new int[] {1, 1, 0}), tf.constant(3));
 * // max.asOutput().tensor() holds [2, 5, -3.4028235e38]
 * }</pre>
 */
public final class MathOps {
  private final Scope scope;

  MathOps(Scope scope) {
    this.scope = scope;
  }

  /** {@code SegmentSum}: see {@link SegmentSum#create}. */
  public <T, U extends Number> SegmentSum<T> segmentSum(Operand<T> data, Operand<U> segmentIds) {
    return SegmentSum.create(scope, data, segmentIds);
  }

  /** {@code SegmentMean}: see {@link SegmentMean#create}. */
  public <T, U extends Number> SegmentMean<T> segmentMean(Operand<T> data, Operand<U> segmentIds) {
    return SegmentMean.create(scope, data, segmentIds);
  }

  /** {@code SegmentMax}: see {@link SegmentMax#create}. */
  public <T, U extends Number> SegmentMax<T> segmentMax(Operand<T> data, Operand<U> segmentIds) {
    return SegmentMax.create(scope, data, segmentIds);
  }

  /** {@code SegmentMin}: see {@link SegmentMin#create}. */
  public <T, U extends Number> SegmentMin<T> segmentMin(Operand<T> data, Operand<U> segmentIds) {
    return SegmentMin.create(scope, data, segmentIds);
  }

  /** {@code SegmentProd}: see {@link SegmentProd#create}. */
  public <T, U extends Number> SegmentProd<T> segmentProd(Operand<T> data, Operand<U> segmentIds) {
    return SegmentProd.create(scope, data, segmentIds);
  }

  /** {@code UnsortedSegmentSum}: see {@link UnsortedSegmentSum#create}. */
  public <T, U extends Number, V extends Number> UnsortedSegmentSum<T> unsortedSegmentSum(
      Operand<T> data, Operand<U> segmentIds, Operand<V> numSegments) {
    return UnsortedSegmentSum.create(scope, data, segmentIds, numSegments);
  }

  /** {@code UnsortedSegmentMean}: see {@link UnsortedSegmentMean#create}. */
  public <T, U extends Number, V extends Number> UnsortedSegmentMean<T> unsortedSegmentMean(
      Operand<T> data, Operand<U> segmentIds, Operand<V> numSegments) {
    return UnsortedSegmentMean.create(scope, data, segmentIds, numSegments);
  }

  /** {@code UnsortedSegmentSqrtN}: see {@link UnsortedSegmentSqrtN#create}. */
  public <T, U extends Number, V extends Number> UnsortedSegmentSqrtN<T> unsortedSegmentSqrtN(
      Operand<T> data, Operand<U> segmentIds, Operand<V> numSegments) {
    return UnsortedSegmentSqrtN.create(scope, data, segmentIds, numSegments);
  }

  /** {@code UnsortedSegmentMax}: see {@link UnsortedSegmentMax#create}. */
  public <T, U extends Number, V extends Number> UnsortedSegmentMax<T> unsortedSegmentMax(
      Operand<T> data, Operand<U> segmentIds, Operand<V> numSegments) {
    return UnsortedSegmentMax.create(scope, data, segmentIds, numSegments);
  }

  /** {@code UnsortedSegmentMin}: see {@link UnsortedSegmentMin#create}. */
  public <T, U extends Number, V extends Number> UnsortedSegmentMin<T> unsortedSegmentMin(
      Operand<T> data, Operand<U> segmentIds, Operand<V> numSegments) {
    return UnsortedSegmentMin.create(scope, data, segmentIds, numSegments);
  }

  /** {@code UnsortedSegmentProd}: see {@link UnsortedSegmentProd#create}. */
  public <T, U extends Number, V extends Number> UnsortedSegmentProd<T> unsortedSegmentProd(
      Operand<T> data, Operand<U> segmentIds, Operand<V> numSegments) {
    return UnsortedSegmentProd.create(scope, data, segmentIds, numSegments);
  }
}
