package org.ndgather.bench;

import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.ndgather.Graph;
import org.ndgather.NativeOps;
import org.ndgather.Operand;
import org.ndgather.Session;
import org.ndgather.Tensor;
import org.ndgather.op.Ops;
import org.ndgather.op.core.Placeholder;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The quick sizes of bench/suite.json's float32 gather cases through the Java API (a graph
 * whose params are a constant, indices fed per run, the result a native tensor closed at
 * once), beside a plain Java loop over arrays, and the cost of a JNI call that does nothing.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@State(Scope.Benchmark)
public class GatherBench {
  /** Suite case: name, rows, row width, index count (gather along axis 0, int32 indices). */
  @Param({"embed:100000:128:20000", "rows_small:100000:4:200000", "elems_1d:1000000:1:1000000",
      "f64_wide:10000:1024:2000", "tiny:8:4:3"})
  public String suiteCase;

  private Graph graph;
  private Session session;
  private Placeholder<Integer> ids;
  private Operand<?> rows;
  private Tensor<Integer> indices;
  private float[] table;
  private int[] idx;
  private int width;
  private float[] out;

  @Setup(Level.Trial)
  public void setUp() {
    String[] p = suiteCase.split(":");
    int n = Integer.parseInt(p[1]);
    width = Integer.parseInt(p[2]);
    int k = Integer.parseInt(p[3]);
    Random rng = new Random(101);
    table = new float[n * width];
    for (int i = 0; i < table.length; i++) {
      table[i] = rng.nextFloat();
    }
    idx = new int[k];
    for (int i = 0; i < k; i++) {
      idx[i] = rng.nextInt(n);
    }
    out = new float[k * width];
    graph = new Graph();
    session = new Session(graph);
    Ops tf = Ops.create(graph);
    java.nio.ByteBuffer bytes =
        java.nio.ByteBuffer.allocate(table.length * 4).order(java.nio.ByteOrder.nativeOrder());
    bytes.asFloatBuffer().put(table);
    var params = tf.constant(Float.class, new long[] {n, width}, bytes);
    ids = tf.placeholder(Integer.class);
    rows = tf.gather(params, ids, tf.constant(0));
    indices = Tensor.create(new long[] {k}, java.nio.IntBuffer.wrap(idx));
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    indices.close();
    session.close();
    graph.close();
  }

  /** tf.gather through a Session run; the result stays native and is closed. */
  @Benchmark
  public long ndgather() {
    List<Tensor<?>> result = session.runner().feed(ids, indices).fetch(rows).run();
    try (Tensor<?> t = result.get(0)) {
      return t.numElements();
    }
  }

  /** The same rows copied by a Java loop from a flat float[] into a preallocated one. */
  @Benchmark
  public float[] javaLoop() {
    for (int i = 0; i < idx.length; i++) {
      System.arraycopy(table, idx[i] * width, out, i * width, width);
    }
    return out;
  }

  /** A JNI call that does nothing: the floor of any call into the native library. */
  @Benchmark
  public long jniNoop() {
    return NativeOps.noop(width);
  }
}
