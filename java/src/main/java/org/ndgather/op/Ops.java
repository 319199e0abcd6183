package org.ndgather.op;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.ndgather.EagerSession;
import org.ndgather.ExecutionEnvironment;
import org.ndgather.Operand;
import org.ndgather.Tensor;
import org.ndgather.op.core.Constant;
import org.ndgather.op.core.EmbeddingBag;
import org.ndgather.op.core.EmbeddingLookup;
import org.ndgather.op.core.EmbeddingLookupSparse;
import org.ndgather.op.core.Gather;
import org.ndgather.op.core.GatherNd;
import org.ndgather.op.core.Gradients;
import org.ndgather.op.core.Placeholder;
import org.ndgather.op.core.ScatterNd;
import org.ndgather.op.core.TakeAlongAxis;
import org.ndgather.op.core.TensorScatterAdd;
import org.ndgather.op.core.TensorScatterMax;
import org.ndgather.op.core.TensorScatterMin;
import org.ndgather.op.core.TensorScatterOp;
import org.ndgather.op.core.TensorScatterSub;
import org.ndgather.op.core.TensorScatterUpdate;

/**
 * An API for building ops as {@link Op}s (TF Java's {@code Ops}): {@code Ops tf =
 * Ops.create(graph)}, then {@code tf.constant(..)}, {@code tf.placeholder(..)}, {@code
 * tf.gather(..)}, {@code tf.gatherNd(..)}.
 *
 * <pre>{@code
 * try (Graph g = new Graph(); Session s = new Session(g)) {
 *   Ops tf = Ops.create(g);
 *   Placeholder<Float> table = tf.placeholder(Float.class);
 *   Gather<Float> rows = tf.gather(table, tf.constant(new int[] {2, 0}), tf.constant(0));
 *   try (Tensor<Float> t = Tensors.create(new float[][] {{1, 2}, {3, 4}, {5, 6}});
 *       Tensor<?> out = s.runner().feed(table, t).fetch(rows).run().get(0)) {
 *     float[][] got = out.expect(Float.class).copyTo(new float[2][2]); // {{5, 6}, {1, 2}}
 *   }
 * }
 * }</pre>
 */
public final class Ops {
  private final Scope scope;

  /** The {@code tf.math} ops: TensorFlow's segment reductions. */
  public final MathOps math;

  private Ops(Scope scope) {
    this.scope = scope;
    this.math = new MathOps(scope);
  }

  /**
   * An API for building ops in {@code env}.
   *
   * @param env a graph or an eager session
   * @return the API
   */
  public static Ops create(ExecutionEnvironment env) {
    return new Ops(new Scope(env));
  }

  /** An API for building ops in the default eager session. */
  public static Ops create() {
    return create(EagerSession.getDefault());
  }

  /** The scope ops are built in. */
  public Scope scope() {
    return scope;
  }

  /** An API whose ops are named {@code childScopeName/...}. */
  public Ops withSubScope(String childScopeName) {
    return new Ops(scope.withSubScope(childScopeName));
  }

  /** An API whose next op is named {@code opName}. */
  public Ops withName(String opName) {
    return new Ops(scope.withName(opName));
  }

  /** A constant of a STRING scalar: {@code data}'s UTF-8 bytes. */
  public Constant<String> constant(String data) {
    return constant(data.getBytes(StandardCharsets.UTF_8));
  }

  /** A constant of {@code type} and {@code shape} from the elements' bytes in native order. */
  public <T> Constant<T> constant(Class<T> type, long[] shape, ByteBuffer data) {
    return Constant.create(scope, type, shape, data);
  }

  /** A constant holding a copy of {@code value}. */
  public <T> Constant<T> constant(Tensor<T> value) {
    return Constant.create(scope, value);
  }

  /** A constant of a Float scalar. */
  public Constant<Float> constant(float data) {
    return Constant.create(scope, data, Float.class);
  }

  /** A constant of a rank-1 Float constant. */
  public Constant<Float> constant(float[] data) {
    return Constant.create(scope, data, Float.class);
  }

