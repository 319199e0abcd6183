package org.ndgather;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.ndgather.op.Ops;
import org.ndgather.op.core.Gradients;
import org.ndgather.op.core.Placeholder;
import org.ndgather.op.core.TensorScatterOp;

/**
 * tf.tensorScatterUpdate/Add/Sub/Min/Max against TensorFlow's own results: the core's committed
 * case file (crates/ndgather/tests/data/tensor_scatter_cases.json, written with TensorFlow
 * 2.21), every case of a fixed-width type, bit for bit, TensorFlow's messages, and its
 * gradients through {@code tf.gradients}.
 */
class TensorScatterTest {
  private static JsonArray cases() throws Exception {
    String text =
        Files.readString(
            ConformanceTest.root()
                .resolve("crates/ndgather/tests/data/tensor_scatter_cases.json"));
    return JsonParser.parseString(text).getAsJsonObject().getAsJsonArray("cases");
  }

  /** The case's array: its little-endian bytes, as a tensor of its type (this machine's order). */
  static Tensor<?> tensor(JsonObject v) {
    byte[] bytes = HexFormat.of().parseHex(v.get("hex").getAsString());
    ByteBuffer b = ByteBuffer.allocate(bytes.length).order(ByteOrder.nativeOrder());
    b.put(bytes).flip();
    Class<?> type = DataType.fromNative(v.get("dtype").getAsString()).javaClass();
    return Tensor.create(type, ConformanceTest.shape(v), b);
  }

  static byte[] bytesOf(Tensor<?> t) {
    ByteBuffer b = t.bytes();
    byte[] out = new byte[b.remaining()];
    b.get(out);
    return out;
  }

  private static Operand<Object> scatter(
      Ops tf, String kind, Operand<Object> t, Operand<Object> i, Operand<Object> u, String policy) {
    @SuppressWarnings({"unchecked", "rawtypes"})
    Operand<Number> idx = (Operand) i;
    TensorScatterOp.Options o = TensorScatterOp.badIndicesPolicy(policy);
    return switch (kind) {
      case "update" -> tf.tensorScatterUpdate(t, idx, u, o);
      case "add" -> tf.tensorScatterAdd(t, idx, u, o);
      case "sub" -> tf.tensorScatterSub(t, idx, u, o);
      case "min" -> tf.tensorScatterMin(t, idx, u, o);
      default -> tf.tensorScatterMax(t, idx, u, o);
    };
  }

  @Test
  @SuppressWarnings({"unchecked", "rawtypes"})
  void everyTensorflowCaseBitForBit() throws Exception {
    int results = 0;
    int errors = 0;
    for (JsonElement e : cases()) {
      JsonObject c = e.getAsJsonObject();
      if (c.getAsJsonObject("tensor").has("strings")) {
        continue;
      }
      try (EagerSession session = EagerSession.create();
          Tensor<?> t = tensor(c.getAsJsonObject("tensor"));
          Tensor<?> i = tensor(c.getAsJsonObject("indices"));
          Tensor<?> u = tensor(c.getAsJsonObject("updates"))) {
        Ops tf = Ops.create(session);
        Operand<Object> ct = (Operand) tf.constant(t);
        Operand<Object> ci = (Operand) tf.constant(i);
        Operand<Object> cu = (Operand) tf.constant(u);
        String kind = c.get("kind").getAsString();
        String policy = c.get("bad_indices").getAsString();
        if (c.has("output")) {
          Operand<Object> out = scatter(tf, kind, ct, ci, cu, policy);
          try (Tensor<?> got = out.asOutput().tensor();
              Tensor<?> want = tensor(c.getAsJsonObject("output"))) {
            assertArrayEquals(want.shape(), got.shape());
            assertArrayEquals(bytesOf(want), bytesOf(got), c.toString());
          }
          results++;
        } else {
          IllegalArgumentException thrown =
              assertThrows(
                  IllegalArgumentException.class, () -> scatter(tf, kind, ct, ci, cu, policy));
          String message = c.getAsJsonObject("error").get("message").getAsString();
          int cut = message.indexOf(", Tindices");
          String expected = cut < 0 ? message : message.substring(0, cut);
          assertTrue(thrown.getMessage().startsWith(expected), thrown.getMessage());
          errors++;
        }
      }
    }
    assertTrue(results > 1000 && errors > 250, results + " results, " + errors + " errors");
  }

  @Test
  @SuppressWarnings({"unchecked", "rawtypes"})
  void tensorflowGradientsThroughAGraph() throws Exception {
    int checked = 0;
    for (JsonElement e : cases()) {
      JsonObject c = e.getAsJsonObject();
      if (!c.has("grad")) {
        continue;
      }
      JsonObject grad = c.getAsJsonObject("grad");
      try (Graph g = new Graph();
          Session s = new Session(g);
          Tensor<?> t = tensor(c.getAsJsonObject("tensor"));
          Tensor<?> i = tensor(c.getAsJsonObject("indices"));
          Tensor<?> u = tensor(c.getAsJsonObject("updates"));
          Tensor<?> up = tensor(grad.getAsJsonObject("upstream"))) {
        Ops tf = Ops.create(g);
        Class<Object> type = (Class) DataType.fromNative(
            c.getAsJsonObject("tensor").get("dtype").getAsString()).javaClass();
        Placeholder<Object> pt = tf.placeholder(type);
        Placeholder<Object> pu = tf.placeholder(type);
        Operand<Object> out =
            scatter(tf, c.get("kind").getAsString(), pt, (Operand) tf.constant(i), pu, "");
        Operand<?> upstream = tf.constant(up);
        Gradients grads = tf.gradients(List.of(out), List.of(pt, pu), Gradients.dx(List.of(upstream)));
        List<Tensor<?>> got =
            s.runner().feed(pt, t).feed(pu, u).fetch(grads.dy(0)).fetch(grads.dy(1)).run();
        try (Tensor<?> dt = got.get(0);
            Tensor<?> du = got.get(1);
            Tensor<?> wt = tensor(grad.getAsJsonObject("tensor"));
            Tensor<?> wu = tensor(grad.getAsJsonObject("updates"))) {
          assertArrayEquals(bytesOf(wt), bytesOf(dt), c.toString());
          assertArrayEquals(bytesOf(wu), bytesOf(du), c.toString());
        }
        checked++;
      }
    }
    assertTrue(checked >= 150, checked + " gradients");
  }

  @Test
  void javadocExample() {
    try (EagerSession session = EagerSession.create()) {
      Ops tf = Ops.create(session);
      var table = tf.constant(new float[4][2]);
      var out =
          tf.tensorScatterAdd(
              table,
              tf.constant(new int[][] {{1}, {3}, {1}}),
              tf.constant(new float[][] {{1, 2}, {3, 4}, {5, 6}}));
      try (Tensor<Float> t = out.asOutput().tensor()) {
        assertArrayEquals(
            new float[][] {{0, 0}, {6, 8}, {0, 0}, {3, 4}}, t.copyTo(new float[4][2]));
      }
      IllegalArgumentException bad =
          assertThrows(
              IllegalArgumentException.class,
              () ->
                  tf.tensorScatterUpdate(
                      table, tf.constant(new int[][] {{9}}), tf.constant(new float[][] {{1, 2}})));
      assertEquals("indices[0] = [9] does not index into shape [4,2]", bad.getMessage());
    }
  }
}
