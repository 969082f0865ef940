package dev.roomchat.internal;

import com.sun.jna.NativeLibrary;
import com.sun.jna.Platform;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.Locale;

/**
 * Finds and loads {@code libroomchat}, as sqlite-jdbc loads its own: the system
 * property {@code roomchat.library.path} (a file, or a folder holding the
 * platform's file name) names a library of the user's own; otherwise the copy
 * the jar carries at {@code dev/roomchat/native/<os>-<arch>[-musl]/} is
 * extracted to a fresh temporary folder (deleted when the JVM exits) and
 * loaded from there.
 */
final class NativeLoader {
  private NativeLoader() {}

  /** The system property naming a library of the user's own. */
  static final String PROPERTY = "roomchat.library.path";

  static NativeLibrary load() {
    String own = System.getProperty(PROPERTY);
    if (own != null && !own.isEmpty()) {
      Path path = Paths.get(own);
      if (Files.isDirectory(path)) {
        path = path.resolve(System.mapLibraryName("roomchat"));
      }
      if (!Files.isRegularFile(path)) {
        throw new UnsatisfiedLinkError(PROPERTY + " names " + path + ", which is not a file");
      }
      return NativeLibrary.getInstance(path.toAbsolutePath().toString());
    }
    String resource = "dev/roomchat/native/" + platform() + "/" + System.mapLibraryName("roomchat");
    try (InputStream in = NativeLoader.class.getClassLoader().getResourceAsStream(resource)) {
      if (in == null) {
        throw new UnsatisfiedLinkError(
            "this roomchat jar carries no native library for " + platform() + " (" + resource
                + "); set -D" + PROPERTY + "=/path/to/" + System.mapLibraryName("roomchat"));
      }
      Path dir = Files.createTempDirectory("roomchat-native-");
      Path file = dir.resolve(System.mapLibraryName("roomchat"));
      Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
      file.toFile().deleteOnExit();
      dir.toFile().deleteOnExit();
      return NativeLibrary.getInstance(file.toAbsolutePath().toString());
    } catch (IOException e) {
      UnsatisfiedLinkError error = new UnsatisfiedLinkError("cannot extract " + resource + ": " + e.getMessage());
      error.initCause(e);
      throw error;
    }
  }

  /** {@code linux-x86-64}, {@code linux-aarch64-musl}, {@code darwin-aarch64}, {@code win32-x86-64}. */
  static String platform() {
    String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
    String cpu;
    switch (arch) {
      case "amd64":
      case "x86_64":
        cpu = "x86-64";
        break;
      case "aarch64":
      case "arm64":
        cpu = "aarch64";
        break;
      default:
        cpu = arch;
    }
    String os = Platform.isWindows() ? "win32" : Platform.isMac() ? "darwin" : Platform.isLinux() ? "linux" : System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
    String name = os + "-" + cpu;
    if (Platform.isLinux() && isMusl()) {
      name += "-musl";
    }
    return name;
  }

  private static boolean isMusl() {
    try {
      for (Path p : new Path[] {Paths.get("/lib"), Paths.get("/usr/lib")}) {
        if (Files.isDirectory(p)) {
          try (var files = Files.list(p)) {
            if (files.anyMatch(f -> f.getFileName().toString().startsWith("ld-musl-"))) {
              return true;
            }
          }
        }
      }
    } catch (IOException | SecurityException e) {
      return false;
    }
    return false;
  }
}
