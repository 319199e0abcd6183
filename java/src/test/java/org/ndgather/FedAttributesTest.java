package org.ndgather;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.ndgather.op.Ops;
import org.ndgather.op.core.EmbeddingLookupSparse;
import org.ndgather.op.core.Placeholder;

/**
 * Operands that TensorFlow takes as input tensors and the registry as attributes ({@code
 * GatherV2}'s axis, {@code numSegments}, {@code ScatterNd}'s shape): a graph reads them when it
 * runs, as TF Java's do, so a placeholder may give them. Also {@code EmbeddingLookupSparse}'s
 * typed facade, whose rows a constant {@code denseShape} fixes when it is built.
 */
class FedAttributesTest {
  @Test
  void aPlaceholderGivesNumSegmentsWhenTheGraphRuns() {
    try (Graph g = new Graph(); Session s = new Session(g)) {
      Ops tf = Ops.create(g);
      Placeholder<Integer> n = tf.placeholder(Integer.class);
      var sums =
          tf.math.unsortedSegmentSum(
              tf.constant(new float[] {1, 5, 2}), tf.constant(new int[] {1, 1, 0}), n);
      assertArrayEquals(new long[] {-1}, sums.asOutput().shape().dims());
      for (int rows : new int[] {2, 4}) {
        try (Tensor<Integer> fed = Tensors.create(rows);
            Tensor<?> out = s.runner().feed(n, fed).fetch(sums).run().get(0)) {
          float[] want = rows == 2 ? new float[] {2, 6} : new float[] {2, 6, 0, 0};
          assertArrayEquals(want, out.expect(Float.class).copyTo(new float[rows]));
        }
      }
      try (Tensor<Integer> negative = Tensors.create(-1)) {
        IllegalArgumentException e =
            assertThrows(
                IllegalArgumentException.class,
                () -> s.runner().feed(n, negative).fetch(sums).run());
        assertEquals("Input num_segments == -1 must not be negative.", e.getMessage());
      }
    }
  }

  @Test
  void aPlaceholderGivesGatherItsAxisAndScatterNdItsShape() {
    try (Graph g = new Graph(); Session s = new Session(g)) {
      Ops tf = Ops.create(g);
      Placeholder<Long> axis = tf.placeholder(Long.class);
      var rows =
          tf.gather(
              tf.constant(new int[][] {{1, 2, 3}, {4, 5, 6}}), tf.constant(new int[] {2, 0}), axis);
      assertEquals(2, rows.asOutput().shape().numDimensions());
      // Named as TF Java names it, of TensorFlow's type.
      assertEquals("Gather", rows.op().name());
      assertEquals("GatherV2", rows.op().type());
      try (Tensor<Long> one = Tensors.create(1L);
          Tensor<?> out = s.runner().feed(axis, one).fetch(rows).run().get(0)) {
        assertArrayEquals(new int[][] {{3, 1}, {6, 4}}, out.expect(Integer.class).copyTo(new int[2][2]));
      }
      Placeholder<Long> shape = tf.placeholder(Long.class);
      var scattered =
          tf.scatterNd(tf.constant(new long[][] {{1}, {3}}), tf.constant(new float[] {5, 7}), shape);
      try (Tensor<Long> five = Tensors.create(new long[] {5});
          Tensor<?> out = s.runner().feed(shape, five).fetch(scattered).run().get(0)) {
        assertArrayEquals(new float[] {0, 5, 0, 7, 0}, out.expect(Float.class).copyTo(new float[5]));
      }
      // A float axis is refused when the op is built.
      Placeholder<Float> floats = tf.placeholder(Float.class);
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class,
              () -> tf.gather(tf.constant(new int[] {1}), tf.constant(new int[] {0}), floats));
      assertEquals("expected dtype int32 or int64, got float32", e.getMessage());
    }
  }

  @Test
  void embeddingLookupSparseThroughItsClass() {
    try (EagerSession session = EagerSession.create()) {
      Ops tf = Ops.create(session);
      var table = tf.constant(new float[][] {{1, 2}, {3, 4}, {5, 6}});
      var indices = tf.constant(new long[][] {{0, 0}, {0, 1}, {2, 0}});
      var ids = tf.constant(new long[] {0, 2, 1});
      var shape = tf.constant(new long[] {3, 2});
      var sums =
          tf.embeddingLookupSparse(
              List.of(table), indices, ids, shape, null, EmbeddingLookupSparse.combiner("sum"));
      try (Tensor<Float> t = sums.asOutput().tensor()) {
        assertArrayEquals(new float[][] {{6, 8}, {0, 0}, {3, 4}}, t.copyTo(new float[3][2]));
      }
      var weights = tf.constant(new float[] {1, 3, 2});
      var means = tf.embeddingLookupSparse(List.of(table), indices, ids, shape, weights);
      try (Tensor<Float> t = means.asOutput().tensor()) {
        // (1 * [1, 2] + 3 * [5, 6]) / 4, and [3, 4].
        assertArrayEquals(new float[][] {{4, 5}, {0, 0}, {3, 4}}, t.copyTo(new float[3][2]));
      }
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class,
              () ->
                  tf.embeddingLookupSparse(
                      List.of(table), indices, ids, shape, null,
                      EmbeddingLookupSparse.combiner("max")));
      assertEquals(true, e.getMessage().contains("combiner"), e.getMessage());
    }
    try (Graph g = new Graph()) {
      Ops tf = Ops.create(g);
      Placeholder<Float> table = tf.placeholder(Float.class, Placeholder.shape(Shape.make(-1, 2)));
      var indices = tf.constant(new long[][] {{0, 0}});
      var ids = tf.constant(new long[] {0});
      var known = tf.embeddingLookupSparse(List.of(table), indices, ids, tf.constant(new long[] {3, 1}), null);
      assertArrayEquals(new long[] {3, 2}, known.asOutput().shape().dims());
      Placeholder<Long> fed = tf.placeholder(Long.class);
      var open = tf.embeddingLookupSparse(List.of(table), indices, ids, fed, null);
      assertArrayEquals(new long[] {-1, 2}, open.asOutput().shape().dims());
    }
  }
}
