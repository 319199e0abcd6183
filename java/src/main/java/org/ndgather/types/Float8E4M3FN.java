package org.ndgather.types;

/**
 * Represents float8_e4m3fn elements: the type parameter of a {@code Tensor<Float8E4M3FN>}, whose values are read
 * and written as their raw bytes (Java has no such primitive).
 */
public final class Float8E4M3FN {
  private Float8E4M3FN() {}
}
