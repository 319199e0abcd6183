package org.ndgather.op.core;

/**
 * The optional attributes {@link Gather} and {@link GatherNd} share: the bad-index policy
 * ({@link PolicyOptions}) and the batch dimensions. Each op's {@code Options} extends it, so that its setters return that
 * op's type, as TF Java's do.
 *
 * @param <O> the op's {@code Options}
 */
abstract class IndexOptions<O extends IndexOptions<O>> extends PolicyOptions<O> {
  private Long batchDims;

  /**
   * @param batchDims the number of batch dimensions
   * @return these options
   */
  public O batchDims(Long batchDims) {
    this.batchDims = batchDims;
    return self();
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
