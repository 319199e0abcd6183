package org.ndgather;

import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.lang.reflect.Array;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.DoubleBuffer;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.nio.LongBuffer;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongFunction;
import org.ndgather.types.UInt8;

/**
 * A statically typed multi-dimensional array whose elements are of a type described by T, in
 * native memory owned by ndgather's core. As TF Java 1.15's {@code org.tensorflow.Tensor}.
 *
 * <p>A tensor's memory is freed by {@link #close()}; one never closed is freed by a {@link
 * Cleaner} once unreachable. A closed tensor throws {@code IllegalStateException} when used.
 *
 * <pre>{@code
 * try (Tensor<Integer> t = Tensor.create(new int[][] {{1, 2}, {3, 4}}, Integer.class)) {
 *   int[][] copy = t.copyTo(new int[2][2]);
 * }
 * }</pre>
 *
 * @param <T> the type of the elements
 */
public final class Tensor<T> implements AutoCloseable {
  static final Cleaner CLEANER = Cleaner.create();

  private final Handle state;
  private final Cleaner.Cleanable cleanable;
  private final DataType dtype;
  private final long[] shape;
  /** The direct buffer the tensor wraps (kept reachable while the tensor is), or null. */
  private final ByteBuffer wrapped;

  /** The native handle's owner: freed once, by {@code close()} or by the cleaner. */
  static final class Handle implements Runnable {
    final AtomicLong value;
    final FreeFn free;

    interface FreeFn {
      void free(long handle);
    }

    Handle(long value, FreeFn free) {
      this.value = new AtomicLong(value);
      this.free = free;
    }

    @Override
    public void run() {
      long h = value.getAndSet(0);
      if (h != 0) {
        free.free(h);
      }
    }

    /**
     * Frees {@code handles[from..]}, handles that no object owns yet because the call that
     * made them failed before it gave them owners; each is freed even if another fails.
     */
    static void freeAll(long[] handles, int from, FreeFn free) {
      for (int i = from; i < handles.length; i++) {
        try {
          free.free(handles[i]);
        } catch (RuntimeException e) {
          // Already closed: there is nothing left to free.
        }
      }
    }

    long get(String what) {
      long h = value.get();
      if (h == 0) {
        throw new IllegalStateException(what + " has been closed");
      }
      return h;
    }

    /**
     * {@code call} on the open handle, with {@code owner} (the object whose cleaner frees
     * the handle) kept reachable until it returns, so that the cleaner does not close the
     * handle under the call (the native side would refuse it, never crash).
     */
    <R> R call(Object owner, String what, LongFunction<R> call) {
      try {
        return call.apply(get(what));
      } finally {
        Reference.reachabilityFence(owner);
      }
    }
  }

  Tensor(long handle) {
    this(handle, null);
  }

  private Tensor(long handle, ByteBuffer wrapped) {
    this(handle, DataType.fromNative(Native.tensorDtype(handle)), Native.tensorShape(handle), wrapped);
  }

  /** A tensor whose dtype and shape the native call that made it returned with it. */
  Tensor(long handle, DataType dtype, long[] shape, ByteBuffer wrapped) {
    this.wrapped = wrapped;
    this.state = new Handle(handle, Native::tensorFree);
    this.cleanable = CLEANER.register(this, state);
    this.dtype = dtype;
    this.shape = shape;
  }

  /**
   * The tensors a native run returned, described in one array: per tensor its handle, the
   * core's dtype number, its rank, then its dimensions.
   */
  static void unpack(long[] packed, java.util.List<Tensor<?>> into) {
    int at = 0;
    try {
      while (at < packed.length) {
        long handle = packed[at];
        DataType dt = DataType.fromIndex((int) packed[at + 1]);
        int rank = (int) packed[at + 2];
        long[] dims = java.util.Arrays.copyOfRange(packed, at + 3, at + 3 + rank);
        // Moved on before the tensor is made: from here its cleaner owns the handle.
        at += 3 + rank;
        into.add(new Tensor<>(handle, dt, dims, null));
      }
    } finally {
      // A failure leaves the handles from `at` on with no owner: free them, or they leak.
      while (at < packed.length) {
        Handle.freeAll(new long[] {packed[at]}, 0, Native::tensorFree);
        at += 3 + (int) packed[at + 2];
      }
    }
  }

  long handle() {
    return state.get("Tensor");
  }

  /** Whether the tensor reads a direct buffer in place (false: it holds its own copy). */
  boolean wrapsBuffer() {
    return wrapped != null && state.call(this, "Tensor", Native::tensorIsDirect);
  }

