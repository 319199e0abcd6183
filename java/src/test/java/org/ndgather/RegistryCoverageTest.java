package org.ndgather;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.ndgather.op.MathOps;
import org.ndgather.op.Ops;
import org.ndgather.op.core.TensorScatterOp;

/**
 * Every op of the core's registry is reachable from Java: the test walks the registry's names
 * ({@code Native.opNames}), so an op registered without a Java door fails here. Each op is
 * reached by the generic builder; an op with TF Java's typed API has its class and its {@code
 * Ops} method, and an op without one must be listed in {@link #BUILDER_ONLY}, so that a new op
 * is a decision, not an omission.
 */
class RegistryCoverageTest {
  /** Registry name → the typed class and the {@code Ops} (or {@code tf.math}) method. */
  private static final Map<String, String[]> TYPED = new LinkedHashMap<>();

  static {
    typed("gather", "core.Gather", "gather");
    typed("gather_nd", "core.GatherNd", "gatherNd");
    typed("take_along_axis", "core.TakeAlongAxis", "takeAlongAxis");
    typed("tensor_scatter_nd_update", "core.TensorScatterUpdate", "tensorScatterUpdate");
    typed("tensor_scatter_nd_add", "core.TensorScatterAdd", "tensorScatterAdd");
    typed("tensor_scatter_nd_sub", "core.TensorScatterSub", "tensorScatterSub");
    typed("tensor_scatter_nd_min", "core.TensorScatterMin", "tensorScatterMin");
    typed("tensor_scatter_nd_max", "core.TensorScatterMax", "tensorScatterMax");
    typed("embedding_lookup", "core.EmbeddingLookup", "embeddingLookup");
    typed("embedding_bag", "core.EmbeddingBag", "embeddingBag");
    typed("embedding_lookup_sparse", "core.EmbeddingLookupSparse", "embeddingLookupSparse");
    typed("scatter_nd", "core.ScatterNd", "scatterNd");
    for (String r : new String[] {"sum", "mean", "max", "min", "prod"}) {
      String cap = Character.toUpperCase(r.charAt(0)) + r.substring(1);
      typed("segment_" + r, "math.Segment" + cap, "math.segment" + cap);
      typed("unsorted_segment_" + r, "math.UnsortedSegment" + cap, "math.unsortedSegment" + cap);
    }
    typed("unsorted_segment_sqrt_n", "math.UnsortedSegmentSqrtN", "math.unsortedSegmentSqrtN");
  }

  /**
   * Registered ops that Java reaches only through {@code scope.opBuilder(name)} for now: TF Java
   * 1.15 has no class for them to follow (put_along_axis, scatter_reduce and gather_segment are
   * NumPy's, PyTorch's and PyG's; the {@code *_grad} ops are gradients, which TF Java reaches
   * through {@code Gradients}). The lookups' gradients give a tensor per shard, which a graph
   * node (one output) refuses when it runs, with that message.
   */
  private static final Set<String> BUILDER_ONLY =
      Set.of(
          "put_along_axis",
          "scatter_reduce",
          "gather_segment",
          "gather_grad",
          "gather_nd_grad",
          "take_along_axis_grad",
          "embedding_lookup_grad",
          "embedding_lookup_sparse_grad",
          "embedding_bag_grad");

  private static void typed(String op, String cls, String method) {
    TYPED.put(op, new String[] {"org.ndgather.op." + cls, method});
  }

