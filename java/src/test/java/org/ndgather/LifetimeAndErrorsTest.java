package org.ndgather;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.ndgather.op.Ops;
import org.ndgather.op.core.Gather;
import org.ndgather.op.core.GatherNd;
import org.ndgather.op.core.Placeholder;

/** Lifetimes, misuse and threads: each gives a Java exception, and the JVM never crashes. */
class LifetimeAndErrorsTest {
  private static long rssKiB() throws Exception {
    for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (line.startsWith("VmRSS:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", ""));
      }
    }
    return 0;
  }

  @Test
  void hundredThousandTensorsCreatedAndClosedKeepMemoryBounded() throws Exception {
    float[] row = new float[256];
    // A first round lets the Java heap reach its steady size (surefire runs with -Xmx128m).
    for (int i = 0; i < 100_000; i++) {
      Tensors.create(row).close();
    }
    long before = rssKiB();
    for (int i = 0; i < 100_000; i++) {
      try (Tensor<Float> t = Tensors.create(row)) {
        assertEquals(256, t.numElements());
      }
    }
    long grown = rssKiB() - before;
    // 100,000 tensors of 1 KiB each would be ~100 MiB if none were freed.
    assertTrue(grown < 32 * 1024, "RSS grew by " + grown + " KiB");
  }

  @Test
  void aClosedTensorThrowsIllegalStateException() {
    Tensor<Integer> t = Tensors.create(new int[] {1, 2});
    t.close();
    t.close();
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> t.copyTo(new int[2]));
    assertEquals("Tensor has been closed", e.getMessage());
    assertThrows(IllegalStateException.class, t::intValue);
    try (EagerSession s = EagerSession.create()) {
      Ops tf = Ops.create(s);
      assertThrows(IllegalStateException.class, () -> tf.constant(t));
    }
  }

  @Test
  void wrongTypesAndNullsAreJavaExceptions() {
    try (Tensor<Integer> t = Tensors.create(new int[] {1, 2})) {
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> t.expect(Float.class));
      assertEquals("Cannot cast from tensor of INT32 to tensor of FLOAT", e.getMessage());
      assertThrows(IllegalArgumentException.class, t::floatValue);
      assertThrows(IllegalArgumentException.class, () -> t.copyTo(new int[3]));
    }
    assertThrows(NullPointerException.class, () -> Tensor.create(null));
    assertThrows(NullPointerException.class, () -> new Session(null));
    assertThrows(IllegalArgumentException.class, () -> Tensor.create(new int[][] {{1}, {2, 3}}));
    assertThrows(
        IllegalArgumentException.class,
        () -> Tensor.create(Float.class, new long[] {3}, ByteBuffer.allocate(8)));
  }

  @Test
  void badIndicesAreTensorFlowsMessageAtRunTime() {
    try (Graph g = new Graph();
        Session s = new Session(g);
        Tensor<Integer> bad = Tensors.create(new int[] {0, 7})) {
      Ops tf = Ops.create(g);
      Placeholder<Integer> i = tf.placeholder(Integer.class);
      Gather<Float> rows = tf.gather(tf.constant(new float[] {1, 2, 3}), i, tf.constant(0));
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class, () -> s.runner().feed(i, bad).fetch(rows).run());
      assertEquals("indices[1] = 7 is not in [0, 3)", e.getMessage());
      GatherNd<Float> ignored =
          tf.gatherNd(
              tf.constant(new float[] {1, 2, 3}),
              tf.constant(new int[][] {{2}, {9}}),
              GatherNd.badIndicesPolicy("IGNORE"));
      try (Tensor<?> out = s.runner().fetch(ignored).run().get(0)) {
        assertArrayEquals(new float[] {3, 0}, out.expect(Float.class).copyTo(new float[2]));
      }
    }
  }

  @Test
  void aShapeKnownToBeInvalidFailsWhenTheGraphIsBuilt() {
    try (Graph g = new Graph()) {
      Ops tf = Ops.create(g);
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class,
              () -> tf.gatherNd(tf.constant(new int[] {1, 2}), tf.constant(new int[][] {{0, 1}})));
      assertTrue(e.getMessage().contains("params rank"), e.getMessage());
    }
  }

  @Test
  void takeAlongAxisTakesAlongTheAxis() {
    try (EagerSession session = EagerSession.create()) {
      Ops tf = Ops.create(session);
      var best =
          tf.takeAlongAxis(
              tf.constant(new int[][] {{10, 30, 20}, {60, 40, 50}}),
              tf.constant(new long[][] {{1}, {0}}),
              1);
      try (Tensor<Integer> t = best.asOutput().tensor()) {
        assertArrayEquals(new int[][] {{30}, {60}}, t.copyTo(new int[2][1]));
      }
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class,
              () -> tf.takeAlongAxis(tf.constant(new int[] {1, 2}), tf.constant(new long[] {5}), 0));
      assertTrue(e.getMessage().contains("5"), e.getMessage());
      var wrapped =
          tf.takeAlongAxis(
              tf.constant(new int[] {1, 2, 3}),
              tf.constant(new long[] {-1}),
              0,
              org.ndgather.op.core.TakeAlongAxis.badIndicesPolicy("NEGATIVE"));
      try (Tensor<Integer> t = wrapped.asOutput().tensor()) {
        assertArrayEquals(new int[] {3}, t.copyTo(new int[1]));
      }
      // "WRAP" is NumPy's mode="wrap": modulo the dimension.
      var modulo =
          tf.gather(
              tf.constant(new int[] {1, 2, 3}),
              tf.constant(new long[] {-4, 4, 7}),
              tf.constant(0),
              org.ndgather.op.core.Gather.badIndicesPolicy("WRAP"));
      try (Tensor<Integer> t = modulo.asOutput().tensor()) {
        assertArrayEquals(new int[] {3, 2, 2}, t.copyTo(new int[3]));
      }
    }
  }

  /**
   * tf.nn.embedding_lookup's strategies: ids 0..4 of a 5-row table in 2 shards. "mod": shard
   * i % 2, row i / 2; "div": rows 0-2 in the first shard, 3-4 in the second. max_norm clips
   * a row of norm 5 to norm 1 (values rounded in float32, as TensorFlow computes them).
   */
  @Test
  void embeddingLookupSplitsAsTensorFlow() {
    try (EagerSession session = EagerSession.create()) {
      Ops tf = Ops.create(session);
      var ids = tf.constant(new long[] {4, 1, 3});
      var mod =
          tf.embeddingLookup(
              List.of(tf.constant(new float[][] {{0}, {2}, {4}}), tf.constant(new float[][] {{1}, {3}})),
              ids);
      var div =
          tf.embeddingLookup(
              List.of(tf.constant(new float[][] {{0}, {1}, {2}}), tf.constant(new float[][] {{3}, {4}})),
              ids,
              org.ndgather.op.core.EmbeddingLookup.partitionStrategy("div"));
      var clipped =
          tf.embeddingLookup(
              List.of(tf.constant(new float[][] {{3, 4}})),
              tf.constant(new int[] {0}),
              org.ndgather.op.core.EmbeddingLookup.maxNorm(1.0));
      try (Tensor<Float> m = mod.asOutput().tensor();
          Tensor<Float> d = div.asOutput().tensor();
          Tensor<Float> c = clipped.asOutput().tensor()) {
        assertArrayEquals(new float[][] {{4}, {1}, {3}}, m.copyTo(new float[3][1]));
        assertArrayEquals(new float[][] {{4}, {1}, {3}}, d.copyTo(new float[3][1]));
        float[][] row = c.copyTo(new float[1][2]);
        assertEquals(1.0, Math.hypot(row[0][0], row[0][1]), 1e-6);
      }
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class,
              () -> tf.embeddingLookup(List.of(tf.constant(new int[][] {{1}})), tf.constant(new int[] {0})));
      assertTrue(e.getMessage().contains("float"), e.getMessage());
    }
  }

  @Test
  void eightThreadsShareOneSession() throws Exception {
    try (Graph g = new Graph(); Session s = new Session(g)) {
      Ops tf = Ops.create(g);
      Placeholder<Long> ids = tf.placeholder(Long.class, Placeholder.shape(Shape.make(-1)));
      float[][] table = new float[1000][4];
      for (int r = 0; r < table.length; r++) {
        table[r][0] = r;
      }
      Gather<Float> rows = tf.gather(tf.constant(table), ids, tf.constant(0));
      ExecutorService pool = Executors.newFixedThreadPool(8);
      List<Future<Boolean>> results = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        final long id = t * 100 + 7;
        results.add(
            pool.submit(
                () -> {
                  for (int k = 0; k < 200; k++) {
                    try (Tensor<Long> in = Tensors.create(new long[] {id, id + 1});
                        Tensor<?> out = s.runner().feed(ids, in).fetch(rows).run().get(0)) {
                      float[][] got = out.expect(Float.class).copyTo(new float[2][4]);
                      if (got[0][0] != id || got[1][0] != id + 1) {
                        return false;
                      }
                    }
                  }
                  return true;
                }));
      }
      for (Future<Boolean> f : results) {
        assertTrue(f.get());
      }
      pool.shutdown();
    }
  }

  /** A dtype added to the core's table without a row in DataType fails here. */
  @Test
  void dataTypeHasARowForEveryDtypeOfTheCore() {
    java.util.Set<String> core = new java.util.TreeSet<>(List.of(Native.dtypeNames()));
    java.util.Set<String> java = new java.util.TreeSet<>();
    for (DataType t : DataType.values()) {
      java.add(t.nativeName());
    }
    core.remove("string"); // Java's STRING is the core's byte strings ("bytes"), as TF Java's.
    assertEquals(core, java);
  }

  @Test
  void everyDataTypeGathersItsRawBytes() {
    try (EagerSession session = EagerSession.create()) {
      Ops tf = Ops.create(session);
      for (DataType dt : DataType.values()) {
        if (dt == DataType.STRING) {
          continue;
        }
        int size = dt.byteSize();
        ByteBuffer b = ByteBuffer.allocateDirect(3 * size).order(ByteOrder.nativeOrder());
        for (int k = 0; k < 3 * size; k++) {
          b.put((byte) (dt == DataType.BOOL ? k % 2 : 16 * (k / size) + 1));
        }
        b.flip();
        try (Tensor<?> t = Tensor.create(dt.javaClass(), new long[] {3}, b);
            Tensor<?> out =
                tf.gather(tf.constant(t), tf.constant(new int[] {2, 0}), tf.constant(0))
                    .asOutput()
                    .tensor()) {
          assertEquals(dt, out.dataType(), dt.toString());
          ByteBuffer want = t.bytes();
          ByteBuffer got = out.bytes();
          for (int k = 0; k < size; k++) {
            assertEquals(want.get(2 * size + k), got.get(k), dt.toString());
            assertEquals(want.get(k), got.get(size + k), dt.toString());
          }
        }
      }
    }
  }
}
