package org.ndgather.types;

/**
 * Represents uint16 elements: the type parameter of a {@code Tensor<UInt16>}, whose values are read
 * and written as their raw bytes (Java has no such primitive).
 */
public final class UInt16 {
  private UInt16() {}
}
