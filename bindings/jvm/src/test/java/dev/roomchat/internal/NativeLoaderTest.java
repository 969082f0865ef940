package dev.roomchat.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which native library the loader picks, and the property that names one of the user's own. */
class NativeLoaderTest {

  @Test
  void platformFolderFromOsNameArchAndLibc() {
    assertEquals("linux-x86-64", NativeLoader.platform("Linux", "amd64", false));
    assertEquals("linux-x86-64", NativeLoader.platform("Linux", "x86_64", false));
    assertEquals("linux-aarch64", NativeLoader.platform("Linux", "aarch64", false));
    assertEquals("linux-x86-64-musl", NativeLoader.platform("Linux", "amd64", true));
    assertEquals("linux-aarch64-musl", NativeLoader.platform("Linux", "aarch64", true));
    assertEquals("darwin-aarch64", NativeLoader.platform("Mac OS X", "aarch64", false));
    assertEquals("darwin-x86-64", NativeLoader.platform("Mac OS X", "x86_64", false));
    assertEquals("win32-x86-64", NativeLoader.platform("Windows 11", "amd64", false));
    assertEquals("win32-aarch64", NativeLoader.platform("Windows Server 2025", "aarch64", false));
    // musl is a Linux name only.
    assertEquals("darwin-aarch64", NativeLoader.platform("Mac OS X", "aarch64", true));
  }

  @Test
  void thisJvmsFolderIsJnasNameAndTheJarHasIt() throws IOException {
    String platform = NativeLoader.platform(System.getProperty("os.name"), System.getProperty("os.arch"), NativeLoader.isMusl());
    if (!NativeLoader.isMusl()) {
      assertEquals(com.sun.jna.Platform.RESOURCE_PREFIX, platform);
    }
    String resource = NativeLoader.RESOURCE_ROOT + platform + "/" + System.mapLibraryName("roomchat");
    try (InputStream in = getClass().getClassLoader().getResourceAsStream(resource)) {
      assertNotNull(in, resource);
    }
  }

  @Test
  void libcFromTheMappedFiles() throws IOException {
    // A glibc JVM's (Debian) and a musl JVM's (Alpine's OpenJDK) maps, abridged.
    String glibc = String.join("\n",
        "55d0c5a00000-55d0c5a01000 r--p 00000000 fd:01 2621450    /usr/lib/jvm/java-17-openjdk-amd64/bin/java",
        "7f3c1a200000-7f3c1a228000 r--p 00000000 fd:01 1310866    /usr/lib/x86_64-linux-gnu/libc.so.6",
        "7f3c1a600000-7f3c1a602000 r--p 00000000 fd:01 1310860    /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
        "7ffd5b3f1000-7ffd5b412000 rw-p 00000000 00:00 0          [stack]");
    String musl = String.join("\n",
        "5596b8a4a000-5596b8a4b000 r--p 00000000 00:2f 1840       /usr/lib/jvm/java-17-openjdk/bin/java",
        "7f6d4a0c4000-7f6d4a0d8000 r--p 00000000 00:2f 1180       /lib/ld-musl-x86_64.so.1",
        "7ffc2f0a5000-7ffc2f0c6000 rw-p 00000000 00:00 0          [stack]");
    String aarch64Musl = "ffff8a3c0000-ffff8a44c000 r-xp 00000000 00:2f 1180 /lib/ld-musl-aarch64.so.1";
    String anonymous = "7ffd5b3f1000-7ffd5b412000 rw-p 00000000 00:00 0          [stack]";
    assertEquals(Boolean.FALSE, NativeLoader.muslFromMaps(new BufferedReader(new StringReader(glibc))));
    assertEquals(Boolean.TRUE, NativeLoader.muslFromMaps(new BufferedReader(new StringReader(musl))));
    assertEquals(Boolean.TRUE, NativeLoader.muslFromMaps(new BufferedReader(new StringReader(aarch64Musl))));
    assertNull(NativeLoader.muslFromMaps(new BufferedReader(new StringReader(anonymous))));
  }

  @Test
  void thisProcessIsGlibcEvenWithAMuslLoaderInstalled(@TempDir Path lib) throws IOException {
    // This machine's JVM runs on glibc: its own maps say so.
    assertFalse(NativeLoader.isMusl());
    // A musl loader installed beside glibc (Debian's musl package) is what the fallback
    // sees: the maps, read first, decide.
    Files.createFile(lib.resolve("ld-musl-x86_64.so.1"));
    assertTrue(NativeLoader.muslLoaderInstalled(lib));
    try (BufferedReader maps = Files.newBufferedReader(Paths.get("/proc/self/maps"), StandardCharsets.ISO_8859_1)) {
      assertEquals(Boolean.FALSE, NativeLoader.muslFromMaps(maps));
    }
  }

