package org.ndgather;

/** Where ops are built: a {@link Graph}, or an {@link EagerSession} that runs them at once. */
public interface ExecutionEnvironment {
  /** The native scope of this environment's root. */
  long scopeHandle();

  /** Records an op's output under its name (a graph looks ops up by name). */
  default void register(Output<?> output) {}
}