  /** A constant of a rank-2 Float constant. */
  public Constant<Float> constant(float[][] data) {
    return Constant.create(scope, data, Float.class);
  }

  /** A constant of a rank-3 Float constant. */
  public Constant<Float> constant(float[][][] data) {
    return Constant.create(scope, data, Float.class);
  }

  /** A constant of a rank-4 Float constant. */
  public Constant<Float> constant(float[][][][] data) {
    return Constant.create(scope, data, Float.class);
  }

  /** A constant of a rank-5 Float constant. */
  public Constant<Float> constant(float[][][][][] data) {
    return Constant.create(scope, data, Float.class);
  }

  /** A constant of a rank-6 Float constant. */
  public Constant<Float> constant(float[][][][][][] data) {
    return Constant.create(scope, data, Float.class);
  }

  /** A constant of a Double scalar. */
  public Constant<Double> constant(double data) {
    return Constant.create(scope, data, Double.class);
  }

  /** A constant of a rank-1 Double constant. */
  public Constant<Double> constant(double[] data) {
    return Constant.create(scope, data, Double.class);
  }

  /** A constant of a rank-2 Double constant. */
  public Constant<Double> constant(double[][] data) {
    return Constant.create(scope, data, Double.class);
  }

  /** A constant of a rank-3 Double constant. */
  public Constant<Double> constant(double[][][] data) {
    return Constant.create(scope, data, Double.class);
  }

  /** A constant of a rank-4 Double constant. */
  public Constant<Double> constant(double[][][][] data) {
    return Constant.create(scope, data, Double.class);
  }

  /** A constant of a rank-5 Double constant. */
  public Constant<Double> constant(double[][][][][] data) {
    return Constant.create(scope, data, Double.class);
  }

  /** A constant of a rank-6 Double constant. */
  public Constant<Double> constant(double[][][][][][] data) {
    return Constant.create(scope, data, Double.class);
  }

  /** A constant of a Integer scalar. */
  public Constant<Integer> constant(int data) {
    return Constant.create(scope, data, Integer.class);
  }

  /** A constant of a rank-1 Integer constant. */
  public Constant<Integer> constant(int[] data) {
    return Constant.create(scope, data, Integer.class);
  }

  /** A constant of a rank-2 Integer constant. */
  public Constant<Integer> constant(int[][] data) {
    return Constant.create(scope, data, Integer.class);
  }

  /** A constant of a rank-3 Integer constant. */
  public Constant<Integer> constant(int[][][] data) {
    return Constant.create(scope, data, Integer.class);
  }

  /** A constant of a rank-4 Integer constant. */
  public Constant<Integer> constant(int[][][][] data) {
    return Constant.create(scope, data, Integer.class);
  }

  /** A constant of a rank-5 Integer constant. */
  public Constant<Integer> constant(int[][][][][] data) {
    return Constant.create(scope, data, Integer.class);
  }

  /** A constant of a rank-6 Integer constant. */
  public Constant<Integer> constant(int[][][][][][] data) {
    return Constant.create(scope, data, Integer.class);
  }

  /** A constant of a Long scalar. */
  public Constant<Long> constant(long data) {
    return Constant.create(scope, data, Long.class);
  }

  /** A constant of a rank-1 Long constant. */
  public Constant<Long> constant(long[] data) {
    return Constant.create(scope, data, Long.class);
  }

  /** A constant of a rank-2 Long constant. */
  public Constant<Long> constant(long[][] data) {
    return Constant.create(scope, data, Long.class);
  }

  /** A constant of a rank-3 Long constant. */
  public Constant<Long> constant(long[][][] data) {
    return Constant.create(scope, data, Long.class);
  }

  /** A constant of a rank-4 Long constant. */
  public Constant<Long> constant(long[][][][] data) {
    return Constant.create(scope, data, Long.class);
  }

  /** A constant of a rank-5 Long constant. */
  public Constant<Long> constant(long[][][][][] data) {
    return Constant.create(scope, data, Long.class);
  }

