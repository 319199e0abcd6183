package org.ndgather.op;

import org.ndgather.ExecutionEnvironment;
import org.ndgather.NativeOps;

/**
 * Where ops are created, and under which names (TF Java's {@code Scope}): {@link
 * #withName(String)} names the next op, {@link #withSubScope(String)} prefixes the ops below.
 */
public final class Scope {
  private final ExecutionEnvironment env;
  private final NativeOps.NativeScope nativeScope;

  /**
   * The root scope of {@code env}.
   *
   * @param env a graph or an eager session
   */
  public Scope(ExecutionEnvironment env) {
    this(env, NativeOps.rootScope(env));
  }

  private Scope(ExecutionEnvironment env, NativeOps.NativeScope nativeScope) {
    this.env = env;
    this.nativeScope = nativeScope;
  }

  /** The environment. */
  public ExecutionEnvironment env() {
    return env;
  }

  /** A scope whose ops are named {@code childScopeName/...}. */
  public Scope withSubScope(String childScopeName) {
    return new Scope(env, NativeOps.deriveScope(nativeScope, childScopeName, true));
  }

  /** A scope whose next op is named {@code opName}. */
  public Scope withName(String opName) {
    return new Scope(env, NativeOps.deriveScope(nativeScope, opName, false));
  }

  /**
   * A builder of any op of ndgather's registry by name, in this scope: the generic door that
   * the typed op classes of the newer families are facades over (TF Java's {@code
   * env.opBuilder(type, name)}).
   *
   * @param type the op's registered name, as {@code "unsorted_segment_max"}
   * @return the builder
   */
  public OperationBuilder opBuilder(String type) {
    return new OperationBuilder(this, type);
  }

  /**
   * The native scope, for ndgather's ops: an opaque object (beyond TF Java), whose handle
   * only the {@code org.ndgather} package reads.
   *
   * @return the native scope
   */
  public NativeOps.NativeScope nativeScope() {
    return nativeScope;
  }
}
