package org.ndgather;

import java.lang.ref.Reference;
import java.util.List;

/**
 * How the op classes of {@code org.ndgather.op} reach the core: each method converts and
 * calls one native op of the core's op API, which checks shapes and names errors. Not for
 * programs, which use {@link org.ndgather.op.Ops} or the ops' {@code create} methods.
 */
public final class NativeOps {
  private NativeOps() {}

  /** A derived native scope: {@code withSubScope(name)} or {@code withName(name)}. */
  public static long deriveScope(long scope, String name, boolean subScope) {
    if (name == null) {
      throw new NullPointerException("a scope name must not be null");
    }
    return Native.scopeDerive(scope, name, subScope);
  }

  /** Frees the native scope {@code handle} once {@code owner} is unreachable. */
  public static void freeWhenUnreachable(Object owner, long handle) {
    Tensor.CLEANER.register(owner, new Tensor.Handle(handle, Native::scopeFree));
  }

  /** A constant holding a copy of {@code value}. */
  public static <T> Output<T> constant(org.ndgather.op.Scope scope, Tensor<T> value) {
    return made(scope, Native.opConstant(scope.handle(), value.handle()), value);
  }

  /** A placeholder of {@code type} and {@code shape} (null: unknown). */
  public static <T> Output<T> placeholder(org.ndgather.op.Scope scope, Class<T> type, Shape shape) {
    long[] dims = shape == null ? null : shape.dims();
    String dt = DataType.fromClass(type).nativeName();
    return made(scope, Native.opPlaceholder(scope.handle(), dt, dims));
  }

  /** {@code GatherV2}. */
  public static <T> Output<T> gather(
      org.ndgather.op.Scope scope,
      Operand<T> params,
      Operand<?> indices,
      Operand<?> axis,
      long batchDims,
      String badIndices) {
    long h =
        Native.opGather(
            scope.handle(),
            params.asOutput().handle(),
            indices.asOutput().handle(),
            axis.asOutput().handle(),
            batchDims,
            badIndices);
    return made(scope, h, params, indices, axis);
  }

  /** {@code GatherNd}. */
  public static <T> Output<T> gatherNd(
      org.ndgather.op.Scope scope,
      Operand<T> params,
      Operand<?> indices,
      long batchDims,
      String badIndices) {
    long h =
        Native.opGatherNd(
            scope.handle(),
            params.asOutput().handle(),
            indices.asOutput().handle(),
            batchDims,
            badIndices);
    return made(scope, h, params, indices);
  }

  /** The {@code tensor_scatter_nd} op of {@code kind} ("update", "add", "sub", "min", "max"). */
  public static <T> Output<T> tensorScatter(
      org.ndgather.op.Scope scope,
      String kind,
      Operand<T> tensor,
      Operand<?> indices,
      Operand<T> updates,
      String badIndices) {
    long h =
        Native.opTensorScatter(
            scope.handle(),
            kind,
            tensor.asOutput().handle(),
            indices.asOutput().handle(),
            updates.asOutput().handle(),
            badIndices);
    return made(scope, h, tensor, indices, updates);
  }

  /** {@code TakeAlongAxis}. */
  public static <T> Output<T> takeAlongAxis(
      org.ndgather.op.Scope scope,
      Operand<T> arr,
      Operand<?> indices,
      long axis,
      String badIndices) {
    long h =
        Native.opTakeAlongAxis(
            scope.handle(), arr.asOutput().handle(), indices.asOutput().handle(), axis, badIndices);
    return made(scope, h, arr, indices);
  }

  /** {@code EmbeddingLookup}; {@code maxNorm} NaN for none. */
  public static <T> Output<T> embeddingLookup(
      org.ndgather.op.Scope scope,
      List<? extends Operand<T>> shards,
      Operand<?> ids,
      String partitionStrategy,
      double maxNorm) {
    long h =
        Native.opEmbeddingLookup(
            scope.handle(), handles(shards), ids.asOutput().handle(), partitionStrategy, maxNorm);
    return made(scope, h, shards, ids);
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
    long h =
        Native.opEmbeddingBag(
            scope.handle(),
            handles(shards),
            input.asOutput().handle(),
            offsets == null ? 0 : offsets.asOutput().handle(),
            weights == null ? 0 : weights.asOutput().handle(),
            mode,
            paddingIdx == null ? Long.MIN_VALUE : paddingIdx,
            includeLastOffset,
            maxNorm,
            partitionStrategy,
            badIndices);
    return made(scope, h, shards, input, offsets, weights);
  }

  /** {@code tf.gradients(ys, xs, dx)}: one output per x; {@code dx} null for ones. */
  public static List<Output<?>> gradients(
      org.ndgather.op.Scope scope,
      List<? extends Operand<?>> ys,
      List<? extends Operand<?>> xs,
      List<? extends Operand<?>> dx) {
    long[] grads =
        Native.opGradients(
            scope.handle(), handles(ys), handles(xs), dx == null ? null : handles(dx));
    List<Output<?>> out = new java.util.ArrayList<>(grads.length);
    for (long h : grads) {
      out.add(made(scope, h, ys, xs, dx));
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
