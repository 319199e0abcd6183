package org.ndgather;

import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;

/**
 * Type-safe factories of {@link Tensor}s, one per Java type and rank (TF Java's {@code
 * Tensors}).
 *
 * <pre>{@code
 * try (Tensor<Integer> t = Tensors.create(new int[][] {{1, 2}, {3, 4}})) {
 *   assert t.shape()[1] == 2;
 * }
 * }</pre>
 */
public final class Tensors {
  private Tensors() {}

  /** Creates a STRING scalar of {@code data}'s UTF-8 bytes. */
  public static Tensor<String> create(String data) {
    return create(data, StandardCharsets.UTF_8);
  }

  /** Creates a STRING scalar of {@code data}'s bytes in {@code charset}. */
  public static Tensor<String> create(String data, Charset charset) {
    return Tensor.create(data.getBytes(charset), String.class);
  }

  /** Creates a Float scalar. */
  public static Tensor<Float> create(float data) {
    return Tensor.create(data, Float.class);
  }

  /** Creates a rank-1 Float tensor. */
  public static Tensor<Float> create(float[] data) {
    return Tensor.create(data, Float.class);
  }

  /** Creates a rank-2 Float tensor. */
  public static Tensor<Float> create(float[][] data) {
    return Tensor.create(data, Float.class);
  }

  /** Creates a rank-3 Float tensor. */
  public static Tensor<Float> create(float[][][] data) {
    return Tensor.create(data, Float.class);
  }

  /** Creates a rank-4 Float tensor. */
  public static Tensor<Float> create(float[][][][] data) {
    return Tensor.create(data, Float.class);
  }

  /** Creates a rank-5 Float tensor. */
  public static Tensor<Float> create(float[][][][][] data) {
    return Tensor.create(data, Float.class);
  }

  /** Creates a rank-6 Float tensor. */
  public static Tensor<Float> create(float[][][][][][] data) {
    return Tensor.create(data, Float.class);
  }

  /** Creates a Double scalar. */
  public static Tensor<Double> create(double data) {
    return Tensor.create(data, Double.class);
  }

  /** Creates a rank-1 Double tensor. */
  public static Tensor<Double> create(double[] data) {
    return Tensor.create(data, Double.class);
  }

  /** Creates a rank-2 Double tensor. */
  public static Tensor<Double> create(double[][] data) {
    return Tensor.create(data, Double.class);
  }

  /** Creates a rank-3 Double tensor. */
  public static Tensor<Double> create(double[][][] data) {
    return Tensor.create(data, Double.class);
  }

  /** Creates a rank-4 Double tensor. */
  public static Tensor<Double> create(double[][][][] data) {
    return Tensor.create(data, Double.class);
  }

  /** Creates a rank-5 Double tensor. */
  public static Tensor<Double> create(double[][][][][] data) {
    return Tensor.create(data, Double.class);
  }

  /** Creates a rank-6 Double tensor. */
  public static Tensor<Double> create(double[][][][][][] data) {
    return Tensor.create(data, Double.class);
  }

  /** Creates a Integer scalar. */
  public static Tensor<Integer> create(int data) {
    return Tensor.create(data, Integer.class);
  }

  /** Creates a rank-1 Integer tensor. */
  public static Tensor<Integer> create(int[] data) {
    return Tensor.create(data, Integer.class);
  }

  /** Creates a rank-2 Integer tensor. */
  public static Tensor<Integer> create(int[][] data) {
    return Tensor.create(data, Integer.class);
  }

  /** Creates a rank-3 Integer tensor. */
  public static Tensor<Integer> create(int[][][] data) {
    return Tensor.create(data, Integer.class);
  }

  /** Creates a rank-4 Integer tensor. */
  public static Tensor<Integer> create(int[][][][] data) {
    return Tensor.create(data, Integer.class);
  }

  /** Creates a rank-5 Integer tensor. */
  public static Tensor<Integer> create(int[][][][][] data) {
    return Tensor.create(data, Integer.class);
  }

  /** Creates a rank-6 Integer tensor. */
  public static Tensor<Integer> create(int[][][][][][] data) {
    return Tensor.create(data, Integer.class);
  }

  /** Creates a Long scalar. */
  public static Tensor<Long> create(long data) {
    return Tensor.create(data, Long.class);
  }

  /** Creates a rank-1 Long tensor. */
  public static Tensor<Long> create(long[] data) {
    return Tensor.create(data, Long.class);
  }

  /** Creates a rank-2 Long tensor. */
  public static Tensor<Long> create(long[][] data) {
    return Tensor.create(data, Long.class);
  }

  /** Creates a rank-3 Long tensor. */
  public static Tensor<Long> create(long[][][] data) {
    return Tensor.create(data, Long.class);
  }

  /** Creates a rank-4 Long tensor. */
  public static Tensor<Long> create(long[][][][] data) {
    return Tensor.create(data, Long.class);
  }

  /** Creates a rank-5 Long tensor. */
  public static Tensor<Long> create(long[][][][][] data) {
    return Tensor.create(data, Long.class);
  }

  /** Creates a rank-6 Long tensor. */
  public static Tensor<Long> create(long[][][][][][] data) {
    return Tensor.create(data, Long.class);
  }

  /** Creates a Boolean scalar. */
  public static Tensor<Boolean> create(boolean data) {
    return Tensor.create(data, Boolean.class);
  }

  /** Creates a rank-1 Boolean tensor. */
  public static Tensor<Boolean> create(boolean[] data) {
    return Tensor.create(data, Boolean.class);
  }

  /** Creates a rank-2 Boolean tensor. */
  public static Tensor<Boolean> create(boolean[][] data) {
    return Tensor.create(data, Boolean.class);
  }

  /** Creates a rank-3 Boolean tensor. */
  public static Tensor<Boolean> create(boolean[][][] data) {
    return Tensor.create(data, Boolean.class);
  }

  /** Creates a rank-4 Boolean tensor. */
  public static Tensor<Boolean> create(boolean[][][][] data) {
    return Tensor.create(data, Boolean.class);
  }

  /** Creates a rank-5 Boolean tensor. */
  public static Tensor<Boolean> create(boolean[][][][][] data) {
    return Tensor.create(data, Boolean.class);
  }

  /** Creates a rank-6 Boolean tensor. */
  public static Tensor<Boolean> create(boolean[][][][][][] data) {
    return Tensor.create(data, Boolean.class);
  }

  /** Creates a STRING scalar of byte strings. */
  public static Tensor<String> create(byte[] data) {
    return Tensor.create(data, String.class);
  }

  /** Creates a rank-1 STRING tensor of byte strings. */
  public static Tensor<String> create(byte[][] data) {
    return Tensor.create(data, String.class);
  }

  /** Creates a rank-2 STRING tensor of byte strings. */
  public static Tensor<String> create(byte[][][] data) {
    return Tensor.create(data, String.class);
  }

  /** Creates a rank-3 STRING tensor of byte strings. */
  public static Tensor<String> create(byte[][][][] data) {
    return Tensor.create(data, String.class);
  }

  /** Creates a rank-4 STRING tensor of byte strings. */
  public static Tensor<String> create(byte[][][][][] data) {
    return Tensor.create(data, String.class);
  }

  /** Creates a rank-5 STRING tensor of byte strings. */
  public static Tensor<String> create(byte[][][][][][] data) {
    return Tensor.create(data, String.class);
  }
}
