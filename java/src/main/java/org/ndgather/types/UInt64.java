package org.ndgather.types;

/**
 * Represents uint64 elements: the type parameter of a {@code Tensor<UInt64>}, whose values are read
 * and written as their raw bytes (Java has no such primitive).
 */
public final class UInt64 {
  private UInt64() {}
}
