package org.ndgather.op.core;

/**
 * The optional attributes {@link Gather} and {@link GatherNd} share: the bad-index policy and
 * the batch dimensions. Each op's {@code Options} extends it, so that its setters return that
 * op's type, as TF Java's do.
 *
 * @param <O> the op's {@code Options}
 */
abstract class IndexOptions<O extends IndexOptions<O>> {
  private String badIndicesPolicy;
  private Long batchDims;

  abstract O self();

  /**
   * @param badIndicesPolicy what a bad index does: "ERROR" (the default, as "" and
   *     "DEFAULT"), "IGNORE" (zeros), "CLAMP", "NEGATIVE" (from the end), "WRAP" (modulo) or
   *     "FILL"
   * @return these options
   */
  public O badIndicesPolicy(String badIndicesPolicy) {
    this.badIndicesPolicy = badIndicesPolicy;
    return self();
  }

  /**
   * @param batchDims the number of batch dimensions
   * @return these options
   */
  public O batchDims(Long batchDims) {
    this.batchDims = batchDims;
    return self();
  }

  /** The policy the last of {@code options} that sets one gives, else "" (TF's default). */
  static String policy(IndexOptions<?>[] options) {
    String policy = "";
    for (IndexOptions<?> o : options) {
      policy = o.badIndicesPolicy != null ? o.badIndicesPolicy : policy;
    }
    return policy;
  }

  /** The batch dimensions the last of {@code options} that sets them gives, else 0. */
  static long batchDims(IndexOptions<?>[] options) {
    long batchDims = 0;
    for (IndexOptions<?> o : options) {
      batchDims = o.batchDims != null ? o.batchDims : batchDims;
    }
    return batchDims;
  }
}
