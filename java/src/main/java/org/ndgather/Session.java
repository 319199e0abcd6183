package org.ndgather;

import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs the ops of a {@link Graph}: {@code session.runner().feed(..).fetch(..).run()}. Safe to
 * use from several threads at once, and to close from any of them: as TF Java 1.15's, {@link
 * #close()} waits for the runs in progress, and the graph cannot close while the session is
 * open.
 */
public final class Session implements AutoCloseable {
  private final Graph graph;
  /**
   * Releases the session's hold on the graph: at {@link #close()}, or once the session is
   * unreachable (no run can be in progress then), so that a session dropped without close()
   * does not make {@link Graph#close()} wait for ever. Its action holds the graph's reference,
   * never the session.
   */
  private final Cleaner.Cleanable graphRef;
  /** Guards {@code activeRuns} and {@code closed}; close() waits on it. */
  private final Object runs = new Object();
  private int activeRuns;
  private boolean closed;

  /**
   * A session over {@code graph}.
   *
   * @param graph the graph
   * @throws IllegalStateException if the graph is closed (or closing)
   */
  public Session(Graph graph) {
    if (graph == null) {
      throw new NullPointerException("graph must not be null");
    }
    this.graph = graph;
    Graph.Reference ref = graph.ref();
    this.graphRef = Tensor.CLEANER.register(this, ref::close);
  }

  /** A new run: feeds and fetches, then {@link Runner#run()}. */
  public Runner runner() {
    return new Runner();
  }

