package org.ndgather;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.ndgather.op.Ops;
import org.ndgather.op.Scope;
import org.ndgather.op.core.Placeholder;

/**
 * Handles that a failing call, a dropped session or a program could leak, hang on or free:
 * none may outlive their owners, block a close for ever, or be reached from outside the
 * package.
 */
class HandleSafetyTest {
  /** Waits until {@code g.close()}, begun on another thread, refuses new sessions. */
  private static void awaitClosing(Graph g) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() < deadline) {
      try {
        new Session(g).close();
      } catch (IllegalStateException e) {
        return;
      }
      Thread.sleep(5);
    }
    throw new AssertionError("Graph.close() never began");
  }

  @Test
  void gradientsRefusedByAClosingGraphLeaveNoHandles() throws Exception {
    Graph g = new Graph();
    Session s = new Session(g);
    Ops tf = Ops.create(g);
    List<Placeholder<Double>> xs = new ArrayList<>();
    List<Operand<Double>> ys = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      Placeholder<Double> x = tf.placeholder(Double.class);
      xs.add(x);
      ys.add(tf.gather(x, tf.constant(new int[] {0}), tf.constant(0)));
    }
    Thread closer = closing(g);
    awaitClosing(g);
    long before = Native.registryLive();
    for (int k = 0; k < 100; k++) {
      assertThrows(IllegalStateException.class, () -> tf.gradients(ys, xs));
    }
    long after = Native.registryLive();
    // Four gradients per call: without the fix, three leak each time (300 here).
    assertTrue(after <= before, "gradients leaked " + (after - before) + " native objects");
    s.close();
    closer.join(TimeUnit.SECONDS.toMillis(10));
    assertFalse(closer.isAlive());
  }

  private static void openAndDrop(Graph g) {
    Session forgotten = new Session(g);
    forgotten.runner();
  }

  @Test
  void aDroppedSessionLetsItsGraphClose() throws Exception {
    Graph g = new Graph();
    openAndDrop(g);
    openAndDrop(g);
    Thread closer = closing(g);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (closer.isAlive() && System.nanoTime() < deadline) {
      System.gc();
      closer.join(100);
    }
    assertFalse(closer.isAlive(), "Graph.close() waits for a Session nobody can close");
    assertThrows(IllegalStateException.class, () -> new Session(g));
  }

  @Test
  void aClosedSessionsCleanerDoesNotReleaseTheGraphTwice() throws Exception {
    Graph g = new Graph();
    Session closed = new Session(g);
    closed.close();
    closed = null;
    Session open = new Session(g);
    for (int i = 0; i < 5; i++) {
      System.gc();
      Thread.sleep(20);
    }
    // The closed session's cleaner must not count for the open one.
    assertGraphCloseWaitsFor(g, open);
  }

  /**
   * Asserts that {@code g.close()} waits while {@code s} is open, and returns once {@code s}
   * is closed.
   */
  static void assertGraphCloseWaitsFor(Graph g, Session s) throws InterruptedException {
    Thread closer = closing(g);
    closer.join(300);
    assertTrue(closer.isAlive(), "Graph.close() returned while a Session referred to the graph");
    s.close();
    closer.join(TimeUnit.SECONDS.toMillis(10));
    assertFalse(closer.isAlive());
  }

  /** A thread, started, that closes {@code g} (a daemon: a close that hangs ends no run). */
  private static Thread closing(Graph g) {
    Thread closer = new Thread(g::close);
    closer.setDaemon(true);
    closer.start();
    return closer;
  }

  /** Public methods of the API classes that take or return a {@code long}. */
  private static List<String> rawHandleMethods(Class<?>... classes) {
    List<String> found = new ArrayList<>();
    for (Class<?> c : classes) {
      for (Method m : c.getMethods()) {
        if (!Modifier.isPublic(m.getModifiers()) || m.getDeclaringClass() == Object.class) {
          continue;
        }
        boolean raw =
            m.getReturnType() == long.class
                || Arrays.asList(m.getParameterTypes()).contains(long.class);
        if (raw) {
          found.add(c.getSimpleName() + "." + m.getName());
        }
      }
    }
    return found;
  }

  @Test
  void noPublicMethodTakesOrReturnsANativeHandle() {
    List<String> raw =
        rawHandleMethods(
            NativeOps.class,
            Scope.class,
            Graph.class,
            EagerSession.class,
            ExecutionEnvironment.class,
            Session.class,
            Output.class,
            Operation.class);
    // noop returns its argument (a benchmark's baseline); the others take an axis or a
    // batch_dims: no handle among them.
    raw.sort(null);
    assertEquals(
        List.of(
            "NativeOps.gather", "NativeOps.gatherNd", "NativeOps.noop", "NativeOps.takeAlongAxis"),
        raw);
    // No program can make an environment whose "scope handle" is any number it likes.
    assertTrue(ExecutionEnvironment.class.isSealed());
  }
}
