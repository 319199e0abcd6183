package org.ndgather;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.ndgather.op.Ops;
import org.ndgather.op.core.Gather;
import org.ndgather.op.core.Placeholder;

/** Direct buffers read and written where they lie, beyond TF Java (which copies them). */
class ZeroCopyTest {
  private static ByteBuffer direct(int bytes) {
    return ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
  }

  private static ByteBuffer floats(float... values) {
    ByteBuffer b = direct(values.length * 4);
    b.asFloatBuffer().put(values);
    return b;
  }

  /** rows = gather(table, ids, axis 0), with table a placeholder. */
  private static final class Rows implements AutoCloseable {
    final Graph graph = new Graph();
    final Ops tf = Ops.create(graph);
    final Placeholder<Float> table = tf.placeholder(Float.class);
    final Placeholder<Integer> ids = tf.placeholder(Integer.class);
    final Gather<Float> rows = tf.gather(table, ids, tf.constant(0));
    final Session session = new Session(graph);

    @Override
    public void close() {
      session.close();
      graph.close();
    }
  }

  @Test
  void aDirectBufferIsReadWhereItLies() {
    ByteBuffer buffer = floats(1, 2, 3, 4, 5, 6);
    try (Rows g = new Rows();
        Tensor<Float> table = Tensor.create(Float.class, new long[] {3, 2}, buffer);
        Tensor<Integer> ids = Tensors.create(new int[] {2, 0})) {
      assertTrue(table.wrapsBuffer());
      // A write to the buffer after the tensor was made is seen by the next run: no copy.
      buffer.putFloat(4 * 4, 50f);
      try (Tensor<?> out = g.session.runner().feed(g.table, table).feed(g.ids, ids)
          .fetch(g.rows).run().get(0)) {
        assertArrayEquals(new float[][] {{50, 6}, {1, 2}}, out.copyTo(new float[2][2]));
      }
      assertArrayEquals(new float[][] {{1, 2}, {3, 4}, {50, 6}}, table.copyTo(new float[3][2]));
    }
  }

  @Test
  void boolAndMisalignedMemoryAreCopied() {
    ByteBuffer odd = direct(9);
    odd.position(1);
    odd.slice().order(ByteOrder.nativeOrder()).putFloat(0, 1.5f).putFloat(4, 2.5f);
    try (Tensor<Float> t = Tensor.create(Float.class, new long[] {2}, odd.slice())) {
      assertFalse(t.wrapsBuffer());
      assertArrayEquals(new float[] {1.5f, 2.5f}, t.copyTo(new float[2]));
    }
    ByteBuffer flags = direct(2).put(new byte[] {1, 0});
    flags.flip();
    try (Tensor<Boolean> t = Tensor.create(Boolean.class, new long[] {2}, flags)) {
      assertFalse(t.wrapsBuffer());
      assertArrayEquals(new boolean[] {true, false}, t.copyTo(new boolean[2]));
    }
    ByteBuffer two = direct(1).put((byte) 2);
    two.flip();
    assertThrows(IllegalArgumentException.class, () -> Tensor.create(Boolean.class, new long[] {1}, two));
  }

  @Test
  void aRunWritesItsResultIntoACallersDirectBuffer() {
    ByteBuffer result = direct(4 * 4);
    try (Rows g = new Rows();
        Tensor<Float> table = Tensor.create(Float.class, new long[] {3, 2}, floats(1, 2, 3, 4, 5, 6));
        Tensor<Integer> ids = Tensors.create(new int[] {2, 0});
        Tensor<Float> into = Tensor.create(Float.class, new long[] {2, 2}, result)) {
      List<Tensor<?>> out =
          g.session.runner().feed(g.table, table).feed(g.ids, ids).fetch(g.rows, into).run();
      assertSame(into, out.get(0));
      float[] written = new float[4];
      result.asFloatBuffer().get(written);
      assertArrayEquals(new float[] {5, 6, 1, 2}, written);

      // A bad index: TensorFlow's message, and the buffer is unchanged.
      try (Tensor<Integer> bad = Tensors.create(new int[] {1, 7})) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> g.session.runner().feed(g.table, table).feed(g.ids, bad).fetch(g.rows, into).run());
        assertEquals("indices[1] = 7 is not in [0, 3)", e.getMessage());
      }
      result.asFloatBuffer().get(written);
      assertArrayEquals(new float[] {5, 6, 1, 2}, written);

      // The wrong shape, a read-only buffer, a copy and a buffer the run reads are refused.
      try (Tensor<Float> three = Tensor.create(Float.class, new long[] {3, 2}, direct(24));
          Tensor<Float> readOnly =
              Tensor.create(Float.class, new long[] {2, 2}, direct(16).asReadOnlyBuffer());
          Tensor<Float> heap = Tensor.create(Float.class, new long[] {2, 2}, ByteBuffer.allocate(16))) {
        for (Tensor<Float> wrong : List.of(three, readOnly, heap, table)) {
          assertThrows(IllegalArgumentException.class,
              () -> g.session.runner().feed(g.table, table).feed(g.ids, ids).fetch(g.rows, wrong).run(),
              wrong.toString());
        }
      }
    }
  }

  private static long peakRssKiB() throws Exception {
    for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (line.startsWith("VmHWM:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", ""));
      }
    }
    return -1;
  }

  @Test
  void aTwoGibMappedTableIsGatheredWithoutReadingIt(@TempDir Path dir) throws Exception {
    assumeTrue(Files.exists(Path.of("/proc/self/status")), "peak RSS is read from /proc");
    int width = 64;
    long rows = (Integer.MAX_VALUE / 4L) / width; // a mapping holds at most 2 GiB - 1 bytes
    long bytes = rows * width * 4;
    int[] picked = {0, 7, (int) rows / 2, (int) rows - 1};
    Path file = dir.resolve("table.f32");
    try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
      raf.setLength(bytes); // sparse: the file's holes read as zeros
      for (int r : picked) {
        ByteBuffer row = ByteBuffer.allocate(width * 4).order(ByteOrder.nativeOrder());
        for (int c = 0; c < width; c++) {
          row.putFloat(r + c / 100f);
        }
        row.flip();
        raf.getChannel().write(row, (long) r * width * 4);
      }
    }
    try (FileChannel ch = FileChannel.open(file);
        Rows g = new Rows()) {
      MappedByteBuffer map = ch.map(FileChannel.MapMode.READ_ONLY, 0, bytes);
      map.order(ByteOrder.nativeOrder());
      long before = peakRssKiB();
      try (Tensor<Float> table = Tensor.create(Float.class, new long[] {rows, width}, map);
          Tensor<Integer> ids = Tensors.create(picked);
          Tensor<?> out =
              g.session.runner().feed(g.table, table).feed(g.ids, ids).fetch(g.rows).run().get(0)) {
        assertTrue(table.wrapsBuffer());
        assertEquals(bytes, table.numBytes());
        float[][] got = out.copyTo(new float[picked.length][width]);
        for (int k = 0; k < picked.length; k++) {
          for (int c = 0; c < width; c++) {
            assertEquals(picked[k] + c / 100f, got[k][c]);
          }
        }
      }
      long grown = peakRssKiB() - before;
      // A copy of the table would raise the peak by 2 GiB; its reads touch a few pages.
      assertTrue(grown < 64 * 1024, "peak RSS grew by " + grown + " KiB");
    }
  }
}
