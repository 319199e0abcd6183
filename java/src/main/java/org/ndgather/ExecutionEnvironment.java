package org.ndgather;

/**
 * Where ops are built: a {@link Graph}, or an {@link EagerSession} that runs them at once.
 *
 * <p>Sealed, and without methods of its own: the native scope behind an environment is
 * reached only inside this package, so that no program can pass off a number of its choice
 * (another object's handle) as one.
 */
public sealed interface ExecutionEnvironment permits Graph, EagerSession {}