  /**
   * Creates a Tensor from a Java object: a scalar ({@code Float}, {@code Double}, {@code
   * Integer}, {@code Long}, {@code Boolean}), a {@code byte[]} (a STRING scalar), or a
   * multi-dimensional array of them (rectangular).
   *
   * @param obj the value
   * @return a new tensor, of the type the object's elements are
   * @throws IllegalArgumentException if {@code obj} is not compatible with the type system
   */
  public static Tensor<?> create(Object obj) {
    return create(obj, inferType(obj));
  }

  /**
   * Creates a Tensor of type {@code type} from a Java object; a {@code byte} array becomes
   * UINT8 elements where {@code type} is {@link UInt8}.
   *
   * @param <T> the type of the elements
   * @param obj the value
   * @param type the class of the elements
   * @return a new tensor
   * @throws IllegalArgumentException if {@code obj} does not hold elements of {@code type}
   */
  @SuppressWarnings("unchecked")
  public static <T> Tensor<T> create(Object obj, Class<T> type) {
    if (obj == null) {
      throw new NullPointerException("obj must not be null");
    }
    DataType wanted = DataType.fromClass(type);
    DataType found = wanted == DataType.UINT8 ? DataType.UINT8 : DataType.fromClass(inferType(obj));
    if (found != wanted) {
      throw new IllegalArgumentException(
          "DataType of object does not match T (expected "
              + found
              + ", got "
              + wanted
              + ")");
    }
    long[] dims = shapeOf(obj, wanted);
    if (wanted == DataType.STRING) {
      byte[][] values = new byte[(int) count(dims)][];
      flattenStrings(obj, values, new int[] {0});
      return new Tensor<>(Native.tensorFromStrings(dims, values));
    }
    int size = wanted.byteSize();
    // A heap array, copied by the native side: no direct memory waiting for a collection.
    ByteBuffer buf = ByteBuffer.allocate(Math.toIntExact(count(dims) * size));
    buf.order(ByteOrder.nativeOrder());
    flatten(obj, wanted, buf);
    return new Tensor<>(Native.tensorFromArray(wanted.nativeName(), dims, buf.array()));
  }

  /**
   * Creates a Tensor of {@code type} and {@code shape} from the elements' bytes in native
   * byte order.
   *
   * <p>Beyond TF Java, which copies: a <em>direct</em> buffer is wrapped in place, without a
   * copy, so that a table larger than the heap (a {@code FileChannel.map} of a file) is
   * gathered from where it lies, and a run can write its result into one ({@link
   * Session.Runner#fetch(Operand, Tensor)}). The tensor then sees later writes to the buffer:
   * do not write it while a run reads it, and keep its memory valid while the tensor is open
   * (the tensor keeps the buffer object reachable). BOOL elements (whose bytes are checked)
   * and memory not aligned to the element type (a buffer sliced at an odd offset) are copied
   * instead, as are heap buffers.
   *
   * <p>Runs lock a wrapped buffer's address range (many readers, or one writer; a run that
   * finds it taken throws {@code IllegalStateException}: retry, or synchronize the runs). Two
   * limits that lock cannot cover are the caller's to keep:
   *
   * <ul>
   *   <li>The memory must stay valid while the tensor is open. A mapped file truncated (by
   *       any process) under its mapping, a buffer freed early by {@code Unsafe.invokeCleaner},
   *       or a {@code MemorySegment} whose arena was closed, makes a run that reads or writes
   *       it crash the JVM with SIGBUS or SIGSEGV: Java's own {@code get} on a truncated
   *       mapping gets an {@code InternalError}, but native code cannot recover. Keep the file
   *       at its length (and the arena open) until the tensor is closed.
   *   <li>Two separate mappings of one file region (two {@code FileChannel.map} calls) are
   *       different addresses, so the range lock cannot see that they alias: never feed a
   *       tensor over one mapping to a run that writes into a tensor over another mapping of
   *       the same region (nor run the two at once). Map a region once and slice that buffer.
   * </ul>
   *
   * @param <T> the type of the elements
   * @param type the class of the elements
   * @param shape the shape
   * @param data the bytes, from its position to its limit
   * @return a new tensor
   * @throws IllegalArgumentException if the bytes do not make the shape's elements
   */
  public static <T> Tensor<T> create(Class<T> type, long[] shape, ByteBuffer data) {
    DataType dt = DataType.fromClass(type);
    if (dt == DataType.STRING) {
      throw new IllegalArgumentException(
          "STRING tensors are made from byte[] values: use Tensor.create(Object)");
    }
    long needed = count(shape) * dt.byteSize();
    if (data.remaining() != needed) {
      throw new IllegalArgumentException(
          "buffer with "
              + data.remaining()
              + " bytes is not compatible with a Tensor with shape "
              + Arrays.toString(shape)
              + " and type "
              + dt);
    }
    ByteBuffer bytes = data.slice();
    if (bytes.isDirect()) {
      long handle =
          Native.tensorWrap(dt.nativeName(), shape.clone(), bytes, !bytes.isReadOnly());
      return new Tensor<>(handle, bytes);
    }
    byte[] copy = new byte[bytes.remaining()];
    bytes.get(copy);
    return new Tensor<>(Native.tensorFromArray(dt.nativeName(), shape.clone(), copy));
  }

