package org.ndgather;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.nio.file.Files;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.ndgather.op.Ops;
import org.ndgather.op.core.Gradients;
import org.ndgather.op.core.Placeholder;

/**
 * tf.math's segment reductions against TensorFlow's own results: the core's committed case file
 * (crates/ndgather/tests/data/segment_cases.json, written with TensorFlow 2.21), every case
 * bit for bit with TensorFlow's messages, and the gradients through {@code tf.gradients}; all
 * through the typed facades over the generic builder.
 */
class SegmentTest {
  private static JsonArray cases() throws Exception {
    String text =
        Files.readString(
            ConformanceTest.root().resolve("crates/ndgather/tests/data/segment_cases.json"));
    return JsonParser.parseString(text).getAsJsonObject().getAsJsonArray("cases");
  }

  /** The case's op through its {@code tf.math} method. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private static Operand<?> segment(Ops tf, JsonObject c, Operand data, Operand ids) {
    Operand n =
        c.has("num_segments") && c.get("num_segments_dtype").getAsString().equals("int64")
            ? tf.constant(c.get("num_segments").getAsLong())
            : tf.constant(c.has("num_segments") ? c.get("num_segments").getAsInt() : 0);
    return switch (c.get("op").getAsString()) {
      case "segment_sum" -> tf.math.segmentSum(data, ids);
      case "segment_mean" -> tf.math.segmentMean(data, ids);
      case "segment_max" -> tf.math.segmentMax(data, ids);
      case "segment_min" -> tf.math.segmentMin(data, ids);
      case "segment_prod" -> tf.math.segmentProd(data, ids);
      case "unsorted_segment_sum" -> tf.math.unsortedSegmentSum(data, ids, n);
      case "unsorted_segment_mean" -> tf.math.unsortedSegmentMean(data, ids, n);
      case "unsorted_segment_sqrt_n" -> tf.math.unsortedSegmentSqrtN(data, ids, n);
      case "unsorted_segment_max" -> tf.math.unsortedSegmentMax(data, ids, n);
      case "unsorted_segment_min" -> tf.math.unsortedSegmentMin(data, ids, n);
      case "unsorted_segment_prod" -> tf.math.unsortedSegmentProd(data, ids, n);
      default -> throw new AssertionError("no such op: " + c.get("op"));
    };
  }

  @Test
  void everyTensorflowCaseBitForBit() throws Exception {
    int results = 0;
    int errors = 0;
    for (JsonElement e : cases()) {
      JsonObject c = e.getAsJsonObject();
      if (c.has("num_segments_shape")) {
        continue; // a num_segments that is not a scalar: TF Java refuses it too
      }
      try (EagerSession session = EagerSession.create();
          Tensor<?> d = TensorScatterTest.tensor(c.getAsJsonObject("data"));
          Tensor<?> i = TensorScatterTest.tensor(c.getAsJsonObject("segment_ids"))) {
        Ops tf = Ops.create(session);
        Operand<?> data = tf.constant(d);
        Operand<?> ids = tf.constant(i);
        if (c.has("output")) {
          try (Tensor<?> got = segment(tf, c, data, ids).asOutput().tensor();
              Tensor<?> want = TensorScatterTest.tensor(c.getAsJsonObject("output"))) {
            assertArrayEquals(want.shape(), got.shape(), c.toString());
            assertArrayEquals(
                TensorScatterTest.bytesOf(want), TensorScatterTest.bytesOf(got), c.toString());
          }
          results++;
        } else {
          IllegalArgumentException thrown =
              assertThrows(IllegalArgumentException.class, () -> segment(tf, c, data, ids));
          String message = c.getAsJsonObject("error").get("message").getAsString();
          assertEquals(message, thrown.getMessage(), c.toString());
          errors++;
        }
      }
    }
    assertTrue(results > 1500 && errors > 370, results + " results, " + errors + " errors");
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
          Tensor<?> d = TensorScatterTest.tensor(c.getAsJsonObject("data"));
          Tensor<?> i = TensorScatterTest.tensor(c.getAsJsonObject("segment_ids"));
          Tensor<?> up = TensorScatterTest.tensor(grad.getAsJsonObject("upstream"))) {
        Ops tf = Ops.create(g);
        Class<Object> type =
            (Class) DataType.fromNative(c.getAsJsonObject("data").get("dtype").getAsString())
                .javaClass();
        Placeholder<Object> data = tf.placeholder(type);
        Operand<?> out = segment(tf, c, data, tf.constant(i));
        Gradients grads =
            tf.gradients(List.of(out), List.of(data), Gradients.dx(List.of(tf.constant(up))));
        try (Tensor<?> got = s.runner().feed(data, d).fetch(grads.dy(0)).run().get(0);
            Tensor<?> want = TensorScatterTest.tensor(grad.getAsJsonObject("data"))) {
          assertArrayEquals(
              TensorScatterTest.bytesOf(want), TensorScatterTest.bytesOf(got), c.toString());
        }
        checked++;
      }
    }
    assertTrue(checked > 500, checked + " gradients");
  }

  @Test
  void theGenericBuilderReachesEveryOpAndSaysWhatIsWrong() {
    try (EagerSession session = EagerSession.create()) {
      Ops tf = Ops.create(session);
      var data = tf.constant(new float[] {1, 5, 2});
      var ids = tf.constant(new int[] {1, 1, 0});
      var max = tf.math.unsortedSegmentMax(data, ids, tf.constant(3));
      try (Tensor<Float> t = max.asOutput().tensor()) {
        assertArrayEquals(new float[] {2, 5, -Float.MAX_VALUE}, t.copyTo(new float[3]));
      }
      Operation built =
          tf.scope()
              .opBuilder("gather_segment")
              .addInput(tf.constant(new float[][] {{1, 2}, {3, 4}}))
              .addInput(tf.constant(new int[] {0, 1, 1}))
              .addInput(tf.constant(new int[] {1, 1, 0}))
              .setAttr("num_segments", 2)
              .setAttr("reduce", "sum")
              .build();
      try (Tensor<Float> t = built.<Float>output(0).tensor()) {
        assertArrayEquals(new float[][] {{3, 4}, {4, 6}}, t.copyTo(new float[2][2]));
      }
      IllegalArgumentException unknown =
          assertThrows(
              IllegalArgumentException.class, () -> tf.scope().opBuilder("segment_summ").build());
      assertTrue(unknown.getMessage().contains("segment_summ"), unknown.getMessage());
      IllegalArgumentException text =
          assertThrows(
              IllegalArgumentException.class,
              () ->
                  tf.scope()
                      .opBuilder("unsorted_segment_sum")
                      .addInput(data)
                      .addInput(ids)
                      .setAttr("num_segments", "three")
                      .build());
      assertEquals(
          "unsorted_segment_sum: attribute \"num_segments\" takes an integer, got 'three'",
          text.getMessage());
      IllegalArgumentException count =
          assertThrows(
              IllegalArgumentException.class,
              () -> tf.scope().opBuilder("segment_sum").addInput(data).build());
      assertTrue(count.getMessage().contains("takes 2 inputs, got 1"), count.getMessage());
      IllegalArgumentException two =
          assertThrows(
              IllegalArgumentException.class,
              () ->
                  tf.scope()
                      .opBuilder("segment_sum")
                      .addInputList(new Operand<?>[] {data, data})
                      .addInput(ids)
                      .build());
      assertTrue(two.getMessage().contains("takes one tensor, got 2"), two.getMessage());
    }
    try (Graph g = new Graph()) {
      Ops tf = Ops.create(g);
      // numSegments is read when the graph runs (FedAttributesTest), but must be a scalar.
      Placeholder<Integer> n = tf.placeholder(Integer.class, Placeholder.shape(Shape.make(2)));
      IllegalArgumentException vector =
          assertThrows(
              IllegalArgumentException.class,
              () ->
                  tf.math.unsortedSegmentSum(
                      tf.constant(new float[] {1}), tf.constant(new int[] {0}), n));
      assertEquals("num_segments should be a scalar, not shape [2]", vector.getMessage());
    }
  }
}
