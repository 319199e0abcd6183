package org.ndgather;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.ndgather.op.Ops;
import org.ndgather.op.Scope;
import org.ndgather.op.core.Constant;
import org.ndgather.op.core.GatherNd;
import org.ndgather.op.core.Placeholder;

/**
 * Every example of the seed page, TF Java's GatherNd (r1.x), written as that page writes it:
 * {@code GatherNd.create(scope, params, indices)}, then {@code output()}; in a graph run by a
 * session, and eagerly.
 */
class SeedExamplesTest {
  private static byte[][] strings(String... s) {
    byte[][] out = new byte[s.length][];
    for (int i = 0; i < s.length; i++) {
      out[i] = s[i].getBytes(StandardCharsets.UTF_8);
    }
    return out;
  }

  private static final byte[][][] MATRIX = {strings("a", "b"), strings("c", "d")};
  private static final byte[][][][] CUBE = {
    {strings("a0", "b0"), strings("c0", "d0")}, {strings("a1", "b1"), strings("c1", "d1")}
  };

  /** One example: params, indices, the expected values row-major, the expected shape. */
  private record Example(Object params, int[] indexShape, int[] indices, String expected, long[] shape) {}

  private static final List<Example> EXAMPLES =
      List.of(
          new Example(MATRIX, new int[] {2, 2}, new int[] {0, 0, 1, 1}, "a d", new long[] {2}),
          new Example(MATRIX, new int[] {2, 1}, new int[] {1, 0}, "c d a b", new long[] {2, 2}),
          new Example(CUBE, new int[] {1, 1}, new int[] {1}, "a1 b1 c1 d1", new long[] {1, 2, 2}),
          new Example(CUBE, new int[] {2, 2}, new int[] {0, 1, 1, 0}, "c0 d0 a1 b1", new long[] {2, 2}),
          new Example(CUBE, new int[] {2, 3}, new int[] {0, 0, 1, 1, 0, 1}, "b0 b1", new long[] {2}),
          new Example(MATRIX, new int[] {2, 1, 2}, new int[] {0, 0, 0, 1}, "a b", new long[] {2, 1}),
          new Example(MATRIX, new int[] {2, 1, 1}, new int[] {1, 0}, "c d a b", new long[] {2, 1, 2}),
          new Example(
              CUBE, new int[] {2, 1, 1}, new int[] {1, 0},
              "a1 b1 c1 d1 a0 b0 c0 d0", new long[] {2, 1, 2, 2}),
          new Example(
              CUBE, new int[] {2, 2, 2}, new int[] {0, 1, 1, 0, 0, 0, 1, 1},
              "c0 d0 a1 b1 a0 b0 c1 d1", new long[] {2, 2, 2}),
          new Example(
              CUBE, new int[] {2, 2, 3}, new int[] {0, 0, 1, 1, 0, 1, 0, 1, 1, 1, 1, 0},
              "b0 b1 d0 c1", new long[] {2, 2}));

  private static Tensor<Integer> indices(Example e) {
    long[] shape = new long[e.indexShape().length];
    for (int i = 0; i < shape.length; i++) {
      shape[i] = e.indexShape()[i];
    }
    return Tensor.create(shape, java.nio.IntBuffer.wrap(e.indices()));
  }

  private static String joined(Tensor<?> t) {
    byte[][] flat = new byte[t.numElements()][];
    copyStrings(t, flat);
    StringBuilder b = new StringBuilder();
    for (byte[] s : flat) {
      b.append(b.length() == 0 ? "" : " ").append(new String(s, StandardCharsets.UTF_8));
    }
    return b.toString();
  }

  private static void copyStrings(Tensor<?> t, byte[][] out) {
    byte[][] all = t.strings();
    System.arraycopy(all, 0, out, 0, all.length);
  }

  @Test
  void everySeedExampleInAGraph() {
    for (Example e : EXAMPLES) {
      try (Graph g = new Graph();
          Session s = new Session(g);
          Tensor<String> params = Tensor.create(e.params(), String.class);
          Tensor<Integer> idx = indices(e)) {
        Scope scope = new Scope(g);
        Placeholder<String> p = Placeholder.create(scope, String.class);
        Constant<Integer> i = Constant.create(scope, idx);
        GatherNd<String> op = GatherNd.create(scope, p, i);
        try (Tensor<?> out = s.runner().feed(p.asOutput(), params).fetch(op.output()).run().get(0)) {
          assertEquals(e.expected(), joined(out));
          assertArrayEquals(e.shape(), out.shape());
          assertEquals(DataType.STRING, out.dataType());
        }
      }
    }
  }

  @Test
  void everySeedExampleEagerly() {
    try (EagerSession session = EagerSession.create()) {
      Ops tf = Ops.create(session);
      for (Example e : EXAMPLES) {
        try (Tensor<String> params = Tensor.create(e.params(), String.class);
            Tensor<Integer> idx = indices(e)) {
          GatherNd<String> op = tf.gatherNd(tf.constant(params), tf.constant(idx));
          try (Tensor<String> out = op.asOutput().tensor()) {
            assertEquals(e.expected(), joined(out));
            assertArrayEquals(e.shape(), op.output().shape().dims());
          }
        }
      }
    }
  }
}