  /** A FLOAT tensor of {@code shape} from a buffer's remaining values. */
  public static Tensor<Float> create(long[] shape, FloatBuffer data) {
    ByteBuffer b = heap(data.remaining() * 4L);
    b.asFloatBuffer().put(data.duplicate());
    return create(Float.class, shape, b);
  }

  /** A DOUBLE tensor of {@code shape} from a buffer's remaining values. */
  public static Tensor<Double> create(long[] shape, DoubleBuffer data) {
    ByteBuffer b = heap(data.remaining() * 8L);
    b.asDoubleBuffer().put(data.duplicate());
    return create(Double.class, shape, b);
  }

  /** An INT32 tensor of {@code shape} from a buffer's remaining values. */
  public static Tensor<Integer> create(long[] shape, IntBuffer data) {
    ByteBuffer b = heap(data.remaining() * 4L);
    b.asIntBuffer().put(data.duplicate());
    return create(Integer.class, shape, b);
  }

  /** An INT64 tensor of {@code shape} from a buffer's remaining values. */
  public static Tensor<Long> create(long[] shape, LongBuffer data) {
    ByteBuffer b = heap(data.remaining() * 8L);
    b.asLongBuffer().put(data.duplicate());
    return create(Long.class, shape, b);
  }

  private static ByteBuffer heap(long bytes) {
    return ByteBuffer.allocate(Math.toIntExact(bytes)).order(ByteOrder.nativeOrder());
  }

  /**
   * This tensor as a {@code Tensor<U>}.
   *
   * @param <U> the type asked for
   * @param type its class
   * @return this tensor
   * @throws IllegalArgumentException if the tensor's elements are not of {@code type}
   */
  @SuppressWarnings("unchecked")
  public <U> Tensor<U> expect(Class<U> type) {
    DataType dt = DataType.fromClass(type);
    if (dt != dtype) {
      throw new IllegalArgumentException(
          "Cannot cast from tensor of " + dtype + " to tensor of " + dt);
    }
    return (Tensor<U>) this;
  }

  /**
   * Frees the tensor's native memory; later uses throw {@code IllegalStateException}. A run
   * (or other call) on another thread that is using the tensor already goes on with it: its
   * memory is freed when that call returns.
   */
  @Override
  public void close() {
    cleanable.clean();
  }

  /** The type of the elements. */
  public DataType dataType() {
    return dtype;
  }

  /** The number of dimensions (0 for a scalar). */
  public int numDimensions() {
    return shape.length;
  }

  /** The size of each dimension. */
  public long[] shape() {
    return shape.clone();
  }

  /** The number of elements. */
  public int numElements() {
    return Math.toIntExact(count(shape));
  }

  /** The size of the elements' data in bytes (for STRING, of the strings together). */
  public int numBytes() {
    if (dtype == DataType.STRING) {
      long n = 0;
      for (byte[] s : strings()) {
        n += s.length;
      }
      return Math.toIntExact(n);
    }
    return Math.toIntExact(count(shape) * dtype.byteSize());
  }

  /** The value of a FLOAT scalar. */
  public float floatValue() {
    return scalar(DataType.FLOAT).getFloat(0);
  }

  /** The value of a DOUBLE scalar. */
  public double doubleValue() {
    return scalar(DataType.DOUBLE).getDouble(0);
  }

  /** The value of an INT32 scalar. */
  public int intValue() {
    return scalar(DataType.INT32).getInt(0);
  }

  /** The value of an INT64 scalar. */
  public long longValue() {
    return scalar(DataType.INT64).getLong(0);
  }

  /** The value of a BOOL scalar. */
  public boolean booleanValue() {
    return scalar(DataType.BOOL).get(0) != 0;
  }

  /** The value of a STRING scalar. */
  public byte[] bytesValue() {
    check(DataType.STRING, true);
    return strings()[0];
  }

  private ByteBuffer scalar(DataType wanted) {
    check(wanted, true);
    return bytes();
  }