  /** A constant of a rank-6 Long constant. */
  public Constant<Long> constant(long[][][][][][] data) {
    return Constant.create(scope, data, Long.class);
  }

  /** A constant of a Boolean scalar. */
  public Constant<Boolean> constant(boolean data) {
    return Constant.create(scope, data, Boolean.class);
  }

  /** A constant of a rank-1 Boolean constant. */
  public Constant<Boolean> constant(boolean[] data) {
    return Constant.create(scope, data, Boolean.class);
  }

  /** A constant of a rank-2 Boolean constant. */
  public Constant<Boolean> constant(boolean[][] data) {
    return Constant.create(scope, data, Boolean.class);
  }

  /** A constant of a rank-3 Boolean constant. */
  public Constant<Boolean> constant(boolean[][][] data) {
    return Constant.create(scope, data, Boolean.class);
  }

  /** A constant of a rank-4 Boolean constant. */
  public Constant<Boolean> constant(boolean[][][][] data) {
    return Constant.create(scope, data, Boolean.class);
  }

  /** A constant of a rank-5 Boolean constant. */
  public Constant<Boolean> constant(boolean[][][][][] data) {
    return Constant.create(scope, data, Boolean.class);
  }

  /** A constant of a rank-6 Boolean constant. */
  public Constant<Boolean> constant(boolean[][][][][][] data) {
    return Constant.create(scope, data, Boolean.class);
  }

  /** A constant of a STRING scalar of byte strings. */
  public Constant<String> constant(byte[] data) {
    return Constant.create(scope, data, String.class);
  }

  /** A constant of a rank-1 STRING constant of byte strings. */
  public Constant<String> constant(byte[][] data) {
    return Constant.create(scope, data, String.class);
  }

  /** A constant of a rank-2 STRING constant of byte strings. */
  public Constant<String> constant(byte[][][] data) {
    return Constant.create(scope, data, String.class);
  }

  /** A constant of a rank-3 STRING constant of byte strings. */
  public Constant<String> constant(byte[][][][] data) {
    return Constant.create(scope, data, String.class);
  }

  /** A constant of a rank-4 STRING constant of byte strings. */
  public Constant<String> constant(byte[][][][][] data) {
    return Constant.create(scope, data, String.class);
  }

  /** A constant of a rank-5 STRING constant of byte strings. */
  public Constant<String> constant(byte[][][][][][] data) {
    return Constant.create(scope, data, String.class);
  }

  /** A placeholder for a value of {@code dtype} fed when the graph runs. */
  public <T> Placeholder<T> placeholder(Class<T> dtype, Placeholder.Options... options) {
    return Placeholder.create(scope, dtype, options);
  }

  /** {@code GatherV2}: see {@link Gather#create}. */
  public <T, U extends Number, V extends Number> Gather<T> gather(
      Operand<T> params, Operand<U> indices, Operand<V> axis, Gather.Options... options) {
    return Gather.create(scope, params, indices, axis, options);
  }

  /** NumPy's {@code take_along_axis} (beyond TF Java): see {@link TakeAlongAxis#create}. */
  public <T, U extends Number> TakeAlongAxis<T> takeAlongAxis(
      Operand<T> arr, Operand<U> indices, long axis, TakeAlongAxis.Options... options) {
    return TakeAlongAxis.create(scope, arr, indices, axis, options);
  }

  /**
   * TensorFlow's {@code tf.nn.embedding_lookup} (beyond TF Java, whose users asked for it in
   * tensorflow/java#416 and #426): see {@link EmbeddingLookup#create}.
   */
  public <T, U extends Number> EmbeddingLookup<T> embeddingLookup(
      java.util.List<? extends Operand<T>> shards,
      Operand<U> ids,
      EmbeddingLookup.Options... options) {
    return EmbeddingLookup.create(scope, shards, ids, options);
  }

