package org.ndgather;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.ndgather.op.Ops;
import org.ndgather.op.core.EmbeddingBag;

/**
 * tf.embeddingBag against PyTorch's own results: the core's committed case file
 * (crates/ndgather/tests/data/embedding_bag_cases.json, written with torch), every case, bit
 * for bit, and PyTorch's messages for bad offsets and ids.
 */
class EmbeddingBagTest {
  private static JsonObject cases() throws Exception {
    String text =
        Files.readString(
            ConformanceTest.root().resolve("crates/ndgather/tests/data/embedding_bag_cases.json"));
    return JsonParser.parseString(text).getAsJsonObject();
  }

  /** A tensor of the case's values: float32 or float64 by its dtype, or int64. */
  private static Tensor<?> tensor(JsonObject v) {
    JsonArray data = v.getAsJsonArray("data");
    String dtype = v.get("dtype").getAsString();
    java.nio.ByteBuffer b =
        java.nio.ByteBuffer.allocate(data.size() * 8).order(java.nio.ByteOrder.nativeOrder());
    for (JsonElement e : data) {
      switch (dtype) {
        case "float32" -> b.putFloat((float) e.getAsDouble());
        case "float64" -> b.putDouble(e.getAsDouble());
        default -> b.putLong(e.getAsLong());
      }
    }
    b.flip();
    Class<?> type = switch (dtype) {
      case "float32" -> Float.class;
      case "float64" -> Double.class;
      default -> Long.class;
    };
    return Tensor.create(type, ConformanceTest.shape(v), b);
  }

  @Test
  @SuppressWarnings({"unchecked", "rawtypes"})
  void everyPytorchCaseBitForBit() throws Exception {
    int count = 0;
    for (JsonElement e : cases().getAsJsonArray("cases")) {
      JsonObject c = e.getAsJsonObject();
      try (EagerSession session = EagerSession.create();
          Tensor<?> weight = tensor(c.getAsJsonObject("weight"));
          Tensor<?> input = tensor(c.getAsJsonObject("input"))) {
        Ops tf = Ops.create(session);
        List<Operand<Object>> table = List.of((Operand<Object>) (Operand) tf.constant(weight));
        Operand<Long> ids = tf.constant((Tensor<Long>) input);
        Operand<Long> offsets = null;
        if (!c.get("offsets").isJsonNull()) {
          JsonArray o = c.getAsJsonArray("offsets");
          long[] off = new long[o.size()];
          for (int i = 0; i < off.length; i++) {
            off[i] = o.get(i).getAsLong();
          }
          offsets = tf.constant(off);
        }
        List<EmbeddingBag.Options> options = new ArrayList<>();
        options.add(EmbeddingBag.mode(c.get("mode").getAsString()));
        options.add(EmbeddingBag.includeLastOffset(c.get("include_last_offset").getAsBoolean()));
        if (!c.get("padding_idx").isJsonNull()) {
          options.add(EmbeddingBag.paddingIdx(c.get("padding_idx").getAsLong()));
        }
        if (c.has("max_norm")) {
          options.add(EmbeddingBag.maxNorm(c.get("max_norm").getAsDouble()));
        }
        Tensor<?> weights = null;
        if (!c.get("per_sample_weights").isJsonNull()) {
          weights = tensor(c.getAsJsonObject("per_sample_weights"));
          options.add(EmbeddingBag.perSampleWeights(tf.constant(weights)));
        }
        EmbeddingBag<Object> bag =
            tf.embeddingBag(table, ids, offsets, options.toArray(new EmbeddingBag.Options[0]));
        try (Tensor<?> got = bag.asOutput().tensor();
            Tensor<?> want = tensor(c.getAsJsonObject("output"))) {
          assertArrayEquals(want.shape(), got.shape());
          assertArrayEquals(want.bytes().array(), got.bytes().array(), c.get("mode").toString());
        } finally {
          if (weights != null) {
            weights.close();
          }
        }
      }
      count++;
    }
    assertEquals(124, count);
  }

  @Test
  void pytorchsMessages() throws Exception {
    for (JsonElement e : cases().getAsJsonArray("errors")) {
      JsonObject err = e.getAsJsonObject();
      String name = err.get("name").getAsString();
      long[][] call = switch (name) {
        case "offsets_not_from_zero" -> new long[][] {{1, 2}, {1}};
        case "offsets_past_the_end" -> new long[][] {{1, 2}, {0, 3}};
        case "id_out_of_range" -> new long[][] {{1, 7}, {0}};
        case "negative_id" -> new long[][] {{-1}, {0}};
        default -> null;
      };
      if (call == null) {
        continue; // the others are about Python arguments (ranks, optional tensors)
      }
      try (EagerSession session = EagerSession.create()) {
        Ops tf = Ops.create(session);
        IllegalArgumentException thrown =
            assertThrows(
                IllegalArgumentException.class,
                () ->
                    tf.embeddingBag(
                        List.of(tf.constant(new float[6][3])),
                        tf.constant(call[0]),
                        tf.constant(call[1])));
        assertEquals(err.get("message").getAsString(), thrown.getMessage(), name);
      }
    }
  }
}
