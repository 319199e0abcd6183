package org.ndgather;

import java.nio.ByteBuffer;

/**
 * The JNI entry points of the native library (crates/ndgather-jni). Handles name entries of
 * the native side's registry (a slot, its generation and the object's type), never addresses:
 * a closed, forged or mistyped handle gives {@code IllegalStateException}, and each call keeps
 * the objects it uses alive until it returns, whoever closes them meanwhile. Each wrapper
 * class keeps its own handle and closes it once.
 */
final class Native {
  static {
    NativeLibrary.load();
  }

  private Native() {}

  static native long tensorWrap(String dtype, long[] shape, ByteBuffer data, boolean writable);

  static native boolean tensorIsDirect(long tensor);

  static native long tensorFromArray(String dtype, long[] shape, byte[] data);

  static native byte[] tensorBytes(long tensor);

  static native long tensorFromStrings(long[] shape, byte[][] values);

  static native void tensorFree(long tensor);

  static native String tensorDtype(long tensor);

  static native long[] tensorShape(long tensor);

  static native byte[][] tensorStrings(long tensor);

  static native long scopeNew(boolean eager);

  static native long scopeDerive(long scope, String name, boolean subScope);

  static native void scopeFree(long scope);

  static native long opConstant(long scope, long tensor);

  static native long opPlaceholder(long scope, String dtype, long[] shape);

  static native long[] opGradients(long scope, long[] ys, long[] xs, long[] dx);

  static native long opBuild(
      long scope,
      String op,
      long[][] inputs,
      String[] attrNames,
      String[] attrValues,
      String[] fedNames,
      long[] fed);

  static native void outputFree(long output);

  static native String outputName(long output);

  static native String outputType(long output);

  static native String outputDtype(long output);

  static native long[] outputShape(long output);

  static native long outputValue(long output);

  static native long[] sessionRun(
      long scope, long[] feedOutputs, long[] feedTensors, long[] fetches);

  static native void sessionRunInto(
      long scope, long[] feedOutputs, long[] feedTensors, long fetch, long into);

  static native int dtypeSize(String dtype);

  static native String[] dtypeNames();

  /** The names of every op of the core's registry, which {@code opBuild} reaches. */
  static native String[] opNames();

  static native long noop(long x);

  /** How many native objects are open now (for tests that look for leaks). */
  static native long registryLive();
}
