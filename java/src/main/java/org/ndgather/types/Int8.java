package org.ndgather.types;

/**
 * Represents int8 elements: the type parameter of a {@code Tensor<Int8>}, whose values are read
 * and written as their raw bytes (Java has no such primitive).
 */
public final class Int8 {
  private Int8() {}
}
