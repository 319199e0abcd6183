package org.ndgather;

import java.util.Arrays;

/** The possibly partially known shape of a tensor produced by an operation (TF Java's). */
public final class Shape {
  private final long[] dims;

  private Shape(long[] dims) {
    this.dims = dims;
  }

  /** A shape of unknown rank. */
  public static Shape unknown() {
    return new Shape(null);
  }

  /** The shape of a scalar. */
  public static Shape scalar() {
    return new Shape(new long[0]);
  }

  /**
   * A shape of the given sizes; -1 stands for an unknown size.
   *
   * @param firstDimensionSize the first size
   * @param otherDimensionSizes the others
   * @return the shape
   */
  public static Shape make(long firstDimensionSize, long... otherDimensionSizes) {
    long[] d = new long[otherDimensionSizes.length + 1];
    d[0] = firstDimensionSize;
    System.arraycopy(otherDimensionSizes, 0, d, 1, otherDimensionSizes.length);
    return new Shape(d);
  }

  static Shape of(long[] dims) {
    return new Shape(dims == null ? null : dims.clone());
  }

  long[] dims() {
    return dims == null ? null : dims.clone();
  }

  /** The number of dimensions, or -1 if unknown. */
  public int numDimensions() {
    return dims == null ? -1 : dims.length;
  }

  /** The size of dimension {@code i}, or -1 if unknown. */
  public long size(int i) {
    return dims[i];
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(dims);
  }

  @Override
  public boolean equals(Object obj) {
    return obj instanceof Shape s && Arrays.equals(dims, s.dims) && dims != null;
  }

  /** {@code [2, ?]}, or {@code <unknown>}. */
  @Override
  public String toString() {
    if (dims == null) {
      return "<unknown>";
    }
    return Arrays.toString(dims).replace("-1", "?");
  }
}