  @Test
  void everyRegisteredOpHasAJavaDoor() throws Exception {
    List<String> ops = Arrays.asList(Native.opNames());
    assertTrue(ops.size() >= 26, "the registry lists " + ops);
    List<String> rows = new ArrayList<>();
    try (EagerSession session = EagerSession.create()) {
      Ops tf = Ops.create(session);
      for (String op : ops) {
        // The generic door knows the op by name: it asks for the op's inputs, where an unknown
        // name is refused as unknown.
        IllegalArgumentException noInputs =
            assertThrows(IllegalArgumentException.class, () -> tf.scope().opBuilder(op).build());
        assertTrue(
            noInputs.getMessage().startsWith(op + ": takes "), op + ": " + noInputs.getMessage());
        String[] typed = TYPED.get(op);
        if (typed == null) {
          if (!BUILDER_ONLY.contains(op)) {
            fail(op + " is registered but has no Java class, and is not listed as builder-only");
          }
          rows.add("| " + op + " | scope.opBuilder(\"" + op + "\") | (builder only) |");
          continue;
        }
        Class<?> cls = Class.forName(typed[0]);
        assertTrue(hasStaticCreate(cls), typed[0] + " has no static create(Scope, …)");
        String method = typed[1];
        Class<?> holder = method.startsWith("math.") ? MathOps.class : Ops.class;
        String name = method.startsWith("math.") ? method.substring(5) : method;
        assertTrue(
            Arrays.stream(holder.getMethods()).anyMatch(m -> m.getName().equals(name)),
            holder.getSimpleName() + " has no method " + name + " for " + op);
        rows.add("| " + op + " | scope.opBuilder(\"" + op + "\") | tf." + method + " |");
      }
    }
    Set<String> stale = new TreeSet<>(TYPED.keySet());
    stale.addAll(BUILDER_ONLY);
    stale.removeAll(ops);
    assertEquals(Set.of(), stale, "listed here but not registered");
    System.out.println(
        "\n| op | Java (generic) | Java (typed) |\n|---|---|---|\n" + String.join("\n", rows));
  }

  @Test
  void anUnknownNameIsRefusedAsUnknown() {
    try (EagerSession session = EagerSession.create()) {
      Ops tf = Ops.create(session);
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class, () -> tf.scope().opBuilder("gather_segmnt").build());
      assertTrue(e.getMessage().contains("gather_segmnt"), e.getMessage());
      assertTrue(!e.getMessage().startsWith("gather_segmnt: takes "), e.getMessage());
    }
  }

  /** A builder-made op through its typed class: {@code ScatterNd}, with TF's own example. */
  @Test
  void scatterNdThroughItsClass() {
    try (EagerSession session = EagerSession.create()) {
      Ops tf = Ops.create(session);
      var indices = tf.constant(new int[][] {{4}, {3}, {1}, {7}});
      var out = tf.scatterNd(indices, tf.constant(new float[] {9, 10, 11, 12}), tf.constant(new int[] {8}));
      try (Tensor<Float> t = out.asOutput().tensor()) {
        assertArrayEquals(new float[] {0, 11, 0, 10, 9, 0, 0, 12}, t.copyTo(new float[8]));
      }
      var longs = tf.constant(new long[][] {{1}, {1}});
      var twice = tf.scatterNd(longs, tf.constant(new int[] {3, 4}), tf.constant(new long[] {2}));
      try (Tensor<Integer> t = twice.asOutput().tensor()) {
        assertArrayEquals(new int[] {0, 7}, t.copyTo(new int[2]));
      }
      var bad = tf.constant(new int[][] {{9}});
      var one = tf.constant(new float[] {1});
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class, () -> tf.scatterNd(bad, one, tf.constant(new int[] {8})));
      assertTrue(e.getMessage().contains("indices[0] = [9] does not index into shape [8]"), e.getMessage());
      var ignored =
          tf.scatterNd(bad, one, tf.constant(new int[] {2}), TensorScatterOp.badIndicesPolicy("IGNORE"));
      try (Tensor<Float> t = ignored.asOutput().tensor()) {
        assertArrayEquals(new float[] {0, 0}, t.copyTo(new float[2]));
      }
      IllegalArgumentException shape =
          assertThrows(
              IllegalArgumentException.class, () -> tf.scatterNd(bad, one, tf.constant(8)));
      assertEquals("Shape must be a vector", shape.getMessage());
    }
  }

  private static boolean hasStaticCreate(Class<?> cls) {
    for (Method m : cls.getMethods()) {
      if (m.getName().equals("create") && Modifier.isStatic(m.getModifiers())) {
        return true;
      }
    }
    return false;
  }
}
