package org.ndgather;

import java.lang.ref.Reference;
import java.util.List;

/**
 * How the op classes of {@code org.ndgather.op} reach the core: each method converts its
 * arguments and calls the generic builder ({@link #build}, the registry's op by name, as TF
 * Java's classes call {@code GraphOperationBuilder}), or one of the few natives left (scopes,
 * constants, placeholders and gradients, the graph's own nodes). The
 * core checks shapes and names errors. Not for programs, which use {@link
 * org.ndgather.op.Ops} or the ops' {@code create} methods.
 */
public final class NativeOps {
  private NativeOps() {}

  /**
   * A native scope (the root of a {@link Graph} or {@link EagerSession}, or one derived from
   * it by {@code withSubScope} or {@code withName}), as {@link org.ndgather.op.Scope} holds
   * it: opaque outside this package, so that no program can read, forge or free the handle
   * behind it. A derived scope's handle is freed once this object is unreachable.
   */
  public static final class NativeScope {
    private final ExecutionEnvironment env;
    /** The derived scope's handle, or null for the environment's root scope. */
    private final Tensor.Handle own;

    private NativeScope(ExecutionEnvironment env, Tensor.Handle own) {
      this.env = env;
      this.own = own;
    }

    /**
     * The native scope, once the environment is checked open (a derived scope outlives a
     * closed graph's, and must be refused with it).
     */
    long handle() {
      long root = rootHandle(env);
      return own == null ? root : own.get("Scope");
    }
  }

  /** The root scope handle of {@code env}; its class decides (the interface is sealed). */
  private static long rootHandle(ExecutionEnvironment env) {
    if (env instanceof Graph g) {
      return g.scopeHandle();
    }
    return ((EagerSession) env).scopeHandle();
  }

  /**
   * The root scope of {@code env}.
   *
   * @param env a graph or an eager session
   * @return its root scope
   * @throws IllegalStateException if {@code env} is closed
   */
  public static NativeScope rootScope(ExecutionEnvironment env) {
    if (env == null) {
      throw new NullPointerException("env must not be null");
    }
    rootHandle(env);
    return new NativeScope(env, null);
  }

  /**
   * A scope derived from {@code parent}: {@code withSubScope(name)} or {@code withName(name)}.
   *
   * @param parent the scope it is derived from
   * @param name the sub-scope's or the next op's name
   * @param subScope true for a sub-scope, false to name the next op
   * @return the new scope
   */
  public static NativeScope deriveScope(NativeScope parent, String name, boolean subScope) {
    if (name == null) {
      throw new NullPointerException("a scope name must not be null");
    }
    try {
      long h = Native.scopeDerive(parent.handle(), name, subScope);
      NativeScope derived = new NativeScope(parent.env, new Tensor.Handle(h, Native::scopeFree));
      Tensor.CLEANER.register(derived, derived.own);
      return derived;
    } finally {
      // The parent's cleaner must not close its handle under the native call.
      Reference.reachabilityFence(parent);
    }
  }

  /** The native scope of {@code scope}, for a native call. */
  private static long handle(org.ndgather.op.Scope scope) {
    return scope.nativeScope().handle();
  }

  /**
   * Records {@code output} in its environment: a graph looks its ops up by name, and frees
   * them when it closes (an eager session keeps none).
   */
  static void register(ExecutionEnvironment env, Output<?> output) {
    if (env instanceof Graph g) {
      g.register(output);
    }
  }

  /** A constant holding a copy of {@code value}. */
  public static <T> Output<T> constant(org.ndgather.op.Scope scope, Tensor<T> value) {
    return made(scope, Native.opConstant(handle(scope), value.handle()), value);
  }

  /** A placeholder of {@code type} and {@code shape} (null: unknown). */
  public static <T> Output<T> placeholder(org.ndgather.op.Scope scope, Class<T> type, Shape shape) {
    long[] dims = shape == null ? null : shape.dims();
    String dt = DataType.fromClass(type).nativeName();
    return made(scope, Native.opPlaceholder(handle(scope), dt, dims));
  }