  /**
   * Closes the session: later runs throw {@code IllegalStateException}. Waits for the runs
   * in progress on other threads to end (as TF Java 1.15's), then lets the graph close.
   */
  @Override
  public void close() {
    boolean interrupted = false;
    synchronized (runs) {
      closed = true;
      while (activeRuns > 0) {
        try {
          runs.wait();
        } catch (InterruptedException e) {
          // The graph must not be freed under a run: go on waiting (runs end), and leave
          // the interrupt for the caller to see.
          interrupted = true;
        }
      }
    }
    graphRef.clean();
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /** Counts a run in, or refuses it once the session is closed. */
  private void begin() {
    synchronized (runs) {
      if (closed) {
        throw new IllegalStateException("Session has been closed");
      }
      activeRuns++;
    }
  }

  /** Counts a run out, waking a close() that waits for it. */
  private void end() {
    synchronized (runs) {
      if (--activeRuns == 0) {
        runs.notifyAll();
      }
    }
  }

  /** The feeds and fetches of one run. */
  public final class Runner {
    private final List<Output<?>> feedOutputs = new ArrayList<>();
    private final List<Tensor<?>> feedTensors = new ArrayList<>();
    private final List<Output<?>> fetches = new ArrayList<>();
    /** Per fetch: the tensor its value is written into, or null for a new tensor. */
    private final List<Tensor<?>> targets = new ArrayList<>();

    private Runner() {}

    private Output<?> named(String operation, int index) {
      Operation op = graph.operation(operation);
      if (op == null) {
        throw new IllegalArgumentException("No Operation named [" + operation + "] in the Graph");
      }
      return op.output(index);
    }

    /** Feeds {@code t} to the op named {@code operation}. */
    public Runner feed(String operation, Tensor<?> t) {
      return feed(named(operation, 0), t);
    }

    /** Feeds {@code t} to output {@code index} of the op named {@code operation}. */
    public Runner feed(String operation, int index, Tensor<?> t) {
      return feed(named(operation, index), t);
    }

    /** Feeds {@code t} to {@code operand}. */
    public Runner feed(Operand<?> operand, Tensor<?> t) {
      if (operand == null || t == null) {
        throw new NullPointerException("feed needs an operand and a tensor");
      }
      feedOutputs.add(operand.asOutput());
      feedTensors.add(t);
      return this;
    }

    /** Fetches the output of the op named {@code operation}. */
    public Runner fetch(String operation) {
      return fetch(named(operation, 0));
    }

    /** Fetches output {@code index} of the op named {@code operation}. */
    public Runner fetch(String operation, int index) {
      return fetch(named(operation, index));
    }

    /** Fetches {@code output}. */
    public Runner fetch(Output<?> output) {
      if (output == null) {
        throw new NullPointerException("fetch needs an output");
      }
      fetches.add(output);
      targets.add(null);
      return this;
    }

    /**
     * Fetches {@code operand}'s output into {@code into}, a tensor that wraps a writable
     * direct buffer (see {@link Tensor#create(Class, long[], java.nio.ByteBuffer)}) of the
     * output's type and shape: the last op writes its result there, with no tensor of its
     * own. {@link #run()} returns {@code into} in this fetch's place. Beyond TF Java.
     *
     * <p>Each such fetch is evaluated on its own: ops shared with other fetches run again.
     * On error the buffer is unchanged.
     *
     * @param operand what to fetch
     * @param into where its value goes
     * @return this runner
     */
    public Runner fetch(Operand<?> operand, Tensor<?> into) {
      if (into == null) {
        throw new NullPointerException("fetch needs a tensor to write into");
      }
      fetch(operand.asOutput());
      targets.set(targets.size() - 1, into);
      return this;
    }

    /** Fetches {@code operand}'s output. */
    public Runner fetch(Operand<?> operand) {
      return fetch(operand.asOutput());
    }

    /**
     * Runs the graph for the fetches.
     *
     * @return one new tensor per fetch, in order; the caller closes them
     * @throws IllegalArgumentException with TensorFlow's message if an op refuses its inputs
     * @throws IllegalStateException if the session, a fed or target tensor, or an output is
     *     closed
     */
    public List<Tensor<?>> run() {
      begin();
      try {
        return runCounted();
      } finally {
        end();
        // The session stays reachable until its run is counted out: its cleaner (which lets
        // the graph close) never runs under a run.
        Reference.reachabilityFence(Session.this);
      }
    }

    private List<Tensor<?>> runCounted() {
      long[] outs = new long[feedOutputs.size()];
      long[] values = new long[feedTensors.size()];
      for (int i = 0; i < outs.length; i++) {
        outs[i] = feedOutputs.get(i).handle();
        values[i] = feedTensors.get(i).handle();
      }
      int n = 0;
      long[] wanted = new long[fetches.size()];
      for (int i = 0; i < fetches.size(); i++) {
        if (targets.get(i) == null) {
          wanted[n++] = fetches.get(i).handle();
        }
      }
      wanted = java.util.Arrays.copyOf(wanted, n);
      long scope = graph.scopeHandle();
      try {
        List<Tensor<?>> fresh = new ArrayList<>(wanted.length);
        if (wanted.length > 0) {
          Tensor.unpack(Native.sessionRun(scope, outs, values, wanted), fresh);
        }
        List<Tensor<?>> tensors = new ArrayList<>(fetches.size());
        int next = 0;
        for (int i = 0; i < fetches.size(); i++) {
          Tensor<?> into = targets.get(i);
          tensors.add(into != null ? into : fresh.get(next++));
        }
        try {
          for (int i = 0; i < fetches.size(); i++) {
            Tensor<?> into = targets.get(i);
            if (into != null) {
              Native.sessionRunInto(scope, outs, values, fetches.get(i).handle(), into.handle());
            }
          }
        } catch (RuntimeException e) {
          for (int i = 0; i < fetches.size(); i++) {
            if (targets.get(i) == null) {
              tensors.get(i).close();
            }
          }
          throw e;
        }
        return tensors;
      } finally {
        // The handles passed stay valid until the native calls return: no cleaner may free
        // them while the objects that own them look unreachable.
        Reference.reachabilityFence(feedOutputs);
        Reference.reachabilityFence(feedTensors);
        Reference.reachabilityFence(fetches);
        Reference.reachabilityFence(targets);
        Reference.reachabilityFence(graph);
      }
    }
  }
}
