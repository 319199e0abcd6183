package org.ndgather.op;

import java.lang.ref.Reference;
import org.ndgather.ExecutionEnvironment;
import org.ndgather.NativeOps;

/**
 * Where ops are created, and under which names (TF Java's {@code Scope}): {@link
 * #withName(String)} names the next op, {@link #withSubScope(String)} prefixes the ops below.
 */
public final class Scope {
  private final ExecutionEnvironment env;
  private final long handle;

  /**
   * The root scope of {@code env}.
   *
   * @param env a graph or an eager session
   */
  public Scope(ExecutionEnvironment env) {
    this(env, env.scopeHandle());
  }

  private Scope(ExecutionEnvironment env, long handle) {
    this.env = env;
    this.handle = handle;
  }

  /** The environment. */
  public ExecutionEnvironment env() {
    return env;
  }

  /** A scope whose ops are named {@code childScopeName/...}. */
  public Scope withSubScope(String childScopeName) {
    return derived(childScopeName, true);
  }

  /** A scope whose next op is named {@code opName}. */
  public Scope withName(String opName) {
    return derived(opName, false);
  }

  private Scope derived(String name, boolean sub) {
    try {
      long h = NativeOps.deriveScope(handle, name, sub);
      Scope s = new Scope(env, h);
      NativeOps.freeWhenUnreachable(s, h);
      return s;
    } finally {
      // This scope's cleaner must not close its handle under the native call.
      Reference.reachabilityFence(this);
    }
  }

  /** The native scope (for ndgather's ops). */
  public long handle() {
    env.scopeHandle();
    return handle;
  }
}
