package dev.roomchat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.roomchat.internal.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/** tests/conformance/*.json through the pure wire layer (Wire), as every package runs them. */
class ConformanceTest {
  static Path repo() {
    String env = System.getenv("ROOMCHAT_REPO");
    return env != null ? Paths.get(env) : Paths.get("../..");
  }

  @SuppressWarnings("unchecked")
  static List<Map<String, Object>> vectors(String file) throws IOException {
    String text = Files.readString(repo().resolve("tests/conformance").resolve(file), StandardCharsets.UTF_8);
    return (List<Map<String, Object>>) Json.parse(text);
  }

  @TestFactory
  @SuppressWarnings("unchecked")
  Stream<DynamicTest> requests() throws IOException {
    List<Map<String, Object>> all = vectors("requests.json");
    assertTrue(all.size() > 100, "the request vectors are there");
    return all.stream().map(v -> DynamicTest.dynamicTest((String) v.get("name"), () -> {
      String op = (String) v.get("operation");
      Map<String, Object> params = (Map<String, Object>) v.get("params");
      if (v.containsKey("expect_error")) {
        RoomchatException e = assertThrows(RoomchatException.class, () -> Wire.buildRequest(op, params));
        assertEquals(v.get("expect_error"), e.kind().wireName(), e.getMessage());
        return;
      }
      Map<String, Object> expect = (Map<String, Object>) v.get("expect");
      Map<String, Object> got = expect.containsKey("url")
          ? Wire.buildRequestUrl(op, params, "https://api.example.com", "REDACTED")
          : Wire.buildRequest(op, params);
      for (String key : List.of("method", "path", "query", "body", "url")) {
        if (expect.containsKey(key)) {
          assertEquals(expect.get(key), got.get(key), key);
        }
      }
    }));
  }

  @TestFactory
  @SuppressWarnings("unchecked")
  Stream<DynamicTest> responses() throws IOException {
    List<Map<String, Object>> all = vectors("responses.json");
    assertTrue(all.size() > 100, "the response vectors are there");
    return all.stream().map(v -> DynamicTest.dynamicTest((String) v.get("name"), () -> {
      String op = (String) v.get("operation");
      int status = ((Number) v.get("status")).intValue();
      List<Map.Entry<String, String>> headers = new ArrayList<>();
      for (Object pair : (List<Object>) v.get("headers")) {
        List<String> p = (List<String>) pair;
        headers.add(new AbstractMap.SimpleEntry<>(p.get(0), p.get(1)));
      }
      String body = (String) v.get("body");
      Map<String, Object> expect = (Map<String, Object>) v.get("expect");
      if (expect.containsKey("ok")) {
        assertEquals(expect.get("ok"), Wire.decodeResponse(op, status, headers, body));
        return;
      }
      Map<String, Object> want = (Map<String, Object>) expect.get("error");
      RoomchatException e;
      try {
        Wire.decodeResponse(op, status, headers, body);
        fail("expected " + want.get("kind"));
        return;
      } catch (RoomchatException caught) {
        e = caught;
      }
      assertEquals(want.get("kind"), e.kind().wireName(), e.getMessage());
      assertEquals(kindClass(e.kind()), e.getClass());
      assertEquals(((Number) want.getOrDefault("status", 0L)).intValue(), e.status(), "status");
      assertEquals(want.get("event_id"), e.eventId().orElse(null), "event_id");
      assertEquals(want.get("retry_after_ms"), e.retryAfter().map(Duration -> (Object) Duration.toMillis()).orElse(null), "retry_after_ms");
      if (want.containsKey("message")) {
        assertEquals(e.kind().wireName() + ": " + want.get("message"), e.getMessage());
      }
      Map<String, Object> service = (Map<String, Object>) want.getOrDefault("service", Map.of());
      assertEquals(service.get("message"), e.serviceMessage().orElse(null), "service message");
      assertEquals(service.get("error"), e.serviceError().orElse(null), "service error");
      assertEquals(service.get("errorMessage"), e.serviceErrorMessage().orElse(null), "service errorMessage");
    }));
  }

  static Class<?> kindClass(ErrorKind kind) {
    return RoomchatException.of(kind, "x").getClass();
  }

  @Test
  void anUnknownOperationIsRefusedAsAnInvalidArgument() {
    RoomchatException e = assertThrows(RoomchatException.class, () -> Wire.buildRequest("no_such_operation", Map.of()));
    assertEquals(ErrorKind.INVALID_ARGUMENT, e.kind());
    assertThrows(InvalidArgumentException.class, () -> Wire.buildRequest("list\0users", Map.of()));
    assertThrows(InvalidArgumentException.class, () -> Wire.decodeResponse("list_users", 42, List.of(), "{}"));
  }

  @Test
  void theGeneratedParamsAreTheVectorsForm() {
    Map<String, Object> wire = CreateChatRoomParams.builder().name("Webinar").passwordProtected(false).put("mainColor", "#fff").build().toWire();
    Map<String, Object> req = Wire.buildRequest("create_chat_room", wire);
    assertEquals("POST", req.get("method"));
    assertEquals(Map.of("name", "Webinar", "passwordProtected", "off", "mainColor", "#fff"), req.get("body"));
    Map<String, Object> user = Wire.buildRequest("create_user", CreateUserParams.builder().username("bob").role("room_moderator").chatRoom("r1").email("b@example.com").build().toWire());
    assertEquals(Map.of("username", "bob", "isModerator", true, "chatRoom", "r1", "email", "b@example.com"), user.get("body"));
  }
}
