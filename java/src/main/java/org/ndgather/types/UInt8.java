package org.ndgather.types;

/**
 * Represents uint8 elements: the type parameter of a {@code Tensor<UInt8>}, whose values are read
 * and written as their raw bytes (Java has no such primitive).
 */
public final class UInt8 {
  private UInt8() {}
}
