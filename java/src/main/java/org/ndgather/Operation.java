package org.ndgather;

/** A node of a graph or an op run eagerly, with its one output (TF Java's {@code Operation}). */
public final class Operation {
  private final Output<?> output;
  private final String name;
  private final String type;

  Operation(Output<?> output, String name, String type) {
    this.output = output;
    this.name = name;
    this.type = type;
  }

  /** The full name of the operation. */
  public String name() {
    return name;
  }

  /** The type of the operation ({@code GatherNd}, {@code Const}, ...). */
  public String type() {
    return type;
  }

  /** The number of outputs (1). */
  public int numOutputs() {
    return 1;
  }

  /**
   * The output at {@code idx}.
   *
   * @param <T> the type of the elements
   * @param idx the index (0)
   * @return the output
   */
  @SuppressWarnings("unchecked")
  public <T> Output<T> output(int idx) {
    if (idx != 0) {
      throw new IndexOutOfBoundsException("Operation '" + name + "' has 1 output, not " + (idx + 1));
    }
    return (Output<T>) output;
  }

  @Override
  public String toString() {
    return String.format("<%s '%s'>", type, name);
  }
}
