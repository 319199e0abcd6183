package org.ndgather.types;

/**
 * Represents uint32 elements: the type parameter of a {@code Tensor<UInt32>}, whose values are read
 * and written as their raw bytes (Java has no such primitive).
 */
public final class UInt32 {
  private UInt32() {}
}
