package dev.roomchat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.roomchat.testing.RoomchatEmulator;
import dev.roomchat.testing.RoomchatExtension;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Listings: lazy, every record once, never ending early without throwing. */
@ExtendWith(RoomchatExtension.class)
class ListingTest {
  @Test
  void everyUserOnceAPageAtATime(RoomchatClient client, RoomchatEmulator emulator) {
    emulator.seedUsers(120);
    Listing<User> users = client.iterListUsers(ListUsersParams.builder().limit(50).build());
    assertTrue(emulator.journal().isEmpty(), "lazy: nothing sent yet");
    List<String> ids = new ArrayList<>();
    for (User u : users) {
      ids.add(u.id());
    }
    assertEquals(120, ids.size());
    assertEquals(120, new HashSet<>(ids).size());
    assertEquals(3, emulator.journal().size(), "three pages");
    try (Stream<User> stream = users.stream()) {
      assertEquals(120, stream.count());
    }
    try (Stream<User> stream = users.stream()) {
      assertEquals(10, stream.limit(10).count());
    }
  }

  @Test
  void aFailedPageThrowsAndAskingAgainFetchesIt(RoomchatClient client, RoomchatEmulator emulator) {
    emulator.seedUsers(120);
    String path = "/consumer/api/v2/users";
    emulator.addFault(Map.of("path", path, "times", 1, "action", Map.of("kind", "delay", "ms", 0)));
    emulator.addFault(Map.of("path", path, "times", 1, "action", Map.of("kind", "respond", "status", 400, "body", "{\"message\":\"bad page\"}", "headers", Map.of())));
    Iterator<User> it = client.iterListUsers(ListUsersParams.builder().limit(50).build()).iterator();
    int seen = 0;
    for (; seen < 50; seen++) {
      it.next();
    }
    assertThrows(InvalidRequestException.class, it::hasNext, "the second page's error, not an early end");
    while (it.hasNext()) {
      it.next();
      seen++;
    }
    assertEquals(120, seen);
  }

  @Test
  void aPageSizeOverTheLimitThrows(RoomchatClient client) {
    Iterator<User> it = client.iterListUsers(ListUsersParams.builder().limit(201).build()).iterator();
    assertThrows(ValidationException.class, it::hasNext);
  }

  @Test
  void roomMessagesAndMembersPageToo(RoomchatClient client, RoomchatEmulator emulator) {
    String room = client.createChatRoom(CreateChatRoomParams.builder().name("Webinar").build()).roomId();
    emulator.admin("POST", "/messages", Map.of("roomId", room, "count", 25, "system", true));
    long count = 0;
    for (ChatMessage m : client.iterRoomMessages(RoomMessagesParams.builder().roomId(room).limit(10).build())) {
      assertFalse(m.message().isEmpty());
      count++;
    }
    assertEquals(25, count);
    assertEquals(0, client.iterListMembers(ListMembersParams.builder().roomId(room).build()).stream().count());
  }
}
