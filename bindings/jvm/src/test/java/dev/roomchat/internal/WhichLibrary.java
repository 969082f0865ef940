package dev.roomchat.internal;

import com.sun.jna.Pointer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;

/**
 * Loads the library as the package does and prints where from (NativeLoaderTest runs it
 * in a JVM of its own, with and without {@code roomchat.library.path}): the loader's
 * file, every {@code libroomchat} file mapped into the process, and the library's version.
 */
public final class WhichLibrary {
  private WhichLibrary() {}

  public static void main(String[] args) throws Exception {
    Native.init();
    System.out.println("loaded " + NativeLoader.loadedFrom);
    try (var lines = Files.lines(Paths.get("/proc/self/maps"), StandardCharsets.ISO_8859_1)) {
      lines.filter(l -> l.contains("libroomchat"))
          .map(l -> l.substring(l.indexOf('/')))
          .distinct()
          .forEach(f -> System.out.println("mapped " + f));
    }
    System.out.println("version " + new Pointer(Native.roomchat_version()).getString(0, "UTF-8"));
  }
}
