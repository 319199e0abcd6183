package org.ndgather;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A data flow graph: ops are recorded with their static shapes (checked as they are built,
 * with TensorFlow's messages) and computed by a {@link Session}.
 *
 * <p>As TF Java 1.15's: safe to use from several threads, and {@link #close()} waits until no
 * {@link Session} refers to the graph any more (a session dropped without {@code close()}
 * stops referring to it once it is collected).
 */
public final class Graph implements ExecutionEnvironment, AutoCloseable {
  private final Tensor.Handle scope;
  private final Map<String, Output<?>> ops = new LinkedHashMap<>();
  /** Sessions open on the graph (guarded by {@code this}). */
  private int references;
  /** Whether {@link #close()} has begun (guarded by {@code this}). */
  private boolean closing;

  /** An empty graph. */
  public Graph() {
    this.scope = new Tensor.Handle(Native.scopeNew(false), Native::scopeFree);
  }

  /** The native scope of the graph's root (never given to programs). */
  long scopeHandle() {
    return scope.get("Graph");
  }

  /** Records an op's output under its name, or frees it and refuses it once closing. */
  void register(Output<?> output) {
    synchronized (this) {
      if (!closing) {
        ops.put(output.op().name(), output);
        return;
      }
    }
    // An op built while the graph closed: it would outlive the graph's close.
    output.free();
    throw new IllegalStateException("close() has been called on the Graph");
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

  /**
   * A session's hold on the graph (TF Java's {@code Graph.Reference}): {@link Graph#close()}
   * waits until every one is closed.
   */
  final class Reference implements AutoCloseable {
    private boolean active = true;

    private Reference() {}

    /** Lets the graph close (once; again: nothing). */
    @Override
    public void close() {
      synchronized (Graph.this) {
        if (active) {
          active = false;
          if (--references == 0) {
            Graph.this.notifyAll();
          }
        }
      }
    }
  }

  /**
   * A hold on the graph, for a session.
   *
   * @throws IllegalStateException once {@link #close()} has been called
   */
  synchronized Reference ref() {
    if (closing) {
      throw new IllegalStateException("close() has been called on the Graph");
    }
    references++;
    return new Reference();
  }

  /**
   * Frees the graph and its ops' handles, once every {@link Session} on it is closed: as TF
   * Java 1.15's, this waits for them (close each session first, or from another thread). New
   * sessions and ops are refused from the moment it is called.
   */
  @Override
  public void close() {
    List<Output<?>> outputs;
    boolean interrupted = false;
    synchronized (this) {
      closing = true;
      while (references > 0) {
        try {
          wait();
        } catch (InterruptedException e) {
          // Freeing the graph under a session's run is what this wait prevents: go on
          // waiting, and leave the interrupt for the caller to see.
          interrupted = true;
        }
      }
      outputs = new ArrayList<>(ops.values());
      ops.clear();
    }
    outputs.forEach(Output::free);
    scope.run();
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }
}
