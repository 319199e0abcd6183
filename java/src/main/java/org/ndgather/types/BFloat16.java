package org.ndgather.types;

/**
 * Represents bfloat16 elements: the type parameter of a {@code Tensor<BFloat16>}, whose values are read
 * and written as their raw bytes (Java has no such primitive).
 */
public final class BFloat16 {
  private BFloat16() {}
}
