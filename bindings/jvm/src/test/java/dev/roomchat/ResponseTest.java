package dev.roomchat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.roomchat.testing.RoomchatEmulator;
import dev.roomchat.testing.RoomchatExtension;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** A call by an operation's name with the answer's status, headers and attempts; the raw request. */
@ExtendWith(RoomchatExtension.class)
class ResponseTest {
  @Test
  void theAnswersStatusHeadersAndAttempts(RoomchatClient client, RoomchatEmulator emulator) {
    emulator.seedUsers(2);
    emulator.failNext("/consumer/api/v2/users", 503, "{\"message\":\"busy\"}", 1);
    Response r = client.call("list_users", Map.of("limit", 1));
    assertEquals(200, r.status());
    assertEquals(2, r.attempts(), "a retry after the 503");
    assertTrue(r.requestId().orElseThrow().startsWith("req_"), r.requestId().toString());
    assertTrue(r.header("content-type").orElseThrow().contains("json"));
    assertEquals(2L, ((Map<?, ?>) r.json()).get("total"));
  }

  @Test
  void aRawRequest(RoomchatClient client, RoomchatEmulator emulator) {
    emulator.seedUsers(3);
    Response r = client.call("raw", Map.of("method", "GET", "path", "/consumer/api/v2/users", "query", List.of(List.of("limit", "2")), "auth", "private_key"));
    Map<?, ?> raw = (Map<?, ?>) r.json();
    assertEquals(200L, raw.get("status"));
    assertEquals(3L, ((Map<?, ?>) raw.get("body")).get("total"), "the body's JSON");
  }
}
