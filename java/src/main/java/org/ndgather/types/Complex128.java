package org.ndgather.types;

/**
 * Represents complex128 elements: the type parameter of a {@code Tensor<Complex128>}, whose values are read
 * and written as their raw bytes (Java has no such primitive).
 */
public final class Complex128 {
  private Complex128() {}
}
