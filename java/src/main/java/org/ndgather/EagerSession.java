package org.ndgather;

/**
 * An environment in which each op runs as it is created (TF Java 1.15's eager mode).
 *
 * <pre>{@code
 * try (EagerSession session = EagerSession.options().async(false).build()) {
 *   Ops tf = Ops.create(session);
 *   // tf.gatherNd(..).asOutput().tensor() holds the result at once
 * }
 * }</pre>
 */
public final class EagerSession implements ExecutionEnvironment, AutoCloseable {
  private static EagerSession defaultSession;
  private final Tensor.Handle scope;
  private final boolean isDefault;

  /**
   * How a session places ops on devices (TF Java 1.15's enum). ndgather has one device, the
   * CPU, so every policy places every op there.
   */
  public enum DevicePlacementPolicy {
    /** Fails on an input on another device (there is none). */
    EXPLICIT,
    /** Copies inputs across devices, with a warning (never needed). */
    WARN,
    /** Copies inputs across devices silently (never needed). */
    SILENT,
    /** Silently places int32 tensors (as all others: on the CPU). */
    SILENT_FOR_INT32
  }

  /**
   * When the resources of unreachable tensors are freed (TF Java 1.15's enum). ndgather frees
   * a tensor's native memory on {@code close()}, or with a {@code Cleaner} once it is
   * unreachable, whichever strategy is asked for.
   */
  public enum ResourceCleanupStrategy {
    /** Freed by a background thread (ndgather's {@code Cleaner}). */
    IN_BACKGROUND,
    /** Freed when the session is next used (ndgather: as {@link #IN_BACKGROUND}). */
    ON_SAFE_POINTS,
    /** Freed when the session closes (ndgather: as {@link #IN_BACKGROUND}). */
    ON_SESSION_CLOSE
  }

  /** The options of a new session: {@code EagerSession.options().async(true).build()}. */
  public static final class Options {
    private byte[] config;

    private Options() {}

    /**
     * Whether ops run asynchronously. ndgather runs each op synchronously when it is created,
     * so an error is thrown by the call that built the op either way.
     *
     * @param value true for asynchronous execution
     * @return these options
     */
    public Options async(boolean value) {
      return this;
    }

    /**
     * @param value the device placement policy (one device: see {@link DevicePlacementPolicy})
     * @return these options
     */
    public Options devicePlacementPolicy(DevicePlacementPolicy value) {
      return this;
    }

    /**
     * @param value the cleanup strategy (see {@link ResourceCleanupStrategy})
     * @return these options
     */
    public Options resourceCleanupStrategy(ResourceCleanupStrategy value) {
      return this;
    }

    /**
     * A serialized {@code ConfigProto}. ndgather reads none (its threads are rayon's): only an
     * empty one is accepted, and {@link #build()} refuses any other.
     *
     * @param value the serialized proto
     * @return these options
     */
    public Options config(byte[] value) {
      this.config = value;
      return this;
    }

    /**
     * Builds the session.
     *
     * @return a new eager session
     * @throws IllegalArgumentException for a non-empty {@code config}
     */
    public EagerSession build() {
      check();
      return new EagerSession(false);
    }

    private void check() {
      if (config != null && config.length > 0) {
        throw new IllegalArgumentException(
            "ndgather reads no ConfigProto (its ops run on the CPU, on rayon's threads): "
                + "leave config unset");
      }
    }
  }

  private EagerSession(boolean isDefault) {
    this.scope = new Tensor.Handle(Native.scopeNew(true), Native::scopeFree);
    this.isDefault = isDefault;
  }

  /** A new eager session with default options. */
  public static EagerSession create() {
    return options().build();
  }

  /** Options for a new session. */
  public static Options options() {
    return new Options();
  }

  /**
   * Initializes the process's default eager session with {@code options}.
   *
   * @param options its options
   * @return the default session
   * @throws IllegalStateException if the default session already exists
   */
  public static synchronized EagerSession initDefault(Options options) {
    if (defaultSession != null) {
      throw new IllegalStateException("Default eager session is already initialized");
    }
    options.check();
    defaultSession = new EagerSession(true);
    return defaultSession;
  }

  /** The process's default eager session ({@code Ops.create()} builds in it). */
  public static synchronized EagerSession getDefault() {
    if (defaultSession == null) {
      defaultSession = new EagerSession(true);
    }
    return defaultSession;
  }

  /** The native scope of the session's root (never given to programs). */
  long scopeHandle() {
    return scope.get("EagerSession");
  }

  /**
   * Frees the session; its ops' outputs stay readable until they are collected.
   *
   * @throws IllegalStateException for the default session, which lives as long as the process
   */
  @Override
  public void close() {
    if (isDefault) {
      throw new IllegalStateException("Default eager session cannot be closed");
    }
    scope.run();
  }
}
