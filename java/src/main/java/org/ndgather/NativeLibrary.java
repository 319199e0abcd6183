package org.ndgather;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * Loads the native library once: from {@code -Dndgather.native.path=FILE} if set, else from
 * the jar's resources under {@code org/ndgather/native/<os>-<arch>/} (extracted to a temporary
 * file, then {@code System.load}), as TF Java's {@code NativeLibrary} does. A jar may carry
 * the libraries of several platforms side by side; this one's is chosen by {@link #platform}.
 */
final class NativeLibrary {
  private static boolean loaded;

  private NativeLibrary() {}

  /**
   * This JVM's platform as the jar names its folders: {@code linux-x86_64}, {@code
   * linux-aarch64}, {@code darwin-aarch64}, {@code windows-x86_64}, …
   */
  static String platform() {
    return platform(System.getProperty("os.name", ""), System.getProperty("os.arch", ""));
  }

  /** The error for a jar without {@code platform}'s library {@code name}. */
  static UnsatisfiedLinkError missing(String platform, String name) {
    return new UnsatisfiedLinkError(
        "ndgather has no native library for this platform, "
            + platform
            + " (the jar holds org/ndgather/native/<platform>/"
            + name
            + " for the platforms it was built on): build the jar on this platform with "
            + "`mvn -f java/pom.xml package`, or set -Dndgather.native.path=FILE");
  }

  static String platform(String osName, String osArch) {
    String n = osName.toLowerCase(java.util.Locale.ROOT);
    String os =
        n.startsWith("linux")
            ? "linux"
            : n.startsWith("mac") || n.startsWith("darwin")
                ? "darwin"
                : n.startsWith("windows") ? "windows" : n.replaceAll("[^a-z0-9]", "");
    String a = osArch.toLowerCase(java.util.Locale.ROOT);
    String arch =
        switch (a) {
          case "amd64", "x86_64", "x64" -> "x86_64";
          case "aarch64", "arm64" -> "aarch64";
          default -> a.replaceAll("[^a-z0-9_]", "");
        };
    return os + "-" + arch;
  }

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
    String platform = platform();
    try (InputStream in =
        NativeLibrary.class.getResourceAsStream("native/" + platform + "/" + name)) {
      if (in == null) {
        throw missing(platform, name);
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
