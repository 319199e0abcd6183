package org.ndgather.op.core;

import java.util.List;
import org.ndgather.Operand;
import org.ndgather.Output;
import org.ndgather.op.OperationBuilder;
import org.ndgather.op.PrimitiveOp;
import org.ndgather.op.Scope;

/**
 * TensorFlow's {@code tf.nn.embedding_lookup_sparse} (beyond TF Java): for each row of a batch
 * of sparse ids, given as a {@code SparseTensor}'s parts, the rows of the ids from a table of
 * one or more shards, weighted and combined by the combiner ("mean", the default, "sqrtn" or
 * "sum"). A batch row with no ids is zeros. Its output has {@code denseShape[0]} rows, known
 * now where {@code denseShape} is a constant.
 *
 * <pre>{@code
 * Ops tf = Ops.create(EagerSession.create());
 * var table = tf.constant(new float[][] {{1, 2}, {3, 4}, {5, 6}});
 * var indices = tf.constant(new long[][] {{0, 0}, {0, 1}, {2, 0}});
 * var ids = tf.constant(new long[] {0, 2, 1});
 * var shape = tf.constant(new long[] {3, 2});
 * var rows = tf.embeddingLookupSparse(List.of(table), indices, ids, shape, null,
 *     EmbeddingLookupSparse.combiner("sum"));
 * // rows.asOutput().tensor() holds [[6, 8], [0, 0], [3, 4]]
 * }</pre>
 *
 * @param <T> the type of the elements
 */
public final class EmbeddingLookupSparse<T> extends PrimitiveOp implements Operand<T> {
  /** Optional attributes of {@link EmbeddingLookupSparse}. */
  public static final class Options extends LookupOptions<Options> {
    private String combiner;

    private Options() {}

    @Override
    Options self() {
      return this;
    }

    /**
     * @param combiner "mean" (the default), "sqrtn" or "sum"
     * @return these options
     */
    public Options combiner(String combiner) {
      this.combiner = combiner;
      return this;
    }
  }

  private final Output<T> output;

  private EmbeddingLookupSparse(Output<T> output) {
    super(output.op());
    this.output = output;
  }

  /**
   * Creates the op.
   *
   * @param <T> the type of the elements
   * @param <U> the type of the ids (an integer type)
   * @param scope current scope
   * @param shards the table's shards, of one floating-point type
   * @param indices the sparse ids' indices: an INT64 matrix {@code [n, 2]}, in row-major order
   * @param ids the sparse ids' values: {@code n} ids
   * @param denseShape the sparse ids' dense shape: an INT64 vector {@code [batch, width]}
   * @param weights a weight per id, of the shards' type; null for 1
   * @param options carries optional attributes values
   * @return a new instance of EmbeddingLookupSparse
   * @throws IllegalArgumentException for inputs TensorFlow refuses, with its message
   */
  public static <T, U extends Number> EmbeddingLookupSparse<T> create(
      Scope scope,
      List<? extends Operand<T>> shards,
      Operand<Long> indices,
      Operand<U> ids,
      Operand<Long> denseShape,
      Operand<T> weights,
      Options... options) {
    OperationBuilder builder =
        scope
            .opBuilder("embedding_lookup_sparse")
            .addInputList(shards.toArray(new Operand<?>[0]))
            .addInput(indices)
            .addInput(ids)
            .addInput(denseShape);
    if (weights != null) {
      builder.addInput(weights);
    }
    builder.setAttr("partition_strategy", LookupOptions.partitionStrategy(options));
    double maxNorm = LookupOptions.maxNorm(options);
    if (!Double.isNaN(maxNorm)) {
      builder.setAttr("max_norm", maxNorm);
    }
    for (Options o : options) {
      if (o.combiner != null) {
        builder.setAttr("combiner", o.combiner);
      }
    }
    return new EmbeddingLookupSparse<>(builder.build().output(0));
  }

  /**
   * @param combiner see {@link Options#combiner(String)}
   * @return options with it
   */
  public static Options combiner(String combiner) {
    return new Options().combiner(combiner);
  }

  /**
   * @param partitionStrategy see {@link Options#partitionStrategy(String)}
   * @return options with it
   */
  public static Options partitionStrategy(String partitionStrategy) {
    return new Options().partitionStrategy(partitionStrategy);
  }

  /**
   * @param maxNorm see {@link Options#maxNorm(Double)}
   * @return options with it
   */
  public static Options maxNorm(Double maxNorm) {
    return new Options().maxNorm(maxNorm);
  }

  /** The combined rows, of shape {@code [denseShape[0]] + shards[0].shape[1:]}. */
  public Output<T> output() {
    return output;
  }

  @Override
  public Output<T> asOutput() {
    return output;
  }
}
