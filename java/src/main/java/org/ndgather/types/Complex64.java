package org.ndgather.types;

/**
 * Represents complex64 elements: the type parameter of a {@code Tensor<Complex64>}, whose values are read
 * and written as their raw bytes (Java has no such primitive).
 */
public final class Complex64 {
  private Complex64() {}
}
