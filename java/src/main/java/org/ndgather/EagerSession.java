package org.ndgather;

/** An environment in which each op runs as it is created (TF Java 1.15's eager mode). */
public final class EagerSession implements ExecutionEnvironment, AutoCloseable {
  private static EagerSession defaultSession;
  private final Tensor.Handle scope;

  private EagerSession() {
    this.scope = new Tensor.Handle(Native.scopeNew(true), Native::scopeFree);
  }

  /** A new eager session. */
  public static EagerSession create() {
    return new EagerSession();
  }

  /** The process's default eager session ({@code Ops.create()} builds in it). */
  public static synchronized EagerSession getDefault() {
    if (defaultSession == null) {
      defaultSession = new EagerSession();
    }
    return defaultSession;
  }

  @Override
  public long scopeHandle() {
    return scope.get("EagerSession");
  }

  /** Frees the session; its ops' outputs stay readable until they are collected. */
  @Override
  public void close() {
    scope.run();
  }
}