  @Test
  void thePropertyLoadsACopyOfTheUsersOwn(@TempDir Path dir) throws Exception {
    Path own = dir.resolve("mine").resolve(System.mapLibraryName("roomchat"));
    Files.createDirectories(own.getParent());
    String resource = NativeLoader.RESOURCE_ROOT + com.sun.jna.Platform.RESOURCE_PREFIX + "/" + System.mapLibraryName("roomchat");
    try (InputStream in = getClass().getClassLoader().getResourceAsStream(resource)) {
      assertNotNull(in, resource);
      Files.copy(in, own);
    }

    // The file named, then its folder: that file is the one mapped, and no other libroomchat.
    for (Path named : new Path[] {own, own.getParent()}) {
      Child child = runWhichLibrary("-D" + NativeLoader.PROPERTY + "=" + named);
      assertEquals(0, child.exit, child.output);
      assertTrue(child.lines.contains("loaded " + own.toRealPath()) || child.lines.contains("loaded " + own.toAbsolutePath()), child.output);
      List<String> mapped = child.mapped();
      assertEquals(List.of(own.toRealPath().toString()), mapped, child.output);
      assertTrue(child.output.contains("version "), child.output);
    }

    // Without it: the jar's copy, extracted elsewhere.
    Child fromJar = runWhichLibrary();
    assertEquals(0, fromJar.exit, fromJar.output);
    assertEquals(1, fromJar.mapped().size(), fromJar.output);
    assertNotEquals(own.toRealPath().toString(), fromJar.mapped().get(0), fromJar.output);
    assertTrue(fromJar.mapped().get(0).contains("roomchat-native-"), fromJar.output);

    // A name that is not a file: a clear error naming the property, nothing else loaded.
    Child missing = runWhichLibrary("-D" + NativeLoader.PROPERTY + "=" + dir.resolve("nothing-here.so"));
    assertNotEquals(0, missing.exit, missing.output);
    assertTrue(missing.output.contains(NativeLoader.PROPERTY + " names " + dir.resolve("nothing-here.so") + ", which is not a file"), missing.output);
  }


  /**
   * A bad {@code roomchat.library.path}: a folder without the library, a missing file, a
   * relative name, a file that is no library, a name that is no path. Each is an
   * UnsatisfiedLinkError naming the property and what it named (absolute) and saying
   * what to do.
   */
  @Test
  void aBadPropertySaysWhatItNamedAndWhatToDo(@TempDir Path dir) throws Exception {
    String fileName = System.mapLibraryName("roomchat");
    String todo = "set -D" + NativeLoader.PROPERTY + " to the " + fileName;
    UnsatisfiedLinkError empty = org.junit.jupiter.api.Assertions.assertThrows(UnsatisfiedLinkError.class, () -> NativeLoader.loadOwn(dir.toString()));
    assertTrue(empty.getMessage().contains("names the folder " + dir.toAbsolutePath() + ", which holds no " + fileName), empty.getMessage());
    assertTrue(empty.getMessage().contains(todo), empty.getMessage());

    UnsatisfiedLinkError missing = org.junit.jupiter.api.Assertions.assertThrows(UnsatisfiedLinkError.class,
        () -> NativeLoader.loadOwn(dir.resolve("nothing-here.so").toString()));
    assertTrue(missing.getMessage().contains(todo), missing.getMessage());

    UnsatisfiedLinkError relative = org.junit.jupiter.api.Assertions.assertThrows(UnsatisfiedLinkError.class, () -> NativeLoader.loadOwn("no-such-folder/lib.so"));
    assertTrue(relative.getMessage().contains(Paths.get("no-such-folder/lib.so").toAbsolutePath().toString()), relative.getMessage());

    Path text = dir.resolve(fileName);
    Files.writeString(text, "not a library");
    for (String named : new String[] {text.toString(), dir.toString()}) {
      UnsatisfiedLinkError notALibrary = org.junit.jupiter.api.Assertions.assertThrows(UnsatisfiedLinkError.class, () -> NativeLoader.loadOwn(named));
      assertTrue(notALibrary.getMessage().startsWith(NativeLoader.PROPERTY + " names " + text.toAbsolutePath() + ", which does not load"), notALibrary.getMessage());
      assertTrue(notALibrary.getMessage().contains(todo), notALibrary.getMessage());
    }

    UnsatisfiedLinkError notAPath = org.junit.jupiter.api.Assertions.assertThrows(UnsatisfiedLinkError.class, () -> NativeLoader.loadOwn("bad\0name"));
    assertTrue(notAPath.getMessage().contains(todo), notAPath.getMessage());
  }

  private static final class Child {
    int exit;
    String output;
    List<String> lines;

    List<String> mapped() {
      List<String> files = new ArrayList<>();
      for (String line : lines) {
        if (line.startsWith("mapped ")) {
          files.add(line.substring("mapped ".length()));
        }
      }
      return files;
    }
  }

  private static Child runWhichLibrary(String... properties) throws Exception {
    List<String> command = new ArrayList<>();
    command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
    command.add("--enable-native-access=ALL-UNNAMED");
    command.addAll(List.of(properties));
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(WhichLibrary.class.getName());
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(process.waitFor(120, TimeUnit.SECONDS), "the child JVM did not end");
    Child child = new Child();
    child.exit = process.exitValue();
    child.output = output;
    child.lines = output.lines().toList();
    return child;
  }
}
