package org.ndgather.op.core;

import java.util.List;
import org.ndgather.NativeOps;
import org.ndgather.Operand;
import org.ndgather.Output;
import org.ndgather.op.PrimitiveOp;
import org.ndgather.op.Scope;

/**
 * PyTorch's {@code embedding_bag} (beyond TF Java): the rows of each bag of ids from a table
 * given as one or more shards, reduced per bag by "sum" (weighted per id if {@code
 * perSampleWeights} is set), "mean" (the default) or "max". Bags are the rows of a 2-D {@code
 * input} ({@code offsets} null), or run from each offset of a 1-D {@code input} to the next.
 * {@code paddingIdx} ids are left out of every bag; an empty bag is zeros. {@code maxNorm}
 * renormalises each row whose L2 norm exceeds it, as PyTorch's {@code embedding_renorm_}
 * does, without writing the table (PyTorch writes its weight). Results equal PyTorch's CPU
 * kernels' bit for bit.
 *
 * <pre>{@code
 * Ops tf = Ops.create(EagerSession.create());
 * var table = tf.constant(new float[][] {{1}, {2}, {4}});
 * var bags = tf.embeddingBag(List.of(table), tf.constant(new long[] {0, 2, 1}),
 *     tf.constant(new long[] {0, 2}), EmbeddingBag.mode("sum"));
 * // bags.asOutput().tensor() holds [[5], [2]]
 * }</pre>
 *
 * @param <T> the type of the elements
 */
public final class EmbeddingBag<T> extends PrimitiveOp implements Operand<T> {
  /** Optional attributes of {@link EmbeddingBag}. */
  public static final class Options {
    private String mode;
    private Long paddingIdx;
    private Boolean includeLastOffset;
    private Double maxNorm;
    private String partitionStrategy;
    private String badIndicesPolicy;
    private Operand<?> perSampleWeights;

    private Options() {}

    /**
     * @param mode "sum", "mean" (the default) or "max"
     * @return these options
     */
    public Options mode(String mode) {
      this.mode = mode;
      return this;
    }

    /**
     * @param paddingIdx the id left out of every bag (negative counts from the end)
     * @return these options
     */
    public Options paddingIdx(Long paddingIdx) {
      this.paddingIdx = paddingIdx;
      return this;
    }

    /**
     * @param includeLastOffset whether {@code offsets} ends with the end of the last bag
     * @return these options
     */
    public Options includeLastOffset(Boolean includeLastOffset) {
      this.includeLastOffset = includeLastOffset;
      return this;
    }

    /**
     * @param maxNorm renormalise each row whose L2 norm exceeds this one
     * @return these options
     */
    public Options maxNorm(Double maxNorm) {
      this.maxNorm = maxNorm;
      return this;
    }

    /**
     * @param partitionStrategy "mod" (the default) or "div", for shards
     * @return these options
     */
    public Options partitionStrategy(String partitionStrategy) {
      this.partitionStrategy = partitionStrategy;
      return this;
    }

    /**
     * @param badIndicesPolicy "ERROR" (the default), "IGNORE" (a bad id is left out),
     *     "CLAMP", "NEGATIVE" or "WRAP"
     * @return these options
     */
    public Options badIndicesPolicy(String badIndicesPolicy) {
      this.badIndicesPolicy = badIndicesPolicy;
      return this;
    }

    /**
     * @param perSampleWeights a weight per id, of {@code input}'s shape ("sum" only)
     * @return these options
     */
    public Options perSampleWeights(Operand<?> perSampleWeights) {
      this.perSampleWeights = perSampleWeights;
      return this;
    }
  }

  private final Output<T> output;

  private EmbeddingBag(Output<T> output) {
    super(output.op());
    this.output = output;
  }

  /**
   * Creates the op.
   *
   * @param <T> the type of the elements
   * @param <U> the type of the ids (an integer type)
   * @param scope current scope
   * @param shards the table's shards
   * @param input the ids: 2-D, or 1-D with {@code offsets}
   * @param offsets where each bag starts, of {@code input}'s type, or null for a 2-D input
   * @param options carries optional attributes values
   * @return a new instance of EmbeddingBag
   * @throws IllegalArgumentException with PyTorch's message for bad offsets, ids or weights
   */
  @SuppressWarnings("unchecked")
  public static <T, U extends Number> EmbeddingBag<T> create(
      Scope scope,
      List<? extends Operand<T>> shards,
      Operand<U> input,
      Operand<U> offsets,
      Options... options) {
    Options o = new Options();
    for (Options given : options) {
      o.mode = given.mode != null ? given.mode : o.mode;
      o.paddingIdx = given.paddingIdx != null ? given.paddingIdx : o.paddingIdx;
      o.includeLastOffset =
          given.includeLastOffset != null ? given.includeLastOffset : o.includeLastOffset;
      o.maxNorm = given.maxNorm != null ? given.maxNorm : o.maxNorm;
      o.partitionStrategy =
          given.partitionStrategy != null ? given.partitionStrategy : o.partitionStrategy;
      o.badIndicesPolicy =
          given.badIndicesPolicy != null ? given.badIndicesPolicy : o.badIndicesPolicy;
      o.perSampleWeights =
          given.perSampleWeights != null ? given.perSampleWeights : o.perSampleWeights;
    }
    return new EmbeddingBag<>(
        NativeOps.embeddingBag(
            scope,
            shards,
            input,
            offsets,
            (Operand<T>) o.perSampleWeights,
            o.mode == null ? "mean" : o.mode,
            o.paddingIdx,
            Boolean.TRUE.equals(o.includeLastOffset),
            o.maxNorm == null ? Double.NaN : o.maxNorm,
            o.partitionStrategy == null ? "mod" : o.partitionStrategy,
            o.badIndicesPolicy == null ? "ERROR" : o.badIndicesPolicy));
  }

  /**
   * @param mode see {@link Options#mode(String)}
   * @return options with it
   */
  public static Options mode(String mode) {
    return new Options().mode(mode);
  }

  /**
   * @param paddingIdx see {@link Options#paddingIdx(Long)}
   * @return options with it
   */
  public static Options paddingIdx(Long paddingIdx) {
    return new Options().paddingIdx(paddingIdx);
  }

  /**
   * @param includeLastOffset see {@link Options#includeLastOffset(Boolean)}
   * @return options with it
   */
  public static Options includeLastOffset(Boolean includeLastOffset) {
    return new Options().includeLastOffset(includeLastOffset);
  }

  /**
   * @param maxNorm see {@link Options#maxNorm(Double)}
   * @return options with it
   */
  public static Options maxNorm(Double maxNorm) {
    return new Options().maxNorm(maxNorm);
  }

  /**
   * @param partitionStrategy see {@link Options#partitionStrategy(String)}
   * @return options with it
   */
  public static Options partitionStrategy(String partitionStrategy) {
    return new Options().partitionStrategy(partitionStrategy);
  }

  /**
   * @param badIndicesPolicy see {@link Options#badIndicesPolicy(String)}
   * @return options with it
   */
  public static Options badIndicesPolicy(String badIndicesPolicy) {
    return new Options().badIndicesPolicy(badIndicesPolicy);
  }

  /**
   * @param perSampleWeights see {@link Options#perSampleWeights(Operand)}
   * @return options with it
   */
  public static Options perSampleWeights(Operand<?> perSampleWeights) {
    return new Options().perSampleWeights(perSampleWeights);
  }

  /** One row per bag, of shape {@code [bags] + shards[0].shape[1:]}. */
  public Output<T> output() {
    return output;
  }

  @Override
  public Output<T> asOutput() {
    return output;
  }
}
