package dev.roomchat;

import dev.roomchat.internal.JsonException;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/** What the generated records' {@code fromJson} use: typed reads of a decoded JSON object. */
final class Records {
  private Records() {}

  @SuppressWarnings("unchecked")
  static Map<String, Object> object(Object json, String record) {
    if (!(json instanceof Map)) {
      throw new JsonException(record + " is a JSON object, not " + describe(json));
    }
    return (Map<String, Object>) json;
  }

  static String string(Map<String, Object> m, String name) {
    Object v = m.get(name);
    if (v == null || v instanceof String) {
      return (String) v;
    }
    throw new JsonException(name + " is a string, not " + describe(v));
  }

  static Boolean bool(Map<String, Object> m, String name) {
    Object v = m.get(name);
    if (v == null || v instanceof Boolean) {
      return (Boolean) v;
    }
    throw new JsonException(name + " is a boolean, not " + describe(v));
  }

  static Long integer(Map<String, Object> m, String name) {
    Object v = m.get(name);
    if (v == null || v instanceof Long) {
      return (Long) v;
    }
    if (v instanceof Double && (Double) v == Math.rint((Double) v) && Math.abs((Double) v) < 9.0e15) {
      return ((Double) v).longValue();
    }
    if (v instanceof BigInteger) {
      throw new JsonException(name + " is too large for a long");
    }
    throw new JsonException(name + " is an integer, not " + describe(v));
  }

  static Double number(Map<String, Object> m, String name) {
    Object v = m.get(name);
    if (v == null) {
      return null;
    }
    if (v instanceof Number) {
      return ((Number) v).doubleValue();
    }
    throw new JsonException(name + " is a number, not " + describe(v));
  }

  static Object any(Map<String, Object> m, String name) {
    return m.get(name);
  }

  static <T> T record(Map<String, Object> m, String name, Function<Object, T> decode) {
    Object v = m.get(name);
    return v == null ? null : decode.apply(v);
  }

  static <T> List<T> list(Map<String, Object> m, String name, Function<Object, T> decode) {
    Object v = m.get(name);
    return v == null ? null : list(v, decode);
  }

  static <T> List<T> list(Object json, Function<Object, T> decode) {
    if (!(json instanceof List)) {
      throw new JsonException("a JSON array, not " + describe(json));
    }
    List<?> items = (List<?>) json;
    List<T> out = new ArrayList<>(items.size());
    for (Object item : items) {
      out.add(decode.apply(item));
    }
    return Collections.unmodifiableList(out);
  }

  /** The members not in {@code known}: a record's {@code extra()}. */
  static Map<String, Object> extra(Map<String, Object> m, Set<String> known) {
    Map<String, Object> extra = null;
    for (Map.Entry<String, Object> e : m.entrySet()) {
      if (!known.contains(e.getKey())) {
        if (extra == null) {
          extra = new LinkedHashMap<>();
        }
        extra.put(e.getKey(), e.getValue());
      }
    }
    return extra == null ? Collections.emptyMap() : Collections.unmodifiableMap(extra);
  }

  private static String describe(Object v) {
    if (v == null) return "null";
    if (v instanceof Map) return "an object";
    if (v instanceof List) return "an array";
    if (v instanceof String) return "a string";
    if (v instanceof Boolean) return "a boolean";
    if (v instanceof Number) return "a number";
    return v.getClass().getSimpleName();
  }
}
