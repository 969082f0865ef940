package dev.roomchat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.roomchat.internal.Json;
import dev.roomchat.internal.JsonException;
import java.math.BigInteger;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The package's own strict JSON reader and writer. */
class JsonTest {
  @Test
  void membersNamedAgainInTheNextRecordsReadTheSame() {
    // Names read before come back as the same String; an escaped name, one that only
    // starts like another, or one with a surrogate pair is read in full each time.
    String text = "[{\"id\": 1, \"i\\\"d\": 2, \"idx\": 3, \"\ud83d\ude00\": 4}, {\"id\": 5, \"i\\\"d\": 6, \"idx\": 7, \"\ud83d\ude00\": 8}, {\"i\": 9, \"id\": 10}]";
    List<?> records = (List<?>) Json.parse(text);
    assertEquals(Map.of("id", 1L, "i\"d", 2L, "idx", 3L, "\ud83d\ude00", 4L), records.get(0));
    assertEquals(Map.of("id", 5L, "i\"d", 6L, "idx", 7L, "\ud83d\ude00", 8L), records.get(1));
    assertEquals(Map.of("i", 9L, "id", 10L), records.get(2));
    JsonException twice = assertThrows(JsonException.class, () -> Json.parse("[{\"a\": 1}, {\"a\": 2, \"a\": 3}]"));
    assertEquals(true, twice.getMessage().contains("comes twice"), twice.getMessage());
  }

  @Test
  void readsEveryKindOfValue() {
    Object v = Json.parse(" {\"a\": [1, -2, 3.5, 1e3, 12345678901234567890, true, false, null, \"x\\u00e9\\n\\ud83d\\ude00\"], \"b\": {}} ");
    Map<String, Object> expected = new LinkedHashMap<>();
    expected.put("a", Arrays.asList(1L, -2L, 3.5, 1000.0, new BigInteger("12345678901234567890"), true, false, null, "xé\n😀"));
    expected.put("b", Map.of());
    assertEquals(expected, v);
  }

  @Test
  void writesWhatItReads() {
    String text = "{\"a\":[1,-2,3.5,\"q\\\"\\\\\\u0001\",null,true],\"b\":{\"c\":\"é😀\"}}";
    assertEquals(text, Json.write(Json.parse(text)));
    assertEquals("[1,2]", Json.write(new Object[] {1, 2L}));
    assertEquals("20480.0", Json.write(20480.0));
    assertEquals("20480", Json.write(20480L));
  }

  @Test
  void refusesWhatIsNotStrictJson() {
    for (String bad : List.of("", " ", "{", "[1,]", "{\"a\":1,}", "01", "1.", ".5", "-", "+1", "1e", "NaN", "tru", "nul",
        "\"a", "\"\\x\"", "\"\\u12\"", "\"\u0001\"", "{a:1}", "{\"a\" 1}", "[1 2]", "1 2", "{\"a\":1,\"a\":2}",
        "\"\\ud800\"", "'a'", "[" .repeat(600) + "]".repeat(600))) {
      assertThrows(JsonException.class, () -> Json.parse(bad), bad);
    }
    assertThrows(JsonException.class, () -> Json.parse(null));
  }

  @Test
  void refusesWhatHasNoJsonForm() {
    assertThrows(JsonException.class, () -> Json.write(Double.NaN));
    assertThrows(JsonException.class, () -> Json.write(Double.POSITIVE_INFINITY));
    assertThrows(JsonException.class, () -> Json.write(new Object()));
    assertThrows(JsonException.class, () -> Json.write(Map.of(1, 2)));
    assertThrows(JsonException.class, () -> Json.write("\ud800"));
    List<Object> cycle = new java.util.ArrayList<>();
    cycle.add(cycle);
    assertThrows(JsonException.class, () -> Json.write(cycle));
  }

  @Test
  void randomTextThrowsOnlyJsonException() {
    Random random = new Random(53);
    String alphabet = "{}[]:,\"\\/ \n\t0123456789.-+eEtrufalsnu\u00e9\ud83d\ude00";
    for (int i = 0; i < 20000; i++) {
      StringBuilder s = new StringBuilder();
      int n = random.nextInt(24);
      for (int j = 0; j < n; j++) {
        s.append(alphabet.charAt(random.nextInt(alphabet.length())));
      }
      try {
        Object v = Json.parse(s.toString());
        assertEquals(v, Json.parse(Json.write(v)), s.toString());
      } catch (JsonException expected) {
        // the only exception bad text may throw
      }
    }
  }
}