  /** {@code GatherV2}: its axis feeds the registered op's attribute. */
  public static <T> Output<T> gather(
      org.ndgather.op.Scope scope,
      Operand<T> params,
      Operand<?> indices,
      Operand<?> axis,
      long batchDims,
      String badIndices) {
    Attributes a = policy(new Attributes().put("batch_dims", Long.toString(batchDims)), badIndices);
    List<List<Operand<?>>> inputs = List.of(one(params), one(indices));
    return build(scope, "gather", inputs, a.names, a.values, List.of("axis"), List.of(axis));
  }

  /**
   * The registered op {@code op} (the generic builder): for each input of its signature, its
   * operands (one; none for an optional input left out; any number for a list), and its
   * attributes as names and text.
   */
  public static <T> Output<T> build(
      org.ndgather.op.Scope scope,
      String op,
      List<List<Operand<?>>> inputs,
      List<String> attrNames,
      List<String> attrValues) {
    return build(scope, op, inputs, attrNames, attrValues, List.of(), List.of());
  }

  /**
   * {@link #build}, with the attributes {@code fedNames} given by the tensors {@code fed}, as
   * TensorFlow takes them as inputs ({@code GatherV2}'s axis, {@code num_segments}, {@code
   * ScatterNd}'s shape): a graph reads them when it runs.
   */
  public static <T> Output<T> build(
      org.ndgather.op.Scope scope,
      String op,
      List<List<Operand<?>>> inputs,
      List<String> attrNames,
      List<String> attrValues,
      List<String> fedNames,
      List<? extends Operand<?>> fed) {
    long[][] handles = new long[inputs.size()][];
    for (int k = 0; k < handles.length; k++) {
      handles[k] = inputs.get(k).stream().mapToLong(o -> o.asOutput().handle()).toArray();
    }
    long h =
        Native.opBuild(
            handle(scope),
            op,
            handles,
            attrNames.toArray(new String[0]),
            attrValues.toArray(new String[0]),
            fedNames.toArray(new String[0]),
            handles(fed));
    return made(scope, h, inputs, fed);
  }

  /** {@code GatherNd}. */
  public static <T> Output<T> gatherNd(
      org.ndgather.op.Scope scope,
      Operand<T> params,
      Operand<?> indices,
      long batchDims,
      String badIndices) {
    Attributes a = policy(new Attributes().put("batch_dims", Long.toString(batchDims)), badIndices);
    return build(scope, "gather_nd", List.of(one(params), one(indices)), a.names, a.values);
  }

  /** The {@code tensor_scatter_nd} op of {@code kind} ("update", "add", "sub", "min", "max"). */
  public static <T> Output<T> tensorScatter(
      org.ndgather.op.Scope scope,
      String kind,
      Operand<T> tensor,
      Operand<?> indices,
      Operand<T> updates,
      String badIndices) {
    Attributes a = policy(new Attributes(), badIndices);
    List<List<Operand<?>>> inputs = List.of(one(tensor), one(indices), one(updates));
    return build(scope, "tensor_scatter_nd_" + kind, inputs, a.names, a.values);
  }

  /** {@code TakeAlongAxis}. */
  public static <T> Output<T> takeAlongAxis(
      org.ndgather.op.Scope scope,
      Operand<T> arr,
      Operand<?> indices,
      long axis,
      String badIndices) {
    Attributes a = policy(new Attributes().put("axis", Long.toString(axis)), badIndices);
    return build(scope, "take_along_axis", List.of(one(arr), one(indices)), a.names, a.values);
  }

  /** {@code EmbeddingLookup}; {@code maxNorm} NaN for none. */
  public static <T> Output<T> embeddingLookup(
      org.ndgather.op.Scope scope,
      List<? extends Operand<T>> shards,
      Operand<?> ids,
      String partitionStrategy,
      double maxNorm) {
    Attributes a = new Attributes().put("partition_strategy", partitionStrategy);
    if (!Double.isNaN(maxNorm)) {
      a.put("max_norm", Double.toString(maxNorm));
    }
    return build(
        scope, "embedding_lookup", List.of(all(shards), one(ids)), a.names, a.values);
  }

