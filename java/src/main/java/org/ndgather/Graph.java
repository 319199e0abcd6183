package org.ndgather;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A data flow graph: ops are recorded with their static shapes (checked as they are built,
 * with TensorFlow's messages) and computed by a {@link Session}.
 */
public final class Graph implements ExecutionEnvironment, AutoCloseable {
  private final Tensor.Handle scope;
  private final Map<String, Output<?>> ops = new LinkedHashMap<>();

  /** An empty graph. */
  public Graph() {
    this.scope = new Tensor.Handle(Native.scopeNew(false), Native::scopeFree);
  }

  @Override
  public long scopeHandle() {
    return scope.get("Graph");
  }

  @Override
  public synchronized void register(Output<?> output) {
    ops.put(output.op().name(), output);
  }

  /**
   * The operation named {@code name}, or null.
   *
   * @param name the op's full name
   * @return the op, or null if the graph has none of that name
   */
  public synchronized Operation operation(String name) {
    scopeHandle();
    Output<?> o = ops.get(name);
    return o == null ? null : o.op();
  }

  /** Frees the graph and its ops' handles. */
  @Override
  public void close() {
    List<Output<?>> outputs;
    synchronized (this) {
      outputs = new ArrayList<>(ops.values());
      ops.clear();
    }
    outputs.forEach(Output::free);
    scope.run();
  }
}
