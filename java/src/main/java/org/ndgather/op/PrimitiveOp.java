package org.ndgather.op;

import org.ndgather.Operation;

/** A wrapper of one op, compared and printed by the op it wraps. */
public abstract class PrimitiveOp implements Op {
  private final Operation operation;

  /**
   * Wraps {@code operation}.
   *
   * @param operation the op
   */
  protected PrimitiveOp(Operation operation) {
    this.operation = operation;
  }

  @Override
  public Operation op() {
    return operation;
  }

  @Override
  public final int hashCode() {
    return operation.name().hashCode();
  }

  @Override
  public final boolean equals(Object obj) {
    return obj instanceof PrimitiveOp p && p.operation.name().equals(operation.name())
        && p.operation.output(0).equals(operation.output(0));
  }

  @Override
  public final String toString() {
    return String.format("<%s '%s'>", operation.type(), operation.name());
  }
}
