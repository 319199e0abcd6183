package org.ndgather.op.core;

/**
 * The optional attributes {@link EmbeddingLookup} and {@link EmbeddingLookupSparse} share: the
 * partition strategy and {@code maxNorm}. Each op's {@code Options} extends it, so that its
 * setters return that op's type, as TF Java's do.
 *
 * @param <O> the op's {@code Options}
 */
abstract class LookupOptions<O extends LookupOptions<O>> {
  private String partitionStrategy;
  private Double maxNorm;

  /** This, as the op's own options. */
  abstract O self();

  /**
   * @param partitionStrategy "mod" (the default) or "div"
   * @return these options
   */
  public O partitionStrategy(String partitionStrategy) {
    this.partitionStrategy = partitionStrategy;
    return self();
  }

  /**
   * @param maxNorm clip each row to this L2 norm
   * @return these options
   */
  public O maxNorm(Double maxNorm) {
    this.maxNorm = maxNorm;
    return self();
  }

  /** The strategy the last of {@code options} that sets one gives, else "mod". */
  static String partitionStrategy(LookupOptions<?>[] options) {
    String strategy = "mod";
    for (LookupOptions<?> o : options) {
      strategy = o.partitionStrategy != null ? o.partitionStrategy : strategy;
    }
    return strategy;
  }

  /** The norm the last of {@code options} that sets one gives, else NaN (none). */
  static double maxNorm(LookupOptions<?>[] options) {
    double maxNorm = Double.NaN;
    for (LookupOptions<?> o : options) {
      maxNorm = o.maxNorm != null ? o.maxNorm : maxNorm;
    }
    return maxNorm;
  }
}
