package dev.roomchat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.roomchat.testing.RoomchatEmulator;
import dev.roomchat.testing.RoomchatExtension;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The typed {@code ...WithResponse} twins, and the sign-in address and iframe. */
@ExtendWith(RoomchatExtension.class)
class WithResponseTest {
  @Test
  void aTypedRecordBesideItsAnswer(RoomchatClient client, RoomchatEmulator emulator) {
    emulator.seedUsers(3);
    emulator.failNext("/consumer/api/v2/users", 503, "{\"message\":\"busy\"}", 1);
    WithResponse<UserPage> r = client.listUsersWithResponse(ListUsersParams.builder().limit(2).build());
    assertEquals(3L, r.data().total());
    assertEquals(2, r.data().data().size());
    assertEquals(200, r.response().status());
    assertEquals(2, r.response().attempts(), "a retry after the 503");
    assertTrue(r.response().requestId().orElseThrow().startsWith("req_"), r.response().toString());
    assertTrue(r.response().header("Content-Type").orElseThrow().contains("json"));
    // The body is the record's JSON: what the record was read from, unknown fields included.
    assertEquals(3L, ((Map<?, ?>) r.response().json()).get("total"));
    assertTrue(r.response().body().startsWith("{") && r.response().body().contains("\"total\":3"), r.response().body());
  }

  @Test
  void theAsyncTwinAndPerCallOptions(RoomchatClient client, RoomchatEmulator emulator) throws Exception {
    emulator.failNext("/consumer/api/v1/chatrooms", 503, "{\"message\":\"busy\"}", 1);
    CallOptions once = CallOptions.builder().maxRetries(0).build();
    // One attempt only: the 503 is the answer, thrown as the plain method throws it.
    ServerErrorException e = assertThrows(ServerErrorException.class, () -> client.listChatRoomsWithResponse(ListChatRoomsParams.builder().build(), once));
    assertEquals(503, e.status());
    WithResponse<RoomAnswer> made = client.async().createChatRoomWithResponse(CreateChatRoomParams.builder().name("Webinar").build()).get();
    assertEquals(Boolean.TRUE, made.data().success());
    assertEquals(1, made.response().attempts());
    assertEquals(made.data().roomId(), ((Map<?, ?>) made.response().json()).get("roomId"));
  }

  @Test
  void noAccessTokenInItsToString(RoomchatClient client) {
    String room = client.createChatRoom(CreateChatRoomParams.builder().name("r").build()).roomId();
    WithResponse<CreatedUser> ann = client.createUserWithResponse(CreateUserParams.builder().username("ann").role("room_moderator").chatRoom(room).build());
    String token = ann.data().accessToken();
    assertTrue(token != null && token.length() > 10);
    assertTrue(ann.response().body().contains(token), "the body is the answer as sent");
    assertFalse(ann.toString().contains(token), ann.toString());
    assertFalse(ann.response().toString().contains(token), ann.response().toString());
    assertTrue(ann.response().toString().contains("status=200"), ann.response().toString());
  }

  @Test
  void aSignInUrlSignsTheUserIn(RoomchatClient client, RoomchatEmulator emulator) throws Exception {
    String room = client.createChatRoom(CreateChatRoomParams.builder().name("Webinar").build()).roomId();
    CreatedUser ann = client.createUser(CreateUserParams.builder().username("ann").role("room_moderator").chatRoom(room).build());
    String url = client.signInUrl(room, ann.accessToken());
    assertTrue(url.startsWith(emulator.chatUrl() + "/" + room + "?accessToken="), url);

    // The address is what a browser opens: the emulator's sign-in page for the room, as ann.
    HttpClient http = HttpClient.newHttpClient();
    HttpResponse<String> page = http.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(200, page.statusCode(), page.body());
    assertTrue(page.body().contains("data-username=\"ann\""), page.body());
    assertTrue(page.body().contains("data-moderator=\"true\""), page.body());
    // Another room's address does not sign her in.
    HttpResponse<String> other = http.send(HttpRequest.newBuilder(URI.create(client.signInUrl("no-such-room", ann.accessToken()))).build(), HttpResponse.BodyHandlers.ofString());
    assertNotEquals(200, other.statusCode());

    String html = client.iframeHtml(room, ann.accessToken(), "100%", "6\"00");
    String src = url.replace("&", "&amp;");
    assertEquals("<iframe src=\"" + src + "\" width=\"100%\" height=\"6&quot;00\" style=\"border:0\" allow=\"clipboard-write\"></iframe>", html);
    assertTrue(client.iframeHtml(room, ann.accessToken()).contains("width=\"100%\" height=\"600\""));
  }

  @Test
  void aSignInUrlsErrors(RoomchatEmulator emulator) {
    try (RoomchatClient noChat = RoomchatClient.builder(emulator.privateKey()).baseUrl(emulator.baseUrl()).build()) {
      ConfigurationException e = assertThrows(ConfigurationException.class, () -> noChat.signInUrl("r", "token-secret-1"));
      assertFalse(e.getMessage().contains("token-secret-1"), e.getMessage());
    }
    try (RoomchatClient client = emulator.clientBuilder().build()) {
      // A room id stays one path segment and a token one query value, whatever they hold.
      assertEquals(emulator.chatUrl() + "/..%2Fusers%3Fx?accessToken=t%26k%3D1", client.signInUrl("../users?x", "t&k=1"));
      assertThrows(ValidationException.class, () -> client.signInUrl("", "t"));
      assertThrows(ValidationException.class, () -> client.iframeHtml("r", "", "1", "1"));
      assertThrows(InvalidArgumentException.class, () -> client.signInUrl("r\0", "t"));
      client.close();
      assertThrows(ConfigurationException.class, () -> client.signInUrl("r", "t"));
    }
  }
}
