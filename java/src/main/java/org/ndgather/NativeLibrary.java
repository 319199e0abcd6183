package org.ndgather;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * Loads the native library once: from {@code -Dndgather.native.path=FILE} if set, else from
 * the jar's resources (extracted to a temporary file, then {@code System.load}), as TF Java's
 * {@code NativeLibrary} does.
 */
final class NativeLibrary {
  private static boolean loaded;

  private NativeLibrary() {}

  static synchronized void load() {
    if (loaded) {
      return;
    }
    String given = System.getProperty("ndgather.native.path");
    if (given != null && !given.isEmpty()) {
      System.load(Path.of(given).toAbsolutePath().toString());
      loaded = true;
      return;
    }
    String name = System.mapLibraryName("ndgather_jni");
    try (InputStream in = NativeLibrary.class.getResourceAsStream("native/" + name)) {
      if (in == null) {
        throw new UnsatisfiedLinkError(
            "ndgather's native library (" + name + ") is not in the jar: build it with "
                + "`mvn -f java/pom.xml package`, or set -Dndgather.native.path=FILE");
      }
      Path dir = Files.createTempDirectory("ndgather");
      Path file = dir.resolve(name);
      Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
      file.toFile().deleteOnExit();
      dir.toFile().deleteOnExit();
      System.load(file.toAbsolutePath().toString());
      loaded = true;
    } catch (IOException e) {
      throw new UnsatisfiedLinkError("cannot extract ndgather's native library: " + e);
    }
  }
}
