package dev.roomchat.internal;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small, strict JSON reader and writer (RFC 8259), so that the package
 * depends on nothing but JNA and SLF4J's API. Reads objects as unmodifiable
 * insertion-ordered {@code Map<String, Object>}, arrays as unmodifiable
 * {@code List<Object>}, strings as {@code String}, {@code true}/{@code false}
 * as {@code Boolean}, {@code null} as {@code null}, and numbers as
 * {@code Long} (an integer that fits), {@code BigInteger} (one that does not)
 * or {@code Double} (a fraction or exponent; {@code BigDecimal} when a double
 * cannot hold it). Bad input of any kind (text, depth over 512, a duplicate
 * key, a lone surrogate) throws {@link JsonException} and nothing else.
 */
public final class Json {
  private Json() {}

  /** The deepest nesting read or written. */
  public static final int MAX_DEPTH = 512;

  // ---------------------------------------------------------------- reading

  /** The value of {@code text}, which must be exactly one JSON value (whitespace around it allowed). */
  public static Object parse(String text) {
    if (text == null) {
      throw new JsonException("no JSON text (null)");
    }
    Reader r = new Reader(text);
    r.space();
    Object value = r.value(0);
    r.space();
    if (r.pos != text.length()) {
      throw r.error("text after the JSON value");
    }
    return value;
  }

  private static final class Reader {
    final String s;
    int pos;
    /** Member names read so far, by hash: a listing's records repeat theirs, one String each. */
    private final String[] names = new String[64];

    Reader(String s) {
      this.s = s;
    }

    JsonException error(String what) {
      return new JsonException("invalid JSON at offset " + pos + ": " + what);
    }

    void space() {
      while (pos < s.length()) {
        char c = s.charAt(pos);
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
          pos++;
        } else {
          break;
        }
      }
    }

    Object value(int depth) {
      if (depth >= MAX_DEPTH) {
        throw error("nested deeper than " + MAX_DEPTH);
      }
      if (pos >= s.length()) {
        throw error("the text ends where a value was expected");
      }
      char c = s.charAt(pos);
      switch (c) {
        case '{':
          return object(depth);
        case '[':
          return array(depth);
        case '"':
          return string();
        case 't':
          literal("true");
          return Boolean.TRUE;
        case 'f':
          literal("false");
          return Boolean.FALSE;
        case 'n':
          literal("null");
          return null;
        default:
          if (c == '-' || (c >= '0' && c <= '9')) {
            return number();
          }
          throw error("unexpected character " + describe(c));
      }
    }

    void literal(String word) {
      if (!s.startsWith(word, pos)) {
        throw error("expected " + word);
      }
      pos += word.length();
    }

    Map<String, Object> object(int depth) {
      pos++; // {
      LinkedHashMap<String, Object> map = new LinkedHashMap<>();
      space();
      if (pos < s.length() && s.charAt(pos) == '}') {
        pos++;
        return Collections.unmodifiableMap(map);
      }
      while (true) {
        space();
        if (pos >= s.length() || s.charAt(pos) != '"') {
          throw error("expected a member's name in quotes");
        }
        String key = name();
        space();
        if (pos >= s.length() || s.charAt(pos) != ':') {
          throw error("expected ':' after a member's name");
        }
        pos++;
        space();
        Object v = value(depth + 1);
        int size = map.size();
        map.put(key, v);
        if (map.size() == size) { // the name was there already
          throw error("the member name " + quote(key) + " comes twice");
        }
        space();
        if (pos >= s.length()) {
          throw error("the text ends inside an object");
        }
        char c = s.charAt(pos++);
        if (c == '}') {
          return Collections.unmodifiableMap(map);
        }
        if (c != ',') {
          pos--;
          throw error("expected ',' or '}' in an object");
        }
      }
    }

    List<Object> array(int depth) {
      pos++; // [
      ArrayList<Object> list = new ArrayList<>();
      space();
      if (pos < s.length() && s.charAt(pos) == ']') {
        pos++;
        return Collections.unmodifiableList(list);
      }
      while (true) {
        space();
        list.add(value(depth + 1));
        space();
        if (pos >= s.length()) {
          throw error("the text ends inside an array");
        }
        char c = s.charAt(pos++);
        if (c == ']') {
          return Collections.unmodifiableList(list);
        }
        if (c != ',') {
          pos--;
          throw error("expected ',' or ']' in an array");
        }
      }
    }

