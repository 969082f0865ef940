package dev.roomchat.internal;

import com.sun.jna.NativeLibrary;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.Locale;

/**
 * Finds and loads {@code libroomchat}, as sqlite-jdbc loads its own: the system
 * property {@code roomchat.library.path} (a file, or a folder holding the
 * platform's file name) names a library of the user's own; otherwise the copy
 * the jar carries at {@code dev/roomchat/native/<platform>/} is extracted to a
 * fresh temporary folder (deleted when the JVM exits) and loaded from there.
 *
 * <p>{@code <platform>} is JNA's resource prefix ({@code linux-x86-64},
 * {@code linux-aarch64}, {@code darwin-aarch64}, {@code darwin-x86-64},
 * {@code win32-x86-64}), with {@code -musl} after it on a Linux whose C library
 * is musl (Alpine): JNA has no name for that, and a glibc library does not load there.
 */
final class NativeLoader {
  private NativeLoader() {}

  /** The system property naming a library of the user's own. */
  static final String PROPERTY = "roomchat.library.path";

  /** The jar's folder of natives. */
  static final String RESOURCE_ROOT = "dev/roomchat/native/";

  /** The file the library was loaded from (the extracted copy, or the user's own). */
  static volatile Path loadedFrom;

  static NativeLibrary load() {
    String own = System.getProperty(PROPERTY);
    if (own != null && !own.isEmpty()) {
      return loadOwn(own);
    }
    String platform = platform(System.getProperty("os.name", ""), System.getProperty("os.arch", ""), isMusl());
    String resource = RESOURCE_ROOT + platform + "/" + System.mapLibraryName("roomchat");
    try (InputStream in = NativeLoader.class.getClassLoader().getResourceAsStream(resource)) {
      if (in == null) {
        throw new UnsatisfiedLinkError(
            "this roomchat jar carries no native library for " + platform + " (" + resource
                + "); set -D" + PROPERTY + "=/path/to/" + System.mapLibraryName("roomchat"));
      }
      Path dir = Files.createTempDirectory("roomchat-native-");
      Path file = dir.resolve(System.mapLibraryName("roomchat"));
      Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
      file.toFile().deleteOnExit();
      dir.toFile().deleteOnExit();
      loadedFrom = file.toAbsolutePath();
      return NativeLibrary.getInstance(loadedFrom.toString());
    } catch (IOException e) {
      UnsatisfiedLinkError error = new UnsatisfiedLinkError("cannot extract " + resource + ": " + e.getMessage());
      error.initCause(e);
      throw error;
    }
  }

  /** What to do about a bad property, at the end of each of its errors. */
  private static String whatToDo(String fileName) {
    return ": set -D" + PROPERTY + " to the " + fileName + " built for " + com.sun.jna.Platform.RESOURCE_PREFIX
        + " (or the folder holding it), or leave it unset to load the copy this jar carries";
  }

  /** Loads the library the property names; every failure says what the property named and what to do. */
  static NativeLibrary loadOwn(String property) {
    String fileName = System.mapLibraryName("roomchat");
    Path path = ownLibrary(property, fileName);
    try {
      NativeLibrary library = NativeLibrary.getInstance(path.toString());
      loadedFrom = path;
      return library;
    } catch (UnsatisfiedLinkError e) {
      UnsatisfiedLinkError error = new UnsatisfiedLinkError(
          PROPERTY + " names " + path + ", which does not load (" + e.getMessage() + ")" + whatToDo(fileName));
      error.initCause(e);
      throw error;
    }
  }

