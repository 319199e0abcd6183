package org.ndgather.op;

import org.ndgather.Operation;

/** An op wrapper: a class with a {@code create} method that builds one op. */
public interface Op {
  /** The operation this wrapper built. */
  Operation op();
}
