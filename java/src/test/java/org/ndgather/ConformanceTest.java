package org.ndgather;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.ndgather.op.Ops;
import org.ndgather.op.core.Gather;
import org.ndgather.op.core.GatherNd;

/**
 * Every case of the TensorFlow 2.21 conformance file through the Java API (eager ops): values
 * bit for bit, and errors as {@code IllegalArgumentException} with TensorFlow's message.
 */
class ConformanceTest {
  /** The shape of a committed case file's array ({@code {"shape": [...], ...}}). */
  static long[] shape(com.google.gson.JsonObject v) {
    com.google.gson.JsonArray s = v.getAsJsonArray("shape");
    long[] out = new long[s.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = s.get(i).getAsLong();
    }
    return out;
  }

  static Path root() {
    return Path.of(System.getProperty("ndgather.root", ".."));
  }

  private static final String[] CLASSES = {
    "bool:" + "java.lang.Boolean", "int8:org.ndgather.types.Int8", "int16:org.ndgather.types.Int16",
    "int32:java.lang.Integer", "int64:java.lang.Long", "uint8:org.ndgather.types.UInt8",
    "uint16:org.ndgather.types.UInt16", "uint32:org.ndgather.types.UInt32",
    "uint64:org.ndgather.types.UInt64", "float16:org.ndgather.types.Float16",
    "float32:java.lang.Float", "float64:java.lang.Double",
    "complex64:org.ndgather.types.Complex64", "complex128:org.ndgather.types.Complex128",
    "string:java.lang.String"
  };

  static Class<?> classOf(String dtype) throws ClassNotFoundException {
    for (String c : CLASSES) {
      String[] p = c.split(":");
      if (p[0].equals(dtype)) {
        return Class.forName(p[1]);
      }
    }
    throw new IllegalArgumentException("no Java class for " + dtype);
  }

  /** IEEE half bits of a value that float16 holds exactly (the file's float16 data). */
  static short halfBits(double v) {
    if (Double.isNaN(v)) {
      return (short) 0x7e00;
    }
    int sign = (Double.doubleToRawLongBits(v) < 0) ? 0x8000 : 0;
    double a = Math.abs(v);
    if (Double.isInfinite(a)) {
      return (short) (sign | 0x7c00);
    }
    if (a == 0) {
      return (short) sign;
    }
    int exp = Math.getExponent(a);
    if (exp < -14) {
      return (short) (sign | (int) Math.round(a / Math.scalb(1.0, -24)));
    }
    int mantissa = (int) Math.round((a / Math.scalb(1.0, exp) - 1) * 1024);
    return (short) (sign | ((exp + 15) << 10) | mantissa);
  }

  /** A tensor from the file's {"dtype", "shape", "data"}. */
  @SuppressWarnings({"rawtypes", "unchecked"})
  static Tensor<?> tensor(JsonObject v) throws ClassNotFoundException {
    String dtype = v.get("dtype").getAsString();
    JsonArray shapeJson = v.getAsJsonArray("shape");
    long[] shape = new long[shapeJson.size()];
    for (int i = 0; i < shape.length; i++) {
      shape[i] = shapeJson.get(i).getAsLong();
    }
    JsonArray data = v.getAsJsonArray("data");
    Class type = classOf(dtype);
    if (dtype.equals("string")) {
      byte[][] values = new byte[data.size()][];
      for (int i = 0; i < values.length; i++) {
        values[i] = data.get(i).getAsString().getBytes(StandardCharsets.UTF_8);
      }
      return new Tensor<>(Native.tensorFromStrings(shape, values));
    }
    int size = DataType.fromClass(type).byteSize();
    ByteBuffer b = ByteBuffer.allocateDirect(data.size() * size).order(ByteOrder.nativeOrder());
    for (JsonElement x : data) {
      switch (dtype) {
        case "bool" -> b.put((byte) (x.getAsBoolean() ? 1 : 0));
        case "int8", "uint8" -> b.put((byte) x.getAsBigInteger().longValue());
        case "int16", "uint16" -> b.putShort((short) x.getAsBigInteger().longValue());
        case "int32", "uint32" -> b.putInt((int) x.getAsBigInteger().longValue());
        case "int64", "uint64" -> b.putLong(x.getAsBigInteger().longValue());
        case "float16" -> b.putShort(halfBits(number(x)));
        case "float32" -> b.putFloat((float) number(x));
        case "float64" -> b.putDouble(number(x));
        case "complex64" -> {
          b.putFloat((float) number(x.getAsJsonArray().get(0)));
          b.putFloat((float) number(x.getAsJsonArray().get(1)));
        }
        case "complex128" -> {
          b.putDouble(number(x.getAsJsonArray().get(0)));
          b.putDouble(number(x.getAsJsonArray().get(1)));
        }
        default -> throw new IllegalArgumentException(dtype);
      }
    }
    b.flip();
    return Tensor.create(type, shape, b);
  }