  /**
   * PyTorch's {@code embedding_bag}; {@code offsets} and {@code weights} null for none,
   * {@code paddingIdx} null for none, {@code maxNorm} NaN for none.
   */
  public static <T> Output<T> embeddingBag(
      org.ndgather.op.Scope scope,
      List<? extends Operand<T>> shards,
      Operand<?> input,
      Operand<?> offsets,
      Operand<T> weights,
      String mode,
      Long paddingIdx,
      boolean includeLastOffset,
      double maxNorm,
      String partitionStrategy,
      String badIndices) {
    Attributes a =
        new Attributes()
            .put("mode", mode)
            .put("include_last_offset", Boolean.toString(includeLastOffset))
            .put("partition_strategy", partitionStrategy);
    policy(a, badIndices);
    if (paddingIdx != null) {
      a.put("padding_idx", Long.toString(paddingIdx));
    }
    if (!Double.isNaN(maxNorm)) {
      a.put("max_norm", Double.toString(maxNorm));
    }
    List<List<Operand<?>>> inputs =
        List.of(
            all(shards),
            one(input),
            offsets == null ? List.of() : one(offsets),
            weights == null ? List.of() : one(weights));
    return build(scope, "embedding_bag", inputs, a.names, a.values);
  }

  /**
   * {@code badIndices} as the registry names it, added to {@code a}: TF Java's upper-case
   * names lowered, and none (the op's default) for "" or "DEFAULT".
   */
  private static Attributes policy(Attributes a, String badIndices) {
    if (badIndices == null) {
      throw new IllegalArgumentException("badIndices must not be null");
    }
    if (!badIndices.isEmpty() && !badIndices.equalsIgnoreCase("DEFAULT")) {
      a.put("bad_indices", badIndices.toLowerCase(java.util.Locale.ROOT));
    }
    return a;
  }

  /** One operand as an input of {@link #build}. */
  private static List<Operand<?>> one(Operand<?> operand) {
    return List.of(operand);
  }

  /** A list of operands as one input of {@link #build}. */
  private static List<Operand<?>> all(List<? extends Operand<?>> operands) {
    return List.copyOf(operands);
  }

  /** Attribute names and their values as text, in order, for {@link #build}. */
  private static final class Attributes {
    final List<String> names = new java.util.ArrayList<>();
    final List<String> values = new java.util.ArrayList<>();

    Attributes put(String name, String value) {
      names.add(name);
      values.add(value);
      return this;
    }
  }

  /** {@code tf.gradients(ys, xs, dx)}: one output per x; {@code dx} null for ones. */
  public static List<Output<?>> gradients(
      org.ndgather.op.Scope scope,
      List<? extends Operand<?>> ys,
      List<? extends Operand<?>> xs,
      List<? extends Operand<?>> dx) {
    long[] grads =
        Native.opGradients(handle(scope), handles(ys), handles(xs), dx == null ? null : handles(dx));
    List<Output<?>> out = new java.util.ArrayList<>(grads.length);
    // Every handle past the one being wrapped has no owner yet: if wrapping one fails (the
    // graph began to close), they are freed here, or they would leak for good.
    int next = 0;
    try {
      while (next < grads.length) {
        // Counted before the call: made() owns its handle even when it throws.
        long h = grads[next++];
        out.add(made(scope, h, ys, xs, dx));
      }
    } finally {
      Tensor.Handle.freeAll(grads, next, Native::outputFree);
    }
    return out;
  }

  /**
   * The output a native op builder returned, with the objects whose handles it was given
   * (the scope, operands, tensors) kept reachable until here: their cleaners do not close
   * the handles under the call. Each of {@code used} is evaluated after the native call.
   */
  private static <T> Output<T> made(org.ndgather.op.Scope scope, long handle, Object... used) {
    try {
      return new Output<>(scope.env(), handle);
    } finally {
      Reference.reachabilityFence(scope);
      Reference.reachabilityFence(used);
    }
  }

  private static long[] handles(List<? extends Operand<?>> operands) {
    long[] handles = new long[operands.size()];
    for (int i = 0; i < handles.length; i++) {
      handles[i] = operands.get(i).asOutput().handle();
    }
    return handles;
  }

  /** The cost of a JNI call that does nothing (for benchmarks). */
  public static long noop(long x) {
    return Native.noop(x);
  }
}