  /**
   * TensorFlow's {@code tf.nn.embedding_lookup_sparse} (beyond TF Java): see {@link
   * EmbeddingLookupSparse#create}.
   */
  public <T, U extends Number> EmbeddingLookupSparse<T> embeddingLookupSparse(
      java.util.List<? extends Operand<T>> shards,
      Operand<Long> indices,
      Operand<U> ids,
      Operand<Long> denseShape,
      Operand<T> weights,
      EmbeddingLookupSparse.Options... options) {
    return EmbeddingLookupSparse.create(
        scope, shards, indices, ids, denseShape, weights, options);
  }

  /** TF Java's {@code tf.gradients}: see {@link Gradients#create(Scope, Operand, Iterable, Gradients.Options...)}. */
  public Gradients gradients(
      Operand<?> y, Iterable<? extends Operand<?>> x, Gradients.Options... options) {
    return Gradients.create(scope, y, x, options);
  }

  /** TF Java's {@code tf.gradients} of several outputs: see {@link Gradients#create(Scope, Iterable, Iterable, Gradients.Options...)}. */
  public Gradients gradients(
      Iterable<? extends Operand<?>> y,
      Iterable<? extends Operand<?>> x,
      Gradients.Options... options) {
    return Gradients.create(scope, y, x, options);
  }

  /** PyTorch's {@code embedding_bag} (beyond TF Java): see {@link EmbeddingBag#create}. */
  public <T, U extends Number> EmbeddingBag<T> embeddingBag(
      java.util.List<? extends Operand<T>> shards,
      Operand<U> input,
      Operand<U> offsets,
      EmbeddingBag.Options... options) {
    return EmbeddingBag.create(scope, shards, input, offsets, options);
  }

  /** {@code ScatterNd}: see {@link ScatterNd#create}. */
  public <U extends Number, T> ScatterNd<T> scatterNd(
      Operand<U> indices, Operand<T> updates, Operand<U> shape, TensorScatterOp.Options... options) {
    return ScatterNd.create(scope, indices, updates, shape, options);
  }

  /** {@code TensorScatterUpdate}: see {@link TensorScatterUpdate#create}. */
  public <T, U extends Number> TensorScatterUpdate<T> tensorScatterUpdate(
      Operand<T> tensor, Operand<U> indices, Operand<T> updates, TensorScatterOp.Options... options) {
    return TensorScatterUpdate.create(scope, tensor, indices, updates, options);
  }

  /** {@code TensorScatterAdd}: see {@link TensorScatterAdd#create}. */
  public <T, U extends Number> TensorScatterAdd<T> tensorScatterAdd(
      Operand<T> tensor, Operand<U> indices, Operand<T> updates, TensorScatterOp.Options... options) {
    return TensorScatterAdd.create(scope, tensor, indices, updates, options);
  }

  /** {@code TensorScatterSub}: see {@link TensorScatterSub#create}. */
  public <T, U extends Number> TensorScatterSub<T> tensorScatterSub(
      Operand<T> tensor, Operand<U> indices, Operand<T> updates, TensorScatterOp.Options... options) {
    return TensorScatterSub.create(scope, tensor, indices, updates, options);
  }

  /** {@code TensorScatterMin}: see {@link TensorScatterMin#create}. */
  public <T, U extends Number> TensorScatterMin<T> tensorScatterMin(
      Operand<T> tensor, Operand<U> indices, Operand<T> updates, TensorScatterOp.Options... options) {
    return TensorScatterMin.create(scope, tensor, indices, updates, options);
  }

  /** {@code TensorScatterMax}: see {@link TensorScatterMax#create}. */
  public <T, U extends Number> TensorScatterMax<T> tensorScatterMax(
      Operand<T> tensor, Operand<U> indices, Operand<T> updates, TensorScatterOp.Options... options) {
    return TensorScatterMax.create(scope, tensor, indices, updates, options);
  }

  /** {@code GatherNd}: see {@link GatherNd#create}. */
  public <T, U extends Number> GatherNd<T> gatherNd(
      Operand<T> params, Operand<U> indices, GatherNd.Options... options) {
    return GatherNd.create(scope, params, indices, options);
  }
}
