package org.ndgather.op.core;

/**
 * The optional attribute every indexing op has: what a bad index does. Each op's {@code
 * Options} extends it (or {@link IndexOptions}, which adds batch dimensions), so that its
 * setters return that op's type, as TF Java's do.
 *
 * @param <O> the op's {@code Options}
 */
abstract class PolicyOptions<O extends PolicyOptions<O>> {
  private String badIndicesPolicy;

  abstract O self();

  /**
   * @param badIndicesPolicy what a bad index does: "ERROR" (the default, as "" and "DEFAULT"),
   *     "IGNORE", "CLAMP", "NEGATIVE" (from the end), "WRAP" (modulo) or "FILL"; the op's
   *     documentation says what each does there
   * @return these options
   */
  public O badIndicesPolicy(String badIndicesPolicy) {
    this.badIndicesPolicy = badIndicesPolicy;
    return self();
  }

  /** The policy the last of {@code options} that sets one gives, else "" (TF's default). */
  static String policy(PolicyOptions<?>[] options) {
    String policy = "";
    for (PolicyOptions<?> o : options) {
      policy = o.badIndicesPolicy != null ? o.badIndicesPolicy : policy;
    }
    return policy;
  }
}
