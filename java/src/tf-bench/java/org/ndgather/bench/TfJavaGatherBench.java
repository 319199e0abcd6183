package org.ndgather.bench;

import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
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
import org.tensorflow.Graph;
import org.tensorflow.Operand;
import org.tensorflow.Session;
import org.tensorflow.Tensor;
import org.tensorflow.op.Ops;
import org.tensorflow.op.core.Placeholder;

/**
 * {@link GatherBench}'s cases and program, run by TF Java 1.15 itself: only the imports
 * differ ({@code mvn -Pbench,tf-oracle}).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@State(Scope.Benchmark)
public class TfJavaGatherBench {
  /** As GatherBench's. */
  @Param({"embed:100000:128:20000", "rows_small:100000:4:200000", "elems_1d:1000000:1:1000000",
      "f64_wide:10000:1024:2000", "tiny:8:4:3"})
  public String suiteCase;

  private Graph graph;
  private Session session;
  private Placeholder<Integer> ids;
  private Operand<?> rows;
  private Tensor<Integer> indices;

  @Setup(Level.Trial)
  public void setUp() {
    String[] p = suiteCase.split(":");
    int n = Integer.parseInt(p[1]);
    int width = Integer.parseInt(p[2]);
    int k = Integer.parseInt(p[3]);
    Random rng = new Random(101);
    float[] table = new float[n * width];
    for (int i = 0; i < table.length; i++) {
      table[i] = rng.nextFloat();
    }
    int[] idx = new int[k];
    for (int i = 0; i < k; i++) {
      idx[i] = rng.nextInt(n);
    }
    graph = new Graph();
    session = new Session(graph);
    Ops tf = Ops.create(graph);
    var params = tf.constant(new long[] {n, width}, FloatBuffer.wrap(table));
    ids = tf.placeholder(Integer.class);
    rows = tf.gather(params, ids, tf.constant(0));
    indices = Tensor.create(new long[] {k}, IntBuffer.wrap(idx));
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    indices.close();
    session.close();
    graph.close();
  }

  /** tf.gather through a Session run; the result stays native and is closed. */
  @Benchmark
  public long tfJava() {
    List<Tensor<?>> result = session.runner().feed(ids, indices).fetch(rows).run();
    try (Tensor<?> t = result.get(0)) {
      return t.numElements();
    }
  }
}
