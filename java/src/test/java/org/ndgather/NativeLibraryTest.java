package org.ndgather;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The jar's native library for each platform, under a folder named after it. */
class NativeLibraryTest {
  @Test
  void platformsAreNamedAsTheJarsFolders() {
    assertEquals("linux-x86_64", NativeLibrary.platform("Linux", "amd64"));
    assertEquals("linux-aarch64", NativeLibrary.platform("Linux", "aarch64"));
    assertEquals("darwin-aarch64", NativeLibrary.platform("Mac OS X", "aarch64"));
    assertEquals("darwin-x86_64", NativeLibrary.platform("Mac OS X", "x86_64"));
    assertEquals("windows-x86_64", NativeLibrary.platform("Windows 11", "amd64"));
    assertEquals("freebsd-riscv64", NativeLibrary.platform("FreeBSD", "riscv64"));
  }

  @Test
  void thisPlatformsLibraryIsWhereTheLoaderLooks() {
    String name = System.mapLibraryName("ndgather_jni");
    assertNotNull(
        NativeLibrary.class.getResource("native/" + NativeLibrary.platform() + "/" + name),
        "the build put " + name + " under native/" + NativeLibrary.platform());
  }

  @Test
  void anotherPlatformsJarSaysWhichPlatformIsMissing() {
    UnsatisfiedLinkError e = NativeLibrary.missing("freebsd-riscv64", "libndgather_jni.so");
    assertTrue(e.getMessage().contains("freebsd-riscv64"), e.getMessage());
    assertTrue(e.getMessage().contains("-Dndgather.native.path"), e.getMessage());
  }
}