  static double number(JsonElement x) {
    if (x.isJsonPrimitive() && x.getAsJsonPrimitive().isString()) {
      return switch (x.getAsString()) {
        case "nan", "NaN" -> Double.NaN;
        case "inf", "Infinity" -> Double.POSITIVE_INFINITY;
        default -> Double.NEGATIVE_INFINITY;
      };
    }
    return x.getAsDouble();
  }

  static boolean same(Tensor<?> a, Tensor<?> b) {
    if (a.dataType() != b.dataType() || !Arrays.equals(a.shape(), b.shape())) {
      return false;
    }
    if (a.dataType() == DataType.STRING) {
      return Arrays.deepEquals(a.strings(), b.strings());
    }
    return a.bytes().equals(b.bytes());
  }

  @SuppressWarnings({"rawtypes", "unchecked"})
  static Tensor<?> run(Ops tf, JsonObject c) throws ClassNotFoundException {
    try (Tensor<?> params = tensor(c.getAsJsonObject("params"));
        Tensor<?> indices = tensor(c.getAsJsonObject("indices"))) {
      long bd = c.get("batch_dims").getAsLong();
      if (c.get("op").getAsString().equals("gather")) {
        // Python's axis=None: batch_dims, counted from the end of the indices if negative.
        long normalized = bd < 0 ? bd + indices.numDimensions() : bd;
        long axis = c.get("axis").isJsonNull() ? normalized : c.get("axis").getAsLong();
        Gather op =
            tf.gather(
                tf.constant((Tensor) params),
                tf.constant((Tensor) indices),
                tf.constant(axis),
                Gather.batchDims(bd));
        return op.asOutput().tensor();
      }
      GatherNd op =
          tf.gatherNd(
              tf.constant((Tensor) params), tf.constant((Tensor) indices), GatherNd.batchDims(bd));
      return op.asOutput().tensor();
    }
  }

  @Test
  void everyTensorFlowCase() throws IOException, ClassNotFoundException {
    List<String> lines =
        Files.readAllLines(root().resolve("crates/ndgather/tests/data/tf_cases.jsonl"));
    List<String> failures = new ArrayList<>();
    int count = 0;
    int exactMessages = 0;
    int errors = 0;
    try (EagerSession session = EagerSession.create()) {
      Ops tf = Ops.create(session);
      for (String line : lines) {
        if (line.isBlank()) {
          continue;
        }
        count++;
        JsonObject c = JsonParser.parseString(line).getAsJsonObject();
        String id = c.get("id").getAsString();
        boolean fails = c.get("error").isJsonPrimitive();
        try (Tensor<?> out = run(tf, c)) {
          if (fails) {
            failures.add(id + ": expected an error, got " + out);
            continue;
          }
          try (Tensor<?> expected = tensor(c.getAsJsonObject("expected"))) {
            if (!same(out, expected)) {
              failures.add(id + ": values differ");
            }
          }
        } catch (IllegalArgumentException e) {
          if (!fails) {
            failures.add(id + ": unexpected error " + e.getMessage());
            continue;
          }
          errors++;
          String tfMessage = c.get("error").getAsString();
          if (tfMessage.equals(e.getMessage())) {
            exactMessages++;
          } else if (!rewordedByDesign(c, tfMessage)) {
            failures.add(id + ": TF: " + tfMessage + " / ours: " + e.getMessage());
          }
        }
      }
    }
    assertEquals(1526, count);
    assertTrue(failures.isEmpty(), failures.size() + " cases fail:\n" + String.join("\n",
        failures.subList(0, Math.min(30, failures.size()))));
    System.out.printf(
        "conformance: %d cases, %d errors (%d with TensorFlow's exact message)%n",
        count, errors, exactMessages);
  }

  /**
   * The two messages the core words otherwise on purpose (as the Rust conformance test
   * allows): gather_nd with batch dimensions names the bad vector as the caller wrote it, and
   * a batch mismatch is ndgather's own error where TF fails inside a reshape.
   */
  static boolean rewordedByDesign(JsonObject c, String tf) {
    boolean reportsValue =
        tf.contains(" is not in [0, ") || tf.contains("does not index into param shape");
    boolean ndBatch = c.get("op").getAsString().equals("gather_nd")
        && c.get("batch_dims").getAsLong() > 0;
    return (ndBatch && reportsValue) || tf.startsWith("Input to reshape is a tensor with");
  }
}
