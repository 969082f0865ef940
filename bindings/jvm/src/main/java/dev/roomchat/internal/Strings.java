package dev.roomchat.internal;

import com.sun.jna.Pointer;
import java.nio.charset.StandardCharsets;

/** Text across the C boundary: NUL-terminated UTF-8 both ways. */
public final class Strings {
  private Strings() {}

  /**
   * {@code text} as a NUL-terminated UTF-8 C string, {@code null} for null.
   *
   * @throws IllegalArgumentException when it holds a NUL character (C would cut it there) or a lone surrogate (UTF-8 has no form for it)
   */
  public static byte[] c(String text) {
    if (text == null) {
      return null;
    }
    if (text.indexOf('\0') >= 0) {
      throw new IllegalArgumentException("holds a NUL character");
    }
    // UTF-8 has no form for a lone surrogate: getBytes would send '?' in its place.
    for (int i = 0; i < text.length(); i++) {
      char ch = text.charAt(i);
      if (Character.isSurrogate(ch)) {
        if (Character.isHighSurrogate(ch) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
          i++;
        } else {
          throw new IllegalArgumentException("holds a lone surrogate");
        }
      }
    }
    byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
    byte[] out = new byte[utf8.length + 1];
    System.arraycopy(utf8, 0, out, 0, utf8.length);
    return out;
  }

  /** The C string at {@code address} (borrowed: not freed), {@code null} for NULL. */
  public static String borrowed(long address) {
    if (address == 0) {
      return null;
    }
    return new Pointer(address).getString(0, "UTF-8");
  }

  /** The C string at {@code address}, then freed with {@code roomchat_string_free}. */
  public static String take(long address) {
    if (address == 0) {
      return null;
    }
    try {
      return borrowed(address);
    } finally {
      Native.roomchat_string_free(address);
    }
  }
}
