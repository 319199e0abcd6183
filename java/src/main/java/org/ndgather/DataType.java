package org.ndgather;

import java.util.HashMap;
import java.util.Map;
import org.ndgather.types.BFloat16;
import org.ndgather.types.Complex128;
import org.ndgather.types.Complex64;
import org.ndgather.types.Float16;
import org.ndgather.types.Float8E4M3FN;
import org.ndgather.types.Float8E5M2;
import org.ndgather.types.Int16;
import org.ndgather.types.Int8;
import org.ndgather.types.UInt16;
import org.ndgather.types.UInt32;
import org.ndgather.types.UInt64;
import org.ndgather.types.UInt8;

/**
 * Represents the type of elements in a {@link Tensor} as an enum: TF Java 1.15's seven, then
 * the rest of ndgather's dtypes. Each names the Java class that is a {@code Tensor}'s type
 * parameter for it.
 */
public enum DataType {
  /** 32-bit single precision floating point. */
  FLOAT("float32", Float.class),
  /** 64-bit double precision floating point. */
  DOUBLE("float64", Double.class),
  /** 32-bit signed integer. */
  INT32("int32", Integer.class),
  /** 8-bit unsigned integer. */
  UINT8("uint8", UInt8.class),
  /** A sequence of bytes ({@code byte[]} values, as TF Java's). */
  STRING("bytes", String.class),
  /** 64-bit signed integer. */
  INT64("int64", Long.class),
  /** Boolean. */
  BOOL("bool", Boolean.class),
  /** 8-bit signed integer (beyond TF Java 1.15, as the ones below). */
  INT8("int8", Int8.class),
  /** 16-bit signed integer. */
  INT16("int16", Int16.class),
  /** 16-bit unsigned integer. */
  UINT16("uint16", UInt16.class),
  /** 32-bit unsigned integer. */
  UINT32("uint32", UInt32.class),
  /** 64-bit unsigned integer. */
  UINT64("uint64", UInt64.class),
  /** IEEE half precision floating point, as raw bytes. */
  HALF("float16", Float16.class),
  /** bfloat16, as raw bytes. */
  BFLOAT16("bfloat16", BFloat16.class),
  /** Two FLOATs, real and imaginary, as raw bytes. */
  COMPLEX64("complex64", Complex64.class),
  /** Two DOUBLEs, real and imaginary, as raw bytes. */
  COMPLEX128("complex128", Complex128.class),
  /** float8_e4m3fn, as raw bytes. */
  FLOAT8_E4M3FN("float8_e4m3fn", Float8E4M3FN.class),
  /** float8_e5m2, as raw bytes. */
  FLOAT8_E5M2("float8_e5m2", Float8E5M2.class);

  private static final Map<Class<?>, DataType> BY_CLASS = new HashMap<>();
  private static final Map<String, DataType> BY_NAME = new HashMap<>();

  static {
    for (DataType t : values()) {
      BY_CLASS.put(t.type, t);
      BY_NAME.put(t.native_, t);
    }
  }

  private final String native_;
  private final Class<?> type;
  private int size = -1;

  DataType(String nativeName, Class<?> type) {
    this.native_ = nativeName;
    this.type = type;
  }

  /** The core's name of the dtype. */
  String nativeName() {
    return native_;
  }

  /** The Java class of a {@code Tensor} of this type. */
  Class<?> javaClass() {
    return type;
  }

  /** Bytes per element; 0 for STRING, whose elements have no fixed width. */
  synchronized int byteSize() {
    if (size < 0) {
      size = Native.dtypeSize(native_);
    }
    return size;
  }

  /** The DataType of a Java class, as TF Java's {@code DataType.fromClass}. */
  static DataType fromClass(Class<?> c) {
    DataType t = BY_CLASS.get(c);
    if (t == null) {
      throw new IllegalArgumentException(
          "class " + c + " is not a valid ndgather type.");
    }
    return t;
  }

  /** The DataType of each of the core's dtypes, by its place in the core's table. */
  private static final class ByIndex {
    static final DataType[] TABLE;

    static {
      String[] names = Native.dtypeNames();
      TABLE = new DataType[names.length];
      for (int i = 0; i < names.length; i++) {
        // Null for the core's Unicode strings, which Java holds as byte strings (STRING).
        TABLE[i] = BY_NAME.get(names[i]);
      }
    }
  }

  /** The DataType of the core's dtype number {@code index} (its place in the core's table). */
  static DataType fromIndex(int index) {
    DataType t = index >= 0 && index < ByIndex.TABLE.length ? ByIndex.TABLE[index] : null;
    if (t == null) {
      throw new IllegalStateException("the native library returned dtype number " + index);
    }
    return t;
  }

  static DataType fromNative(String name) {
    DataType t = BY_NAME.get(name);
    if (t == null) {
      throw new IllegalStateException("the native library returned an unknown dtype " + name);
    }
    return t;
  }
}