    /** A member's name: {@link #string()}, the same String again for a name read before. */
    String name() {
      int start = pos + 1;
      int h = 0;
      for (int i = start, n = s.length(); i < n; i++) {
        char c = s.charAt(i);
        if (c == '"') {
          int slot = (h ^ (h >>> 16)) & (names.length - 1);
          String seen = names[slot];
          if (seen != null && seen.length() == i - start && s.regionMatches(start, seen, 0, i - start)) {
            pos = i + 1;
            return seen;
          }
          String text = string();
          names[slot] = text;
          return text;
        }
        if (c == '\\' || c < 0x20 || Character.isSurrogate(c)) {
          break; // read (and checked) in full
        }
        h = 31 * h + c;
      }
      return string();
    }

    String string() {
      pos++; // "
      // Most strings hold no escape: cut them out of the text whole.
      int start = pos;
      boolean surrogate = false;
      for (int i = start, n = s.length(); i < n; i++) {
        char c = s.charAt(i);
        if (c == '"') {
          pos = i + 1;
          String text = s.substring(start, i);
          if (surrogate) {
            checkSurrogates(text, this);
          }
          return text;
        }
        if (c == '\\' || c < 0x20) {
          break;
        }
        surrogate |= Character.isSurrogate(c);
      }
      StringBuilder out = new StringBuilder();
      while (true) {
        if (pos >= s.length()) {
          throw error("the text ends inside a string");
        }
        char c = s.charAt(pos++);
        if (c == '"') {
          break;
        }
        if (c == '\\') {
          if (pos >= s.length()) {
            throw error("the text ends inside an escape");
          }
          char e = s.charAt(pos++);
          switch (e) {
            case '"': out.append('"'); break;
            case '\\': out.append('\\'); break;
            case '/': out.append('/'); break;
            case 'b': out.append('\b'); break;
            case 'f': out.append('\f'); break;
            case 'n': out.append('\n'); break;
            case 'r': out.append('\r'); break;
            case 't': out.append('\t'); break;
            case 'u': out.append(hex4()); break;
            default:
              pos--;
              throw error("unknown escape \\" + describe(e));
          }
        } else if (c < 0x20) {
          pos--;
          throw error("a control character inside a string");
        } else {
          out.append(c);
        }
      }
      String text = out.toString();
      checkSurrogates(text, this);
      return text;
    }

    char hex4() {
      if (pos + 4 > s.length()) {
        throw error("a \\u escape needs four hex digits");
      }
      int v = 0;
      for (int i = 0; i < 4; i++) {
        int d = Character.digit(s.charAt(pos), 16);
        if (d < 0) {
          throw error("a \\u escape needs four hex digits");
        }
        v = v * 16 + d;
        pos++;
      }
      return (char) v;
    }

    Object number() {
      int start = pos;
      if (s.charAt(pos) == '-') {
        pos++;
      }
      if (pos >= s.length()) {
        throw error("a number without digits");
      }
      if (s.charAt(pos) == '0') {
        pos++;
        if (pos < s.length() && isDigit(s.charAt(pos))) {
          throw error("a number with a leading zero");
        }
      } else if (isDigit(s.charAt(pos))) {
        while (pos < s.length() && isDigit(s.charAt(pos))) pos++;
      } else {
        throw error("a number without digits");
      }
      boolean integral = true;
      if (pos < s.length() && s.charAt(pos) == '.') {
        integral = false;
        pos++;
        if (pos >= s.length() || !isDigit(s.charAt(pos))) {
          throw error("a fraction without digits");
        }
        while (pos < s.length() && isDigit(s.charAt(pos))) pos++;
      }
      if (pos < s.length() && (s.charAt(pos) == 'e' || s.charAt(pos) == 'E')) {
        integral = false;
        pos++;
        if (pos < s.length() && (s.charAt(pos) == '+' || s.charAt(pos) == '-')) pos++;
        if (pos >= s.length() || !isDigit(s.charAt(pos))) {
          throw error("an exponent without digits");
        }
        while (pos < s.length() && isDigit(s.charAt(pos))) pos++;
      }
      String text = s.substring(start, pos);
      if (integral) {
        if (text.length() <= 18) {
          return Long.parseLong(text);
        }
        BigInteger big = new BigInteger(text);
        return big.bitLength() < 64 ? (Object) big.longValue() : big;
      }
      double d = Double.parseDouble(text);
      if (Double.isInfinite(d)) {
        return new BigDecimal(text);
      }
      return d;
    }

