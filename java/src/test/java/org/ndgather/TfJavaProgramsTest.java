package org.ndgather;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Programs written against TF Java 1.15 (resources {@code Programs.java.txt}), compiled with
 * {@code org.ndgather} in their imports and run; what they print must be what TF Java 1.15
 * itself printed for them ({@code tf-java-1.15.txt}, committed). With {@code -Ptf-oracle}
 * TF Java 1.15 is on the test classpath: the same programs, compiled with {@code
 * org.tensorflow}, run against it too, and must still print the committed file
 * ({@code -Dndgather.regenerate=true} rewrites it from that run).
 */
class TfJavaProgramsTest {
  /**
   * Lines where ndgather differs from TF Java 1.15 on purpose, and why: only the exception's
   * class must then agree.
   */
  private static final Map<String, String> WORDED_OTHERWISE =
      Map.of(
          "gathernd-static-shape-error",
          "the build-time message is the core's (TensorFlow 2.21's kernel wording), not TF 1.15's"
              + " shape function's, which names the graph node",
          "eager-config",
          "ndgather parses no ConfigProto: it refuses every non-empty one, and says why");

  private static String resource(String name) throws IOException {
    try (InputStream in = TfJavaProgramsTest.class.getResourceAsStream(name)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  @SuppressWarnings("unchecked")
  static List<String> runPrograms(String pkg, Path dir) throws Exception {
    Path src = dir.resolve(pkg).resolve("Programs.java");
    Files.createDirectories(src.getParent());
    Files.writeString(src, resource("Programs.java.txt").replace("PKG.", pkg + "."));
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    Path out = dir.resolve(pkg).resolve("classes");
    int status =
        javac.run(
            null, null, null,
            "-cp", System.getProperty("java.class.path"),
            "-d", out.toString(),
            src.toString());
    assertEquals(0, status, "the programs compile against " + pkg);
    try (URLClassLoader loader =
        new URLClassLoader(new URL[] {out.toUri().toURL()}, TfJavaProgramsTest.class.getClassLoader())) {
      return (List<String>) loader.loadClass("Programs").getMethod("run").invoke(null);
    }
  }

  private static boolean tfJavaPresent() {
    try {
      Class.forName("org.tensorflow.Tensor");
      return true;
    } catch (ClassNotFoundException e) {
      return false;
    }
  }

  @Test
  void theProgramsPrintWhatTfJavaPrinted(@TempDir Path dir) throws Exception {
    List<String> tf = List.of(resource("tf-java-1.15.txt").strip().split("\n"));
    if (tfJavaPresent()) {
      List<String> live = runPrograms("org.tensorflow", dir);
      if (Boolean.getBoolean("ndgather.regenerate")) {
        Path file = ConformanceTest.root()
            .resolve("java/src/test/resources/org/ndgather/tf-java-1.15.txt");
        Files.writeString(file, String.join("\n", live) + "\n");
        tf = live;
      }
      assertEquals(tf, live, "TF Java 1.15 itself prints the committed file");
    }
    List<String> ours = runPrograms("org.ndgather", dir);
    assertEquals(tf.size(), ours.size());
    List<String> differ = new ArrayList<>();
    for (int i = 0; i < tf.size(); i++) {
      String name = tf.get(i).split(" ")[0];
      String want = tf.get(i);
      String got = ours.get(i);
      boolean same =
          WORDED_OTHERWISE.containsKey(name)
              ? got.split(":")[0].equals(want.split(":")[0])
              : got.equals(want);
      if (!same) {
        differ.add("TF Java: " + want + "\nndgather: " + got);
      }
    }
    assertEquals(List.of(), differ);
  }
}