  private void check(DataType wanted, boolean scalar) {
    handle();
    if (scalar && shape.length != 0) {
      throw new IllegalArgumentException(
          "Tensor is not a scalar: it has shape " + Arrays.toString(shape));
    }
    if (dtype != wanted) {
      throw new IllegalArgumentException("Tensor is not a " + wanted + " tensor: it is " + dtype);
    }
  }

  /** The elements' bytes, row-major, in native order. */
  ByteBuffer bytes() {
    return ByteBuffer.wrap(state.call(this, "Tensor", Native::tensorBytes))
        .order(ByteOrder.nativeOrder());
  }

  byte[][] strings() {
    return state.call(this, "Tensor", Native::tensorStrings);
  }

  /**
   * Copies the elements into a Java array of the tensor's shape and element type, and
   * returns it.
   *
   * @param <U> the array's type
   * @param dst the array
   * @return {@code dst}
   * @throws IllegalArgumentException if the array's shape or type does not match
   */
  public <U> U copyTo(U dst) {
    handle();
    if (dst == null) {
      throw new NullPointerException("dst must not be null");
    }
    long[] dims = shapeOf(dst, dtype);
    DataType found = dtype == DataType.UINT8 && baseComponent(dst.getClass()) == byte.class
        ? DataType.UINT8
        : DataType.fromClass(inferType(dst));
    if (found != dtype) {
      throw new IllegalArgumentException(
          "cannot copy Tensor with " + dtype + " elements into an object with " + found);
    }
    if (!Arrays.equals(dims, shape)) {
      throw new IllegalArgumentException(
          "cannot copy Tensor with shape "
              + Arrays.toString(shape)
              + " into object with shape "
              + Arrays.toString(dims));
    }
    if (dtype == DataType.STRING) {
      unflattenStrings(dst, strings(), new int[] {0});
    } else {
      unflatten(dst, dtype, bytes());
    }
    return dst;
  }

  /** Writes the elements of a FLOAT tensor into {@code dst}. */
  public void writeTo(FloatBuffer dst) {
    check(DataType.FLOAT, false);
    dst.put(bytes().asFloatBuffer());
  }

  /** Writes the elements of a DOUBLE tensor into {@code dst}. */
  public void writeTo(DoubleBuffer dst) {
    check(DataType.DOUBLE, false);
    dst.put(bytes().asDoubleBuffer());
  }

  /** Writes the elements of an INT32 tensor into {@code dst}. */
  public void writeTo(IntBuffer dst) {
    check(DataType.INT32, false);
    dst.put(bytes().asIntBuffer());
  }

  /** Writes the elements of an INT64 tensor into {@code dst}. */
  public void writeTo(LongBuffer dst) {
    check(DataType.INT64, false);
    dst.put(bytes().asLongBuffer());
  }

  /** Writes the elements' bytes (native order) into {@code dst}. */
  public void writeTo(ByteBuffer dst) {
    handle();
    if (dtype == DataType.STRING) {
      throw new IllegalArgumentException("STRING tensors are read with copyTo or bytesValue");
    }
    dst.put(bytes());
  }

  @Override
  public String toString() {
    return String.format("%s tensor with shape %s", dtype, Arrays.toString(shape));
  }

  // Java objects to and from elements.

  static long count(long[] shape) {
    long n = 1;
    for (long d : shape) {
      if (d < 0) {
        throw new IllegalArgumentException("a shape has a negative size: " + Arrays.toString(shape));
      }
      n = Math.multiplyExact(n, d);
    }
    return n;
  }

  private static Class<?> baseComponent(Class<?> c) {
    while (c.isArray()) {
      c = c.getComponentType();
    }
    return c;
  }

  private static Class<?> inferType(Object o) {
    if (o == null) {
      throw new NullPointerException("obj must not be null");
    }
    Class<?> c = o.getClass();
    if (c == byte[].class) {
      return String.class;
    }
    int rank = 0;
    while (c.isArray()) {
      c = c.getComponentType();
      rank++;
    }
    if (c == byte.class && rank > 1) {
      return String.class;
    }
    if (c == float.class || c == Float.class) {
      return Float.class;
    } else if (c == double.class || c == Double.class) {
      return Double.class;
    } else if (c == int.class || c == Integer.class) {
      return Integer.class;
    } else if (c == long.class || c == Long.class) {
      return Long.class;
    } else if (c == boolean.class || c == Boolean.class) {
      return Boolean.class;
    }
    throw new IllegalArgumentException("cannot create Tensors of type " + c.getName());
  }

