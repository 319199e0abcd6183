package org.ndgather.op.core;

import java.util.List;
import org.ndgather.NativeOps;
import org.ndgather.Operand;
import org.ndgather.Output;
import org.ndgather.op.PrimitiveOp;
import org.ndgather.op.Scope;

/**
 * TensorFlow's {@code tf.nn.embedding_lookup} (beyond TF Java): the rows of {@code ids} from a
 * table given as one or more shards split along their first axis, by the partition strategy
 * ("mod": id {@code i} is row {@code i / n} of shard {@code i % n}; "div": contiguous ranges),
 * each row clipped to an L2 norm of {@code maxNorm} if given. Shards must be of one floating
 * point type (FLOAT, DOUBLE, HALF or BFLOAT16).
 *
 * <pre>{@code
 * Ops tf = Ops.create(EagerSession.create());
 * var even = tf.constant(new float[][] {{0}, {2}});
 * var odd = tf.constant(new float[][] {{1}, {3}});
 * var rows = tf.embeddingLookup(List.of(even, odd), tf.constant(new long[] {3, 0}));
 * // rows.asOutput().tensor() holds [[3], [0]]
 * }</pre>
 *
 * @param <T> the type of the elements
 */
public final class EmbeddingLookup<T> extends PrimitiveOp implements Operand<T> {
  /** Optional attributes of {@link EmbeddingLookup}. */
  public static final class Options extends LookupOptions<Options> {
    private Options() {}

    @Override
    Options self() {
      return this;
    }
  }

  private final Output<T> output;

  private EmbeddingLookup(Output<T> output) {
    super(output.op());
    this.output = output;
  }

  /**
   * Creates the op.
   *
   * @param <T> the type of the elements
   * @param <U> the type of the ids (int32 or int64)
   * @param scope current scope
   * @param shards the table's shards
   * @param ids the rows to look up
   * @param options carries optional attributes values
   * @return a new instance of EmbeddingLookup
   */
  public static <T, U extends Number> EmbeddingLookup<T> create(
      Scope scope, List<? extends Operand<T>> shards, Operand<U> ids, Options... options) {
    String strategy = LookupOptions.partitionStrategy(options);
    double maxNorm = LookupOptions.maxNorm(options);
    return new EmbeddingLookup<>(NativeOps.embeddingLookup(scope, shards, ids, strategy, maxNorm));
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

  /** The looked-up rows, of shape {@code ids.shape + shards[0].shape[1:]}. */
  public Output<T> output() {
    return output;
  }

  @Override
  public Output<T> asOutput() {
    return output;
  }
}
