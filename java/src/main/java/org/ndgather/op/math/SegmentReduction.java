package org.ndgather.op.math;

import org.ndgather.Operand;
import org.ndgather.Output;
import org.ndgather.op.PrimitiveOp;
import org.ndgather.op.Scope;

/**
 * What TensorFlow's segment reductions share ({@link SegmentSum}, {@link UnsortedSegmentMax},
 * ...): each output row reduces the rows of {@code data} whose segment id is its index, with
 * TensorFlow 2.21's results, messages and gradients. An empty segment holds the reduction's
 * identity (0 for sums and means, 1 for products, the type's lowest value for max and highest
 * for min). The sorted ops need ids in ascending order and have one row per id up to the last;
 * the unsorted ones have {@code numSegments} rows and drop negative ids. Each is a facade over
 * the generic builder ({@link Scope#opBuilder(String)}).
 *
 * @param <T> the type of the elements
 */
public abstract class SegmentReduction<T> extends PrimitiveOp implements Operand<T> {
  private final Output<T> output;

  SegmentReduction(Output<T> output) {
    super(output.op());
    this.output = output;
  }

  /** The sorted reduction {@code op} of {@code data} by {@code segmentIds}. */
  static <T> Output<T> sorted(Scope scope, String op, Operand<T> data, Operand<?> segmentIds) {
    return scope.opBuilder(op).addInput(data).addInput(segmentIds).build().output(0);
  }

  /** The unsorted reduction {@code op} into {@code numSegments} rows. */
  static <T> Output<T> unsorted(
      Scope scope, String op, Operand<T> data, Operand<?> segmentIds, Operand<?> numSegments) {
    return scope
        .opBuilder(op)
        .addInput(data)
        .addInput(segmentIds)
        .setAttr("num_segments", numSegments)
        .build()
        .output(0);
  }

  /** The reduced tensor: one row per segment, then {@code data}'s trailing dimensions. */
  public Output<T> output() {
    return output;
  }

  /** Returns the symbolic handle of a tensor. */
  @Override
  public Output<T> asOutput() {
    return output;
  }
}
