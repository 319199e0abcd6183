package org.ndgather;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.ndgather.op.Ops;
import org.ndgather.op.core.Gradients;
import org.ndgather.op.core.Placeholder;

/**
 * tf.gradients through the gather family (the programs of TfJavaProgramsTest compare
 * GatherNd's with TF Java 1.15 itself; TF Java 1.15 has no gradient for GatherV2).
 */
class GradientsTest {
  @Test
  void gatherAndTakeAlongAxisGradientsScatterTheUpstream() {
    try (Graph g = new Graph(); Session s = new Session(g)) {
      Ops tf = Ops.create(g);
      Placeholder<Double> p = tf.placeholder(Double.class);
      var rows = tf.gather(p, tf.constant(new int[] {1, 1, 0}), tf.constant(1));
      var along = tf.takeAlongAxis(p, tf.constant(new long[][] {{2, 2}, {0, 1}}), 1L);
      Gradients grads = tf.gradients(List.of(rows, along), List.of(p));
      assertEquals(1, grads.dy().size());
      try (Tensor<Double> in = Tensors.create(new double[][] {{1, 2, 3}, {4, 5, 6}});
          Tensor<?> t = s.runner().feed(p, in).fetch(grads.dy(0)).run().get(0)) {
        // gather along axis 1: column 1 twice, column 0 once, per row; takeAlongAxis adds
        // [0, 0, 2] to row 0 and [1, 1, 0] to row 1.
        double[][] expected = {{1, 2, 2}, {2, 3, 0}};
        assertArrayEquals(expected, t.copyTo(new double[2][3]));
      }
    }
  }

  @Test
  void embeddingLookupGradientsReachEachShard() {
    try (Graph g = new Graph(); Session s = new Session(g)) {
      Ops tf = Ops.create(g);
      // "mod" over two shards: id k is row k / 2 of shard k % 2.
      Placeholder<Float> even = tf.placeholder(Float.class);
      Placeholder<Float> odd = tf.placeholder(Float.class);
      var rows = tf.embeddingLookup(List.of(even, odd), tf.constant(new int[] {3, 0, 3}));
      Gradients grads = tf.gradients(rows, List.of(even, odd));
      // Each row read adds the upstream ones; id 3 twice.
      float[][][] expected = {{{1, 1}, {0, 0}}, {{0, 0}, {2, 2}}};
      for (int k = 0; k < 2; k++) {
        try (Tensor<Float> e = Tensors.create(new float[][] {{1, 2}, {3, 4}});
            Tensor<Float> o = Tensors.create(new float[][] {{5, 6}, {7, 8}});
            Tensor<?> got = s.runner().feed(even, e).feed(odd, o).fetch(grads.dy(k)).run().get(0)) {
          assertArrayEquals(expected[k], got.copyTo(new float[2][2]));
        }
      }
    }
  }

  @Test
  void opsWithoutAGradientAndWrongUpstreamsAreRefused() {
    try (Graph g = new Graph()) {
      Ops tf = Ops.create(g);
      Placeholder<Float> table = tf.placeholder(Float.class);
      Operation put =
          tf.scope()
              .opBuilder("put_along_axis")
              .addInput(table)
              .addInput(tf.constant(new long[] {0}))
              .addInput(tf.constant(new float[] {1}))
              .setAttr("axis", 0)
              .build();
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class,
              () -> tf.gradients(put.<Float>output(0), List.of(table)));
      assertEquals("No gradient defined for op: PutAlongAxis", e.getMessage());
      var picked = tf.gatherNd(table, tf.constant(new int[][] {{0}}));
      assertThrows(IllegalArgumentException.class,
          () -> tf.gradients(picked, List.of(table), Gradients.dx(List.of(tf.constant(new int[] {1})))));
      assertThrows(IllegalArgumentException.class, () -> tf.gradients(picked, List.of()));
      Placeholder<Integer> ints = tf.placeholder(Integer.class);
      var intRows = tf.gatherNd(ints, tf.constant(new int[][] {{0}}));
      assertThrows(IllegalArgumentException.class, () -> tf.gradients(intRows, List.of(ints)));
    }
  }
}
