package org.ndgather;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.ndgather.op.Ops;
import org.ndgather.op.core.EmbeddingBag;
import org.ndgather.op.core.Gather;
import org.ndgather.op.core.Placeholder;

/**
 * Closing a tensor, a session or a graph on one thread while eight others run the session:
 * every run either gives the right values or throws a Java exception, and the JVM never dies
 * (a crash here ends Surefire's fork, which Maven reports as a failure). Also handles that
 * are forged, stale, of the wrong type, or of a closed graph.
 *
 * <p>The time limit is watched from another thread, so that a test stuck in a native call
 * (a lock freed under it) fails rather than hangs.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ConcurrentCloseTest {
  private static final int THREADS = 8;
  private static final int IDS = 65_536;
  private static final int ROWS = 1024;
  private static final int WIDTH = 4;
  private static final int ROUNDS = 40;

  /** What the closing thread closes. */
  private enum Target {
    TENSOR,
    SESSION,
    GRAPH
  }

  /** One round's graph: rows = gather(table, ids, 0), table[r][c] = r * WIDTH + c. */
  private static final class Model {
    final Graph graph = new Graph();
    final Ops tf = Ops.create(graph);
    final Placeholder<Integer> ids = tf.placeholder(Integer.class);
    final Gather<Float> rows;
    final Session session;

    Model() {
      float[][] table = new float[ROWS][WIDTH];
      for (int r = 0; r < ROWS; r++) {
        for (int c = 0; c < WIDTH; c++) {
          table[r][c] = r * WIDTH + c;
        }
      }
      rows = tf.gather(tf.constant(table), ids, tf.constant(0));
      session = new Session(graph);
    }
  }

  /** What the runners saw. */
  private static final class Tally {
    final AtomicInteger right = new AtomicInteger();
    final AtomicInteger refused = new AtomicInteger();
    final AtomicInteger inFlight = new AtomicInteger();
    final ConcurrentLinkedQueue<String> wrong = new ConcurrentLinkedQueue<>();
  }

  private static int[] randomIds(Random rng) {
    int[] ids = new int[IDS];
    for (int k = 0; k < IDS; k++) {
      ids[k] = rng.nextInt(ROWS);
    }
    return ids;
  }

  /** The ids as a tensor: a copy, or (where {@code direct}) a direct buffer read in place. */
  private static Tensor<Integer> idsTensor(int[] ids, boolean direct) {
    if (!direct) {
      return Tensors.create(ids);
    }
    ByteBuffer b = ByteBuffer.allocateDirect(IDS * 4).order(ByteOrder.nativeOrder());
    b.asIntBuffer().put(ids);
    Tensor<Integer> t = Tensor.create(Integer.class, new long[] {IDS}, b);
    assertTrue(t.wrapsBuffer());
    return t;
  }

  /** One run, checked: true if it ran, false if it threw an IllegalStateException. */
  private static boolean runOnce(Model m, Tensor<Integer> fed, int[] ids, FloatBuffer got, Tally tally) {
    tally.inFlight.incrementAndGet();
    try (Tensor<?> out = m.session.runner().feed(m.ids, fed).fetch(m.rows).run().get(0)) {
      got.clear();
      out.expect(Float.class).writeTo(got);
      for (int k = 0; k < IDS; k++) {
        for (int c = 0; c < WIDTH; c++) {
          float want = ids[k] * WIDTH + c;
          if (got.get(k * WIDTH + c) != want) {
            tally.wrong.add("row " + k + " col " + c + ": " + got.get(k * WIDTH + c) + " != " + want);
            return true;
          }
        }
      }
      tally.right.incrementAndGet();
      return true;
    } catch (IllegalStateException e) {
      tally.refused.incrementAndGet();
      return false;
    } catch (RuntimeException e) {
      tally.wrong.add("unexpected " + e);
      return false;
    } finally {
      tally.inFlight.decrementAndGet();
    }
  }

  /**
   * One round: eight runners, then {@code target} closed while runs are in flight; the
   * runners stop at their first refused run (every run after the close is refused).
   */
  private static Tally round(Target target, int round) throws Exception {
    Random rng = new Random(round);
    int[] ids = randomIds(rng);
    Model m = new Model();
    Tensor<Integer> fed = idsTensor(ids, round % 2 == 1);
    Tally tally = new Tally();
    CountDownLatch started = new CountDownLatch(THREADS);
    List<Thread> runners = new ArrayList<>();
    for (int t = 0; t < THREADS; t++) {
      Thread runner =
          new Thread(
              () -> {
                FloatBuffer got = FloatBuffer.allocate(IDS * WIDTH);
                started.countDown();
                while (runOnce(m, fed, ids, got, tally) && tally.wrong.isEmpty()) {
                  if (target == Target.GRAPH) {
                    // An Output's own native call, racing the graph's close.
                    try {
                      if (m.rows.asOutput().dataType() != DataType.FLOAT) {
                        tally.wrong.add("the output's dtype changed");
                      }
                    } catch (IllegalStateException e) {
                      tally.refused.incrementAndGet();
                    }
                  }
                }
              });
      runner.start();
      runners.add(runner);
    }
    started.await();
    // Close while runs are in flight, at a different point of a run in each round.
    while (tally.inFlight.get() == 0 || tally.right.get() < 2) {
      Thread.onSpinWait();
    }
    Thread.sleep(rng.nextInt(3));
    switch (target) {
      case TENSOR -> {
        fed.close();
        // The session goes on: a run with a fresh tensor still works.
        try (Tensor<Integer> again = idsTensor(ids, false)) {
          assertTrue(runOnce(m, again, ids, FloatBuffer.allocate(IDS * WIDTH), tally));
        }
        joinAll(runners);
        m.session.close();
        m.graph.close();
      }
      case SESSION -> {
        m.session.close();
        try (Tensor<Integer> one = Tensors.create(new int[] {0})) {
          assertThrows(
              IllegalStateException.class,
              () -> m.session.runner().feed(m.ids, one).fetch(m.rows).run());
        }
        joinAll(runners);
        m.graph.close();
        fed.close();
      }
      case GRAPH -> {
        AtomicLong closedAt = new AtomicLong();
        Thread closer =
            new Thread(
                () -> {
                  m.graph.close();
                  closedAt.set(System.nanoTime());
                });
        closer.start();
        // Graph.close() waits while a session refers to the graph; the runs go on meanwhile.
        int before = tally.right.get();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (tally.right.get() < before + THREADS && System.nanoTime() < deadline) {
          Thread.sleep(1);
        }
        assertEquals(0, closedAt.get(), "Graph.close() returned while a Session used the graph");
        assertTrue(tally.right.get() >= before + THREADS, "runs stopped while the graph was closing");
        m.session.close();
        closer.join(TimeUnit.SECONDS.toMillis(10));
        assertFalse(closer.isAlive(), "Graph.close() did not return after Session.close()");
        joinAll(runners);
        fed.close();
        assertThrows(IllegalStateException.class, () -> m.rows.asOutput().shape());
        assertThrows(IllegalStateException.class, () -> new Session(m.graph));
      }
      default -> throw new AssertionError(target);
    }
    assertEquals(List.of(), List.copyOf(tally.wrong));
    assertTrue(tally.refused.get() > 0, "no run was refused after the close");
    return tally;
  }

  private static void joinAll(List<Thread> threads) throws InterruptedException {
    for (Thread t : threads) {
      t.join(TimeUnit.SECONDS.toMillis(20));
      assertFalse(t.isAlive(), "a runner is stuck");
    }
  }

  private static void rounds(Target target) throws Exception {
    int right = 0;
    int refused = 0;
    for (int r = 0; r < ROUNDS; r++) {
      Tally t = round(target, r);
      right += t.right.get();
      refused += t.refused.get();
    }
    System.out.printf(
        "%s closed under runs, %d rounds: %d runs right, %d refused%n", target, ROUNDS, right, refused);
  }

  @Test
  void closingTheFedTensorUnderRuns() throws Exception {
    rounds(Target.TENSOR);
  }

  @Test
  void closingTheSessionUnderRuns() throws Exception {
    rounds(Target.SESSION);
  }

  @Test
  void closingTheGraphUnderRuns() throws Exception {
    rounds(Target.GRAPH);
  }

  /**
   * Two tensors over one direct buffer: runs writing through one never overlap runs reading
   * through the other (each read sees one whole write), as they share one lock.
   */
  @Test
  void twoTensorsOverOneBufferShareItsLock() throws Exception {
    // Large enough (4 MB) that a run's read and another's write overlap in time.
    int rows = 1024;
    int width = 1024;
    ByteBuffer memory = ByteBuffer.allocateDirect(rows * width * 4).order(ByteOrder.nativeOrder());
    int[] all = new int[rows];
    for (int r = 0; r < rows; r++) {
      all[r] = r;
    }
    // Two graphs, as a run holds its graph's lock: the reads and the writes run in parallel.
    try (Graph readGraph = new Graph();
        Graph writeGraph = new Graph();
        Session reader = new Session(readGraph);
        Session writer = new Session(writeGraph);
        Tensor<Float> readThrough = Tensor.create(Float.class, new long[] {rows, width}, memory);
        Tensor<Float> writeThrough =
            Tensor.create(Float.class, new long[] {rows, width}, memory.duplicate());
        Tensor<Float> ones = Tensors.create(filled(rows, width, 1));
        Tensor<Float> twos = Tensors.create(filled(rows, width, 2))) {
      assertTrue(readThrough.wrapsBuffer() && writeThrough.wrapsBuffer());
      Ops w = Ops.create(writeGraph);
      Placeholder<Float> source = w.placeholder(Float.class);
      Gather<Float> copy = w.gather(source, w.constant(all), w.constant(0));
      Ops r = Ops.create(readGraph);
      Placeholder<Float> table =
          r.placeholder(Float.class, Placeholder.shape(Shape.make(rows, width)));
      // Each column's sum over every row: rows times the value of one whole write.
      Operand<Float> sums =
          r.embeddingBag(
              List.of(table), r.constant(all), r.constant(new int[] {0}), EmbeddingBag.mode("sum"));
      Tally reads = new Tally();
      Tally wrote = new Tally();
      AtomicInteger writing = new AtomicInteger(THREADS / 2);
      List<Thread> threads = new ArrayList<>();
      for (int t = 0; t < THREADS; t++) {
        boolean writes = t % 2 == 0;
        Tensor<Float> value = t % 4 == 0 ? ones : twos;
        threads.add(
            new Thread(
                () -> {
                  float[][] got = new float[1][width];
                  // Writers until each has written 10 times and a read has met a write (a
                  // matter of timing, so they keep writing until then, up to 200 writes);
                  // readers until the writers stop, and once more.
                  int done = 0;
                  for (int k = 0;
                      k < 20_000
                          && (writes
                              ? done < 10 || (reads.refused.get() == 0 && done < 200)
                              : done < 1);
                      k++) {
                    done += writes || writing.get() > 0 ? 0 : 1;
                    try {
                      if (writes) {
                        writer.runner().feed(source, value).fetch(copy, writeThrough).run();
                        wrote.right.incrementAndGet();
                        done++;
                        continue;
                      }
                      try (Tensor<?> out =
                          reader.runner().feed(table, readThrough).fetch(sums).run().get(0)) {
                        out.expect(Float.class).copyTo(got);
                      }
                      for (float v : got[0]) {
                        if (v != got[0][0] || (v != 0 && v != rows && v != 2 * rows)) {
                          reads.wrong.add("a read saw a write half-done: " + v + ", " + got[0][0]);
                          return;
                        }
                      }
                      reads.right.incrementAndGet();
                      // Readers that never pause would keep the shared lock held between them
                      // and starve the writers.
                      Thread.yield();
                    } catch (IllegalStateException e) {
                      // The memory is busy: a run writes it, or reads it while this one writes.
                      // A state error (retry later), not a bad argument.
                      if (!e.getMessage().contains("in use by another run")) {
                        reads.wrong.add("unexpected " + e);
                        return;
                      }
                      (writes ? wrote : reads).refused.incrementAndGet();
                      Thread.yield();
                    } catch (RuntimeException e) {
                      reads.wrong.add("unexpected " + e);
                      return;
                    }
                  }
                  if (writes) {
                    writing.decrementAndGet();
                  }
                }));
      }
      threads.forEach(Thread::start);
      joinAll(threads);
      System.out.printf(
          "one buffer, two tensors: %d reads, %d writes, %d and %d refused as busy%n",
          reads.right.get(), wrote.right.get(), reads.refused.get(), wrote.refused.get());
      assertEquals(List.of(), List.copyOf(reads.wrong));
      assertTrue(reads.right.get() > 0 && wrote.right.get() > 0, "no run went through");
      // Nothing writes through the tensor the reads go through: only a lock shared with the
      // other tensor keeps them out while the writes run.
      assertTrue(reads.refused.get() > 0, "no read waited for a write through the other tensor");
    }
  }

  private static float[][] filled(int rows, int width, float value) {
    float[][] a = new float[rows][width];
    for (float[] row : a) {
      java.util.Arrays.fill(row, value);
    }
    return a;
  }

  @Test
  void graphCloseWaitsForItsSessions() throws Exception {
    Graph g = new Graph();
    HandleSafetyTest.assertGraphCloseWaitsFor(g, new Session(g));
    assertThrows(IllegalStateException.class, () -> new Session(g));
  }

  @Test
  void forgedStaleAndMistypedHandlesAreRefused() {
    // Forged: no object was ever given out under these.
    for (long forged : new long[] {1, -1, 0x1234_5678_9abcL, Long.MIN_VALUE, 0x7fff_ffff_0000_0001L}) {
      assertThrows(IllegalStateException.class, () -> Native.tensorShape(forged));
      assertThrows(IllegalStateException.class, () -> Native.outputShape(forged));
      assertThrows(IllegalStateException.class, () -> Native.tensorFree(forged));
    }
    // Stale: the handle of a closed tensor, even once a new object may reuse its slot.
    long stale;
    try (Tensor<Integer> t = Tensors.create(new int[] {1, 2, 3})) {
      stale = t.handle();
    }
    try (Tensor<Integer> fresh = Tensors.create(new int[] {4, 5})) {
      assertNotEquals(stale, fresh.handle());
      assertThrows(IllegalStateException.class, () -> Native.tensorBytes(stale));
      assertThrows(IllegalStateException.class, () -> Native.tensorFree(stale));
      assertArrayEquals(new long[] {2}, Native.tensorShape(fresh.handle()));
    }
    // Mistyped: a tensor's handle where an output's is expected, and the other way round.
    try (EagerSession session = EagerSession.create();
        Tensor<Integer> t = Tensors.create(new int[] {1})) {
      Output<Integer> o = Ops.create(session).constant(new int[] {7}).asOutput();
      IllegalStateException e =
          assertThrows(IllegalStateException.class, () -> Native.outputShape(t.handle()));
      assertTrue(e.getMessage().contains("Tensor"), e.getMessage());
      assertThrows(IllegalStateException.class, () -> Native.tensorBytes(o.handle()));
      assertThrows(IllegalStateException.class, () -> Native.outputFree(t.handle()));
      assertThrows(IllegalStateException.class, () -> Native.scopeFree(t.handle()));
      // The refused calls freed nothing.
      assertArrayEquals(new int[] {1}, t.copyTo(new int[1]));
      assertArrayEquals(new long[] {1}, o.shape().dims());
    }
  }

  @Test
  void anOutputsHandleAfterItsGraphClosedIsRefused() {
    Graph g = new Graph();
    Ops tf = Ops.create(g);
    Output<Float> c = tf.constant(new float[] {1, 2}).asOutput();
    long raw = c.handle();
    long scope = g.scopeHandle();
    g.close();
    assertThrows(IllegalStateException.class, c::shape);
    assertThrows(IllegalStateException.class, () -> Native.outputShape(raw));
    assertThrows(IllegalStateException.class, () -> Native.outputValue(raw));
    assertThrows(IllegalStateException.class, () -> Native.opPlaceholder(scope, DataType.FLOAT.nativeName(), null));
    assertThrows(IllegalStateException.class, () -> tf.constant(3));
    // An output of the closed graph, fed or fetched in a session of another graph.
    try (Graph other = new Graph();
        Session s = new Session(other);
        Tensor<Float> v = Tensors.create(new float[] {5})) {
      assertThrows(IllegalStateException.class, () -> s.runner().fetch(c).run());
      assertThrows(IllegalStateException.class, () -> s.runner().feed(c, v).run());
    }
  }
}
