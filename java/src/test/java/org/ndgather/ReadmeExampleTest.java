package org.ndgather;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The Java example of the README and of the site's Java page, compiled against this build and
 * run: it prints "2.0 3.0".
 */
class ReadmeExampleTest {
  @ParameterizedTest
  @ValueSource(strings = {"README.md", "docs/java.md"})
  void theExampleCompilesAndRuns(String page, @org.junit.jupiter.api.io.TempDir Path dir)
      throws Exception {
    String readme = Files.readString(ConformanceTest.root().resolve(page));
    int start = readme.indexOf("```java\n");
    assertTrue(start >= 0, page + " has a Java example");
    int end = readme.indexOf("```", start + 8);
    Path source = dir.resolve("Example.java");
    Files.writeString(source, readme.substring(start + 8, end));
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    String classpath = System.getProperty("java.class.path");
    int status = javac.run(null, null, null, "-cp", classpath, "-d", dir.toString(), source.toString());
    assertEquals(0, status, "javac on the README's example");
    PrintStream stdout = System.out;
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    try (URLClassLoader loader =
        new URLClassLoader(new URL[] {dir.toUri().toURL()}, getClass().getClassLoader())) {
      System.setOut(new PrintStream(printed, true));
      loader.loadClass("Example").getMethod("main", String[].class).invoke(null, (Object) new String[0]);
    } finally {
      System.setOut(stdout);
    }
    assertEquals("2.0 3.0", printed.toString().trim());
  }
}