  /** The library the property names: the file itself, or {@code fileName} in the folder it names. */
  static Path ownLibrary(String property, String fileName) {
    Path path;
    try {
      path = Paths.get(property).toAbsolutePath();
    } catch (java.nio.file.InvalidPathException e) {
      UnsatisfiedLinkError error = new UnsatisfiedLinkError(PROPERTY + " is not a path (" + e.getMessage() + ")" + whatToDo(fileName));
      error.initCause(e);
      throw error;
    }
    if (Files.isDirectory(path)) {
      Path file = path.resolve(fileName);
      if (!Files.isRegularFile(file)) {
        throw new UnsatisfiedLinkError(PROPERTY + " names the folder " + path + ", which holds no " + fileName + whatToDo(fileName));
      }
      return file;
    }
    if (!Files.isRegularFile(path)) {
      throw new UnsatisfiedLinkError(PROPERTY + " names " + path + ", which is not a file" + whatToDo(fileName));
    }
    return path;
  }

  /**
   * The jar's folder for a JVM's {@code os.name} and {@code os.arch}, and whether its C
   * library is musl: {@code linux-x86-64}, {@code linux-aarch64-musl}, {@code darwin-aarch64},
   * {@code win32-x86-64}. The names are JNA's ({@code Platform.RESOURCE_PREFIX}) for the
   * platforms shipped.
   */
  static String platform(String osName, String osArch, boolean musl) {
    String arch = osArch.toLowerCase(Locale.ROOT).trim();
    String cpu;
    switch (arch) {
      case "amd64":
      case "x86_64":
      case "x86-64":
        cpu = "x86-64";
        break;
      case "aarch64":
      case "arm64":
        cpu = "aarch64";
        break;
      default:
        cpu = arch;
    }
    String name = osName.toLowerCase(Locale.ROOT);
    String os;
    if (name.startsWith("linux")) {
      os = "linux";
    } else if (name.startsWith("mac") || name.startsWith("darwin")) {
      os = "darwin";
    } else if (name.startsWith("windows")) {
      os = "win32";
    } else {
      os = name.replaceAll("\\s+", "");
    }
    return os + "-" + cpu + (os.equals("linux") && musl ? "-musl" : "");
  }

  /**
   * Whether this process runs on musl: the C library mapped into it, read from
   * {@code /proc/self/maps} (as sqlite-jdbc reads {@code /proc/self/map_files}); when that
   * cannot be read, whether a musl loader is installed. Only the mapped library tells:
   * a glibc system may have musl installed beside (Debian's {@code musl} package puts
   * {@code /lib/ld-musl-x86_64.so.1} there) and its JVM still runs on glibc.
   */
  static boolean isMusl() {
    if (!System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("linux")) {
      return false;
    }
    try (BufferedReader maps = Files.newBufferedReader(Paths.get("/proc/self/maps"), StandardCharsets.ISO_8859_1)) {
      Boolean musl = muslFromMaps(maps);
      if (musl != null) {
        return musl;
      }
    } catch (IOException | SecurityException e) {
      // Not readable (a sandbox): the installed loader is the best guess left.
    }
    return muslLoaderInstalled(Paths.get("/lib"));
  }

  /**
   * musl ({@code true}) or glibc ({@code false}) by the C library among the mapped files
   * of a {@code /proc/<pid>/maps}; {@code null} when neither is there.
   */
  static Boolean muslFromMaps(BufferedReader maps) throws IOException {
    String line;
    while ((line = maps.readLine()) != null) {
      int slash = line.indexOf('/');
      if (slash < 0) {
        continue;
      }
      String file = line.substring(line.lastIndexOf('/') + 1);
      if (file.startsWith("ld-musl-") || file.startsWith("libc.musl-")) {
        return true;
      }
      if (file.equals("libc.so.6") || file.startsWith("ld-linux")) {
        return false;
      }
    }
    return null;
  }

  /** Whether {@code dir} holds a musl dynamic loader ({@code ld-musl-<arch>.so.1}). */
  static boolean muslLoaderInstalled(Path dir) {
    if (!Files.isDirectory(dir)) {
      return false;
    }
    try (DirectoryStream<Path> loaders = Files.newDirectoryStream(dir, "ld-musl-*")) {
      return loaders.iterator().hasNext();
    } catch (IOException | SecurityException e) {
      return false;
    }
  }
}