  /** The shape of a rectangular array (strings' byte[] and UINT8's byte are elements). */
  private static long[] shapeOf(Object o, DataType dt) {
    int rank = 0;
    for (Class<?> c = o.getClass(); c.isArray(); c = c.getComponentType()) {
      rank++;
    }
    if (dt == DataType.STRING) {
      rank--;
    }
    long[] dims = new long[rank];
    Object first = o;
    for (int level = 0; level < rank; level++) {
      dims[level] = Array.getLength(first);
      if (dims[level] == 0 || level + 1 == rank) {
        break;
      }
      first = Array.get(first, 0);
      if (first == null) {
        throw new NullPointerException("an element of the array is null");
      }
    }
    checkRectangular(o, 0, dims);
    return dims;
  }

  private static void checkRectangular(Object o, int level, long[] dims) {
    if (level == dims.length) {
      return;
    }
    if (o == null) {
      throw new NullPointerException("an element of the array is null");
    }
    int n = Array.getLength(o);
    if (n != dims[level]) {
      throw new IllegalArgumentException("cannot create non-rectangular Tensor");
    }
    for (int i = 0; i < n && level + 1 < dims.length; i++) {
      checkRectangular(Array.get(o, i), level + 1, dims);
    }
  }

  private static void flatten(Object o, DataType dt, ByteBuffer out) {
    Class<?> c = o.getClass();
    if (!c.isArray()) {
      put(o, dt, out);
      return;
    }
    Class<?> item = c.getComponentType();
    if (item == float.class) {
      for (float v : (float[]) o) {
        out.putFloat(v);
      }
    } else if (item == double.class) {
      for (double v : (double[]) o) {
        out.putDouble(v);
      }
    } else if (item == int.class) {
      for (int v : (int[]) o) {
        out.putInt(v);
      }
    } else if (item == long.class) {
      for (long v : (long[]) o) {
        out.putLong(v);
      }
    } else if (item == boolean.class) {
      for (boolean v : (boolean[]) o) {
        out.put((byte) (v ? 1 : 0));
      }
    } else if (item == byte.class) {
      out.put((byte[]) o);
    } else {
      for (int i = 0, n = Array.getLength(o); i < n; i++) {
        flatten(Array.get(o, i), dt, out);
      }
    }
  }

  private static void put(Object v, DataType dt, ByteBuffer out) {
    switch (dt) {
      case FLOAT -> out.putFloat((Float) v);
      case DOUBLE -> out.putDouble((Double) v);
      case INT32 -> out.putInt((Integer) v);
      case INT64 -> out.putLong((Long) v);
      case BOOL -> out.put((byte) (((Boolean) v) ? 1 : 0));
      case UINT8 -> out.put((Byte) v);
      default -> throw new IllegalArgumentException("cannot create Tensors of " + dt);
    }
  }

  private static void flattenStrings(Object o, byte[][] out, int[] at) {
    if (o instanceof byte[] b) {
      out[at[0]++] = b;
      return;
    }
    if (o == null) {
      throw new NullPointerException("a string of the array is null");
    }
    for (int i = 0, n = Array.getLength(o); i < n; i++) {
      flattenStrings(Array.get(o, i), out, at);
    }
  }

  private static void unflatten(Object o, DataType dt, ByteBuffer in) {
    Class<?> item = o.getClass().getComponentType();
    if (item == float.class) {
      float[] a = (float[]) o;
      for (int i = 0; i < a.length; i++) {
        a[i] = in.getFloat();
      }
    } else if (item == double.class) {
      double[] a = (double[]) o;
      for (int i = 0; i < a.length; i++) {
        a[i] = in.getDouble();
      }
    } else if (item == int.class) {
      int[] a = (int[]) o;
      for (int i = 0; i < a.length; i++) {
        a[i] = in.getInt();
      }
    } else if (item == long.class) {
      long[] a = (long[]) o;
      for (int i = 0; i < a.length; i++) {
        a[i] = in.getLong();
      }
    } else if (item == boolean.class) {
      boolean[] a = (boolean[]) o;
      for (int i = 0; i < a.length; i++) {
        a[i] = in.get() != 0;
      }
    } else if (item == byte.class) {
      in.get((byte[]) o);
    } else {
      for (int i = 0, n = Array.getLength(o); i < n; i++) {
        unflatten(Array.get(o, i), dt, in);
      }
    }
  }

  private static void unflattenStrings(Object o, byte[][] in, int[] at) {
    Class<?> item = o.getClass().getComponentType();
    if (item == byte[].class) {
      byte[][] a = (byte[][]) o;
      for (int i = 0; i < a.length; i++) {
        a[i] = in[at[0]++];
      }
      return;
    }
    for (int i = 0, n = Array.getLength(o); i < n; i++) {
      unflattenStrings(Array.get(o, i), in, at);
    }
  }
}
