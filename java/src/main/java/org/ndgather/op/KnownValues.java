package org.ndgather.op;

import org.ndgather.DataType;
import org.ndgather.Operand;
import org.ndgather.Output;
import org.ndgather.Tensor;

/**
 * The values of operands that fix an op's output shape, such as {@code numSegments} or
 * {@code ScatterNd}'s {@code shape}: TF Java takes them as operands, and the registered op as
 * attributes, so they must be known when the op is built (a constant, or any output of an eager
 * session).
 */
public final class KnownValues {
  private KnownValues() {}

  /**
   * The value of a scalar of INT32 or INT64.
   *
   * @param operand the scalar
   * @param what its name in messages
   * @return its value
   * @throws IllegalArgumentException for another type or shape, or a value not yet known
   */
  public static long scalar(Operand<?> operand, String what) {
    try (Tensor<?> value = known(operand, what, 0, "a scalar")) {
      return value.dataType() == DataType.INT32 ? value.intValue() : value.longValue();
    }
  }

  /**
   * The values of a vector of INT32 or INT64.
   *
   * @param operand the vector
   * @param what its name in messages
   * @return its values
   * @throws IllegalArgumentException for another type or shape, or values not yet known
   */
  public static long[] vector(Operand<?> operand, String what) {
    try (Tensor<?> value = known(operand, what, 1, "a vector")) {
      int n = (int) value.shape()[0];
      if (value.dataType() == DataType.INT64) {
        return value.copyTo(new long[n]);
      }
      int[] ints = value.copyTo(new int[n]);
      long[] longs = new long[n];
      for (int k = 0; k < n; k++) {
        longs[k] = ints[k];
      }
      return longs;
    }
  }

  private static Tensor<?> known(Operand<?> operand, String what, int rank, String kind) {
    Output<?> o = operand.asOutput();
    if (o.shape().numDimensions() != rank
        || (o.dataType() != DataType.INT32 && o.dataType() != DataType.INT64)) {
      throw new IllegalArgumentException(
          what + " must be " + kind + " of INT32 or INT64, got " + o.dataType() + " of shape "
              + o.shape());
    }
    try {
      return o.tensor();
    } catch (IllegalStateException e) {
      if (e.getMessage() == null || !e.getMessage().contains("has no value")) {
        throw e; // a closed output, not an unknown value
      }
      throw new IllegalArgumentException(
          what + " must be known when the op is built: give a constant", e);
    }
  }
}