    static boolean isDigit(char c) {
      return c >= '0' && c <= '9';
    }
  }

  private static void checkSurrogates(String text, Reader at) {
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (Character.isHighSurrogate(c)) {
        if (i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
          i++;
          continue;
        }
        throw at == null ? new JsonException("a string holds a lone surrogate") : at.error("a string holds a lone surrogate");
      }
      if (Character.isLowSurrogate(c)) {
        throw at == null ? new JsonException("a string holds a lone surrogate") : at.error("a string holds a lone surrogate");
      }
    }
  }

  private static String describe(char c) {
    return c < 0x20 || c > 0x7e ? String.format("U+%04X", (int) c) : "'" + c + "'";
  }

  // ---------------------------------------------------------------- writing

  /**
   * The JSON text of {@code value}: a {@code Map} with {@code String} keys, an
   * {@code Iterable} or array of {@code Object}, a {@code CharSequence}, a
   * {@code Boolean}, a finite {@code Number}, an {@code Enum} (its
   * {@code toString()}), {@link JsonValue}, or {@code null}.
   */
  public static String write(Object value) {
    StringBuilder out = new StringBuilder();
    write(out, value, 0);
    return out.toString();
  }

  private static void write(StringBuilder out, Object v, int depth) {
    if (depth >= MAX_DEPTH) {
      throw new JsonException("a value nested deeper than " + MAX_DEPTH + " (a cycle?)");
    }
    if (v == null) {
      out.append("null");
    } else if (v instanceof JsonValue) {
      write(out, ((JsonValue) v).toJson(), depth + 1);
    } else if (v instanceof CharSequence) {
      quote(out, v.toString());
    } else if (v instanceof Boolean) {
      out.append(v.toString());
    } else if (v instanceof Double || v instanceof Float) {
      double d = ((Number) v).doubleValue();
      if (Double.isNaN(d) || Double.isInfinite(d)) {
        throw new JsonException("JSON has no form for " + d);
      }
      // A double stays a double (20480.0), as the JSON it came from had it.
      out.append(v instanceof Float ? Float.toString((Float) v) : Double.toString(d));
    } else if (v instanceof BigDecimal) {
      out.append(((BigDecimal) v).toString());
    } else if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte || v instanceof BigInteger) {
      out.append(v.toString());
    } else if (v instanceof Number) {
      throw new JsonException("JSON has no form for a " + v.getClass().getName());
    } else if (v instanceof Map) {
      out.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
        if (!(e.getKey() instanceof String)) {
          throw new JsonException("a JSON object's names are strings, not " + (e.getKey() == null ? "null" : e.getKey().getClass().getName()));
        }
        if (!first) out.append(',');
        first = false;
        quote(out, (String) e.getKey());
        out.append(':');
        write(out, e.getValue(), depth + 1);
      }
      out.append('}');
    } else if (v instanceof Iterable) {
      out.append('[');
      boolean first = true;
      for (Object item : (Iterable<?>) v) {
        if (!first) out.append(',');
        first = false;
        write(out, item, depth + 1);
      }
      out.append(']');
    } else if (v instanceof Object[]) {
      write(out, java.util.Arrays.asList((Object[]) v), depth);
    } else if (v instanceof Enum) {
      quote(out, v.toString());
    } else {
      throw new JsonException("JSON has no form for a " + v.getClass().getName());
    }
  }

  private static void quote(StringBuilder out, String s) {
    checkSurrogates(s, null);
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"': out.append("\\\""); break;
        case '\\': out.append("\\\\"); break;
        case '\n': out.append("\\n"); break;
        case '\r': out.append("\\r"); break;
        case '\t': out.append("\\t"); break;
        case '\b': out.append("\\b"); break;
        case '\f': out.append("\\f"); break;
        default:
          if (c < 0x20 || c == 0x2028 || c == 0x2029) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
      }
    }
    out.append('"');
  }

  private static String quote(String s) {
    StringBuilder out = new StringBuilder();
    quote(out, s.length() > 40 ? s.substring(0, 40) + "…" : s);
    return out.toString();
  }

  /** A value that writes itself as another JSON value (its {@code toJson()}). */
  public interface JsonValue {
    /** The value to write in its place. */
    Object toJson();
  }
}
