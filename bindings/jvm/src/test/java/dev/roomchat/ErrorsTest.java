package dev.roomchat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.roomchat.testing.RoomchatEmulator;
import dev.roomchat.testing.RoomchatExtension;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The error kinds, each its own exception class, from real answers of the emulator. */
@ExtendWith(RoomchatExtension.class)
class ErrorsTest {
  static final CallOptions ONE_ATTEMPT = CallOptions.builder().maxRetries(0).build();
  static final String USERS = "/consumer/api/v2/users";

  @Test
  void aRateLimitCarriesItsRetryAfter(RoomchatClient client, RoomchatEmulator emulator) {
    emulator.addFault(Map.of("path", USERS, "action", Map.of("kind", "respond", "status", 429, "body", "{\"message\":\"Too many requests\"}", "headers", Map.of("Retry-After", "7"))));
    RateLimitedException e = assertThrows(RateLimitedException.class, () -> client.listUsers(ListUsersParams.builder().build(), ONE_ATTEMPT));
    assertEquals(ErrorKind.RATE_LIMITED, e.kind());
    assertEquals(429, e.status());
    assertEquals(Duration.ofSeconds(7), e.retryAfter().orElseThrow());
    assertEquals("Too many requests", e.serviceMessage().orElseThrow());
    assertEquals("GET", e.method().orElseThrow());
  }

  @Test
  void aServerErrorCarriesItsEventId(RoomchatClient client, RoomchatEmulator emulator) {
    emulator.failNext(USERS, 500, "{\"message\":\"boom\",\"eventId\":\"ev1\"}", 1);
    ServerErrorException e = assertThrows(ServerErrorException.class, () -> client.listUsers(ListUsersParams.builder().build(), ONE_ATTEMPT));
    assertEquals(500, e.status());
    assertEquals("ev1", e.eventId().orElseThrow());
  }

  @Test
  void aServerErrorIsRetriedForARead(RoomchatClient client, RoomchatEmulator emulator) {
    emulator.failNext(USERS, 503, "{\"message\":\"busy\"}", 1);
    assertEquals(0L, client.listUsers().total());
    assertEquals(2, emulator.journal().size(), "one retry");
  }

  @Test
  void anInvalidRequestCarriesTheServiceTexts(RoomchatClient client, RoomchatEmulator emulator) {
    emulator.failNext(USERS, 400, "{\"message\":\"bad\",\"error\":\"limit is wrong\"}", 1);
    InvalidRequestException e = assertThrows(InvalidRequestException.class, () -> client.listUsers());
    assertEquals(400, e.status());
    assertEquals("bad", e.serviceMessage().orElseThrow());
    assertEquals("limit is wrong", e.serviceError().orElseThrow());
  }

  @Test
  void notFoundAndUserNotFound(RoomchatClient client) {
    assertThrows(NotFoundException.class, () -> client.getChatRoom("nope"));
    assertThrows(UserNotFoundException.class, () -> client.deactivateUser(DeactivateUserParams.builder().userId("nobody").build()));
  }

  @Test
  void aGatedEndpointNeedsAPlanUpgrade(RoomchatClient client, RoomchatEmulator emulator) {
    emulator.admin("POST", "/gate", Map.of("method", "*", "path", USERS));
    assertThrows(PlanUpgradeRequiredException.class, () -> client.listUsers());
  }

  @Test
  void validationSendsNothing(RoomchatClient client, RoomchatEmulator emulator) {
    ValidationException e = assertThrows(ValidationException.class, () -> client.listUsers(ListUsersParams.builder().limit(201).build()));
    assertEquals(0, e.status());
    assertThrows(ValidationException.class, () -> client.createChatRoom(CreateChatRoomParams.builder().metadata("x".repeat(1001)).build()));
    assertThrows(ValidationException.class, () -> client.sendRoomMessage("r1", "who?"));
    assertThrows(ValidationException.class, () -> client.createChatRoom(CreateChatRoomParams.builder().put("bad", Double.NaN).build()));
    assertTrue(emulator.journal().isEmpty(), "nothing was sent");
  }

  @Test
  void aWrongKeyIsInvalidAuth(RoomchatEmulator emulator) {
    try (RoomchatClient wrong = RoomchatClient.builder("sk_test_wrong_key_9999").baseUrl(emulator.baseUrl()).build()) {
      InvalidAuthException e = assertThrows(InvalidAuthException.class, () -> wrong.listUsers());
      assertEquals(401, e.status());
    }
  }

  @Test
  void aTimeoutAConnectionAndADecodeError(RoomchatClient client, RoomchatEmulator emulator) throws Exception {
    emulator.addFault(Map.of("path", USERS, "action", Map.of("kind", "delay", "ms", 3000)));
    assertThrows(RequestTimeoutException.class, () -> client.listUsers(ListUsersParams.builder().build(),
        CallOptions.builder().timeout(Duration.ofMillis(200)).maxRetries(0).build()));
    emulator.reset();
    emulator.addFault(Map.of("path", USERS, "action", Map.of("kind", "not_json")));
    assertThrows(DecodeException.class, () -> client.listUsers(ListUsersParams.builder().build(), ONE_ATTEMPT));
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    try (RoomchatClient nowhere = RoomchatClient.builder("sk_test_x").baseUrl("http://127.0.0.1:" + port).maxRetries(0).build()) {
      assertThrows(ConnectionException.class, nowhere::listUsers);
    }
  }

  @Test
  void settingsAreCheckedWhenTheClientIsBuilt() {
    assertThrows(ConfigurationException.class, () -> RoomchatClient.builder("sk_test_x").build());
    assertThrows(ConfigurationException.class, () -> RoomchatClient.builder("sk_test_x").baseUrl("not a url").build());
    assertThrows(ConfigurationException.class, () -> RoomchatClient.builder(null).baseUrl("http://127.0.0.1:1").build());
    assertThrows(InvalidArgumentException.class, () -> RoomchatClient.builder("sk\0x").baseUrl("http://127.0.0.1:1").build());
    assertThrows(ConfigurationException.class, () -> RoomchatClient.builder("sk_test_x").maxInFlight(0));
  }

  @Test
  void aClosedClientSaysSo(RoomchatEmulator emulator) {
    RoomchatClient client = emulator.clientBuilder().build();
    client.close();
    client.close();
    ConfigurationException e = assertThrows(ConfigurationException.class, client::listUsers);
    assertTrue(e.getMessage().contains("closed"), e.getMessage());
  }

  @Test
  void noSecretInAnyErrorOrToString(RoomchatEmulator emulator) {
    String key = "sk_test_secret_do_not_show_1234";
    try (RoomchatClient client = RoomchatClient.builder(key).baseUrl(emulator.baseUrl()).publicKey("pk_test_secret_do_not_show").build()) {
      RoomchatException e = assertThrows(RoomchatException.class, client::listUsers);
      String shown = e.toString() + e.getMessage() + e.path().orElse("") + e.serviceMessage().orElse("") + client;
      assertFalse(shown.contains("secret_do_not_show"), shown);
      assertTrue(e.path().orElseThrow().contains("REDACTED"), e.path().orElseThrow());
      RoomchatException v = assertThrows(RoomchatException.class, () -> client.validateAccessToken("eyJ.secret_token_value.x"));
      assertFalse((v.toString() + v.path().orElse("")).contains("secret_token_value"), v.toString());
    }
    String params = ValidateAccessTokenParams.builder().accessToken("eyJ.secret_token_value.x").build().toString();
    assertFalse(params.contains("secret_token_value"), params);
  }
}
