package org.ndgather.types;

/**
 * Represents int16 elements: the type parameter of a {@code Tensor<Int16>}, whose values are read
 * and written as their raw bytes (Java has no such primitive).
 */
public final class Int16 {
  private Int16() {}
}
