package org.ndgather.op;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import org.ndgather.NativeOps;
import org.ndgather.Operand;
import org.ndgather.Operation;
import org.ndgather.Output;

/**
 * Builds any op of ndgather's registry by name, with its inputs in the order of its signature
 * and its attributes by name: TF Java's {@code GraphOperationBuilder}, over the native
 * library's one generic entry point. The op checks its own inputs and attributes; a wrong
 * one is an {@link IllegalArgumentException} with the op's message.
 *
 * <pre>{@code
 * Scope scope = new Scope(EagerSession.create());
 * Ops tf = Ops.create(scope.env());
 * Operation max = scope.opBuilder("unsorted_segment_max")
 *     .addInput(tf.constant(new float[] {1, 5, 2}))
 *     .addInput(tf.constant(new int[] {1, 1, 0}))
 *     .setAttr("num_segments", 2)
 *     .build();
 * // max.output(0).tensor() holds [2, 5]
 * }</pre>
 */
public final class OperationBuilder {
  private final Scope scope;
  private final String type;
  private final List<List<Operand<?>>> inputs = new ArrayList<>();
  private final List<String> attrNames = new ArrayList<>();
  private final List<String> attrValues = new ArrayList<>();
  private final List<String> fedNames = new ArrayList<>();
  private final List<Operand<?>> fed = new ArrayList<>();

  OperationBuilder(Scope scope, String type) {
    if (type == null) {
      throw new NullPointerException("an op type must not be null");
    }
    this.scope = scope;
    this.type = type;
  }

  /**
   * Adds the next input: one tensor.
   *
   * @param input the operand
   * @return this builder
   */
  public OperationBuilder addInput(Operand<?> input) {
    if (input == null) {
      throw new NullPointerException("input " + inputs.size() + " of " + type + " is null");
    }
    inputs.add(List.of(input));
    return this;
  }

  /**
   * Adds the next input: a list of tensors (an embedding table's shards).
   *
   * @param list the operands
   * @return this builder
   */
  public OperationBuilder addInputList(Operand<?>[] list) {
    inputs.add(List.copyOf(Arrays.asList(list)));
    return this;
  }

  /**
   * Leaves the next input out: an optional one (beyond TF Java, whose ops have none).
   *
   * @return this builder
   */
  public OperationBuilder addAbsentInput() {
    inputs.add(List.of());
    return this;
  }

  /**
   * Sets an integer attribute.
   *
   * @param name the attribute's name
   * @param value its value
   * @return this builder
   */
  public OperationBuilder setAttr(String name, long value) {
    return attr(name, Long.toString(value));
  }

  /**
   * Sets a floating-point attribute.
   *
   * @param name the attribute's name
   * @param value its value
   * @return this builder
   */
  public OperationBuilder setAttr(String name, double value) {
    return attr(name, Double.toString(value));
  }

  /**
   * Sets a boolean attribute.
   *
   * @param name the attribute's name
   * @param value its value
   * @return this builder
   */
  public OperationBuilder setAttr(String name, boolean value) {
    return attr(name, Boolean.toString(value));
  }

  /**
   * Sets a string attribute (a policy, a mode, a reduction).
   *
   * @param name the attribute's name
   * @param value its value
   * @return this builder
   */
  public OperationBuilder setAttr(String name, String value) {
    if (value == null) {
      throw new NullPointerException("attribute " + name + " of " + type + " is null");
    }
    return attr(name, value);
  }

  /**
   * Sets a list-of-integers attribute (a shape).
   *
   * @param name the attribute's name
   * @param value its values
   * @return this builder
   */
  public OperationBuilder setAttr(String name, long[] value) {
    return attr(
        name, Arrays.stream(value).mapToObj(Long::toString).collect(Collectors.joining(",")));
  }

  /**
   * Sets an attribute from a tensor, as TensorFlow takes it as an input: {@code GatherV2}'s
   * {@code axis}, {@code num_segments}, {@code ScatterNd}'s {@code shape}. It is a scalar (or,
   * for a list, a vector) of INT32 or INT64; a graph reads it when it runs, so it may be a
   * placeholder.
   *
   * @param name the attribute's name
   * @param value the tensor
   * @return this builder
   */
  public OperationBuilder setAttr(String name, Operand<?> value) {
    if (name == null) {
      throw new NullPointerException("an attribute name must not be null");
    }
    if (value == null) {
      throw new NullPointerException("attribute " + name + " of " + type + " is null");
    }
    fedNames.add(name);
    fed.add(value);
    return this;
  }

  private OperationBuilder attr(String name, String text) {
    if (name == null) {
      throw new NullPointerException("an attribute name must not be null");
    }
    attrNames.add(name);
    attrValues.add(text);
    return this;
  }

  /**
   * Creates the op (in an eager session, runs it).
   *
   * @return the op, whose {@code output(0)} is its result
   * @throws IllegalArgumentException for an unknown op, inputs or attributes it does not take,
   *     and its own errors, with its message
   */
  public Operation build() {
    Output<?> out = NativeOps.build(scope, type, inputs, attrNames, attrValues, fedNames, fed);
    return out.op();
  }
}
