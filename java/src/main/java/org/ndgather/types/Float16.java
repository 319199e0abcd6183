package org.ndgather.types;

/**
 * Represents float16 elements: the type parameter of a {@code Tensor<Float16>}, whose values are read
 * and written as their raw bytes (Java has no such primitive).
 */
public final class Float16 {
  private Float16() {}
}
