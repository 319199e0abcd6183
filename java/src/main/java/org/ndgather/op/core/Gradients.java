package org.ndgather.op.core;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.ndgather.NativeOps;
import org.ndgather.Operand;
import org.ndgather.Output;
import org.ndgather.op.PrimitiveOp;
import org.ndgather.op.Scope;

/**
 * TF Java 1.15's {@code Gradients}: the partial derivatives of {@code y} with respect to each
 * {@code x}, summed over the {@code y}s, with {@code dx} as the upstream gradients (ones by
 * default). Gradients flow through the params of {@code gather}, {@code gatherNd} and {@code
 * takeAlongAxis} (TensorFlow's registered gradients; TF Java 1.15 itself has none for {@code
 * GatherV2}). Graphs only, as in TF Java.
 *
 * <pre>{@code
 * try (Graph g = new Graph()) {
 *   Ops tf = Ops.create(g);
 *   var params = tf.placeholder(Float.class);
 *   var rows = tf.gatherNd(params, tf.constant(new int[][] {{2}, {2}, {0}}));
 *   Gradients grads = tf.gradients(rows, List.of(params));
 *   // grads.dy(0), run with params fed [[1, 2], [3, 4], [5, 6]], is [[1, 1], [0, 0], [2, 2]]
 * }
 * }</pre>
 */
public final class Gradients extends PrimitiveOp implements Iterable<Operand<?>> {
  /** Optional attributes of {@link Gradients}. */
  public static final class Options {
    private Iterable<? extends Operand<?>> dx;

    private Options() {}

    /**
     * @param dx the upstream gradients, one per {@code y}, each of its type and shape
     * @return these options
     */
    public Options dx(Iterable<? extends Operand<?>> dx) {
      this.dx = dx;
      return this;
    }
  }

  private final List<Output<?>> dy;

  private Gradients(List<Output<?>> dy) {
    super(dy.get(0).op());
    this.dy = dy;
  }

  /**
   * Adds gradient computation ops to the graph: the derivatives of {@code y} with respect to
   * each {@code x}.
   *
   * @param scope current graph scope
   * @param y output of the function to derive
   * @param x inputs of the function for which partial derivatives are computed
   * @param options carries optional attributes values
   * @return a new instance of {@code Gradients}
   * @throws IllegalArgumentException if an {@code x} is unreachable from {@code y}, a path
   *     goes through an op with no gradient, or the scope is eager
   */
  public static Gradients create(
      Scope scope, Operand<?> y, Iterable<? extends Operand<?>> x, Options... options) {
    return create(scope, List.of(y), x, options);
  }

  /**
   * Adds gradient computation ops to the graph: the derivatives of the sum of {@code y} with
   * respect to each {@code x}.
   *
   * @param scope current graph scope
   * @param y outputs of the function to derive
   * @param x inputs of the function for which partial derivatives are computed
   * @param options carries optional attributes values
   * @return a new instance of {@code Gradients}
   * @throws IllegalArgumentException if an {@code x} is unreachable from {@code y}, a path
   *     goes through an op with no gradient, or the scope is eager
   */
  public static Gradients create(
      Scope scope,
      Iterable<? extends Operand<?>> y,
      Iterable<? extends Operand<?>> x,
      Options... options) {
    List<Operand<?>> dx = null;
    for (Options o : options) {
      if (o.dx != null) {
        dx = list(o.dx);
      }
    }
    List<Operand<?>> xs = list(x);
    if (xs.isEmpty()) {
      throw new IllegalArgumentException("Gradients need at least one x");
    }
    return new Gradients(NativeOps.gradients(scope, list(y), xs, dx));
  }

  private static List<Operand<?>> list(Iterable<? extends Operand<?>> operands) {
    List<Operand<?>> out = new ArrayList<>();
    for (Operand<?> o : operands) {
      if (o == null) {
        throw new NullPointerException("an operand of Gradients is null");
      }
      out.add(o);
    }
    return out;
  }

  /**
   * @param dx see {@link Options#dx(Iterable)}
   * @return options with it
   */
  public static Options dx(Iterable<? extends Operand<?>> dx) {
    return new Options().dx(dx);
  }

  @Override
  @SuppressWarnings({"rawtypes", "unchecked"})
  public Iterator<Operand<?>> iterator() {
    return (Iterator) dy.iterator();
  }

  /** Partial derivatives of {@code y}s with respect to the {@code x}s, in order. */
  public List<Output<?>> dy() {
    return dy;
  }

  /**
   * The partial derivative with respect to {@code x[index]}.
   *
   * @param <T> the type of the elements
   * @param index which {@code x}
   * @return its partial derivative
   */
  @SuppressWarnings("unchecked")
  public <T> Output<T> dy(int index) {
    return (Output<T>) dy.get(index);
  }
}
