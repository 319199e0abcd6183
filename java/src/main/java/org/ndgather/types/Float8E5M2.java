package org.ndgather.types;

/**
 * Represents float8_e5m2 elements: the type parameter of a {@code Tensor<Float8E5M2>}, whose values are read
 * and written as their raw bytes (Java has no such primitive).
 */
public final class Float8E5M2 {
  private Float8E5M2() {}
}
