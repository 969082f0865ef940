package dev.roomchat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.roomchat.testing.RoomchatEmulator;
import dev.roomchat.testing.RoomchatExtension;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Every one of the 41 operations once, against the emulator, through the generated methods. */
@ExtendWith(RoomchatExtension.class)
class OperationsTest {
  static final Set<String> CALLED = new HashSet<>();

  static String room(RoomchatClient client, String name) {
    RoomAnswer made = client.createChatRoom(CreateChatRoomParams.builder().name(name).enableChannels(true).build());
    CALLED.add("create_chat_room");
    assertEquals(Boolean.TRUE, made.success());
    return made.roomId();
  }

  @Test
  void users(RoomchatClient client, RoomchatEmulator emulator) {
    emulator.seedUsers(3);
    UserPage page = client.listUsers();
    assertEquals(3L, page.total());
    CreatedUser bob = client.createUser(CreateUserParams.builder().username("bob").role("regular").uniqueUserIdentifier("crm-bob").build());
    assertFalse(bob.accessToken().isEmpty());
    assertFalse(bob.toString().contains(bob.accessToken()), "a record's toString hides its token");
    TokenUser validated = client.validateAccessToken(bob.accessToken());
    assertEquals("bob", validated.username());
    Invalidated invalidated = client.invalidateAccessToken(bob.accessToken());
    assertNotNull(invalidated);
    Deactivated off = client.deactivateUser(DeactivateUserParams.builder().uniqueUserIdentifier("crm-bob").build());
    assertNotNull(off);
    UserNotFoundException again = assertThrows(UserNotFoundException.class,
        () -> client.deactivateUser(DeactivateUserParams.builder().uniqueUserIdentifier("crm-bob").build()));
    assertEquals(ErrorKind.USER_NOT_FOUND, again.kind());
    assertNotNull(client.reactivateUser(ReactivateUserParams.builder().uniqueUserIdentifier("crm-bob").build()));
    CALLED.addAll(List.of("list_users", "create_user", "validate_access_token", "invalidate_access_token", "deactivate_user", "reactivate_user"));
  }

  @Test
  void rooms(RoomchatClient client) {
    String id = room(client, "Webinar");
    assertEquals(List.of(id), client.listChatRooms().stream().map(Room::roomId).collect(Collectors.toList()));
    assertEquals("Webinar", client.getChatRoom(id).name());
    client.updateChatRoom(UpdateChatRoomParams.builder().roomId(id).name("Webinar (live)").build());
    assertEquals("Webinar (live)", client.getChatRoom(id).name());
    assertEquals(Boolean.TRUE, client.turnChatOff(id).success());
    assertEquals(Boolean.TRUE, client.getChatRoom(id).chatOff());
    assertEquals(Boolean.TRUE, client.turnChatOn(id).success());
    client.setChatOffMessage(id, "Back at 10:00");
    assertEquals("Back at 10:00", client.getChatRoom(id).extra().get("chatOffMessage"), "an unnamed field is kept in extra()");
    assertEquals(Boolean.TRUE, client.ejectAllUsers(id).success());
    client.deleteChatRoom(id);
    assertEquals(List.of(), client.listChatRooms());
    assertThrows(NotFoundException.class, () -> client.getChatRoom(id));
    CALLED.addAll(List.of("list_chat_rooms", "get_chat_room", "update_chat_room", "turn_chat_off", "turn_chat_on", "set_chat_off_message", "eject_all_users", "delete_chat_room"));
  }

  @Test
  void messagesAndChannels(RoomchatClient client, RoomchatEmulator emulator) {
    String id = room(client, "Webinar");
    client.sendRoomMessage(SendRoomMessageParams.builder().roomId(id).message("Welcome!").systemMessage(true).build());
    client.sendRoomMessage(SendRoomMessageParams.builder().roomId(id).message("Guest here").user(Map.of("username", "visitor")).build());
    MessagePage page = client.roomMessages(id);
    assertEquals(2L, page.totalRecords());
    assertEquals("Welcome!", page.messages().get(0).message());
    Channel channel = client.createChannel(id, "qa");
    assertEquals("qa", channel.channelName());
    Channel renamed = client.updateChannel(UpdateChannelParams.builder().roomId(id).channelId(channel.id()).channelName("Q&A").build());
    assertEquals("Q&A", renamed.channelName());
    client.sendChannelMessage(SendChannelMessageParams.builder().roomId(id).channelId(channel.id()).message("a question").systemMessage(true).build());
    client.sendChannelMessage(SendChannelMessageParams.builder().roomId(id).channelId(channel.id()).message("another").systemMessage(true).build());
    MessagePage inChannel = client.channelMessages(id, channel.id());
    assertEquals(2L, inChannel.totalRecords());
    client.deleteChannelMessage(id, channel.id(), inChannel.messages().get(0).id());
    assertEquals(1L, client.channelMessages(id, channel.id()).totalRecords());
    client.deleteRoomMessages(id);
    assertEquals(0L, client.roomMessages(id).totalRecords());
    Map<String, Object> conversation = (Map<String, Object>) emulator.admin("POST", "/conversations", Map.of("roomId", id, "messages", List.of(
        Map.of("messages", "hi", "user", Map.of("username", "ann")),
        Map.of("messages", "hello", "user", Map.of("username", "bob")))));
    List<Conversation> conversations = client.listConversations(id);
    assertEquals(1, conversations.size());
    assertEquals(conversation.get("conversationId"), conversations.get(0).conversationId());
    List<Message> messages = client.conversationMessages(id, conversations.get(0).conversationId());
    assertEquals(2, messages.size());
    CALLED.addAll(List.of("send_room_message", "room_messages", "create_channel", "update_channel", "send_channel_message", "channel_messages",
        "delete_channel_message", "delete_room_messages", "list_conversations", "conversation_messages"));
  }

  @Test
  void provisionedUsersAndMembers(RoomchatClient client) {
    String id = room(client, "Webinar");
    ProvisionedUser ann = client.createUserV2(CreateUserV2Params.builder().uniqueUserIdentifier("crm-1").username("ann").firstName("Ann")
        .membershipDetails(Map.of("roleName", "user", "roomId", id)).build());
    assertEquals(Boolean.TRUE, ann.success());
    assertEquals("Ann", client.getUser("crm-1").firstName());
    client.updateUser(UpdateUserParams.builder().uniqueUserIdentifier("crm-1").username("ann-marie").build());
    assertEquals("ann-marie", client.getUser("crm-1").username());
    assertEquals(1L, client.listMembers(id).total());
    String second = room(client, "Second");
    Member member = client.setMember(second, "crm-1", "guest");
    assertEquals("guest", member.roleName());
    assertEquals(2, client.userRooms("crm-1").size());
    client.removeMember(second, "crm-1");
    assertEquals(0L, client.listMembers(second).total());
    client.removeUser(RemoveUserParams.builder().uniqueUserIdentifier("crm-1").build());
    assertThrows(RoomchatException.class, () -> client.getUser("crm-1"));
    CALLED.addAll(List.of("create_user_v2", "get_user", "update_user", "list_members", "set_member", "user_rooms", "remove_member", "remove_user"));
  }

  @Test
  void bots(RoomchatClient client) {
    String id = room(client, "Webinar");
    BotAnswer made = client.createBot(CreateBotParams.builder().name("helper").webhookURL("https://hooks.example.com/secret-path").enabled(true).build());
    String botId = made.bot().id();
    assertFalse(made.toString().contains("secret-path"), "a bot's webhook URL is hidden by toString");
    assertEquals(1, client.listBots().bots().size());
    client.updateBot(UpdateBotParams.builder().botId(botId).description("Answers questions").build());
    client.disableBot(botId);
    client.enableBot(botId);
    client.enableBotInRoom(botId, id);
    assertEquals(Boolean.TRUE, client.sendBotMessage(botId, id, "Hello from the bot").success());
    client.disableBotInRoom(botId, id);
    CALLED.addAll(List.of("create_bot", "list_bots", "update_bot", "disable_bot", "enable_bot", "enable_bot_in_room", "send_bot_message", "disable_bot_in_room"));
  }

  /** After the others: every declared operation was called (api/operations.toml's names). */
  @org.junit.jupiter.api.AfterAll
  static void everyDeclaredOperationWasCalled() throws java.io.IOException {
    String toml = java.nio.file.Files.readString(ConformanceTest.repo().resolve("api/operations.toml"));
    Set<String> declared = new java.util.TreeSet<>();
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\[\\[operation\\]\\]\\s*\\nname = \"([a-z0-9_]+)\"").matcher(toml);
    while (m.find()) {
      declared.add(m.group(1));
    }
    assertEquals(41, declared.size(), "the operations declared");
    Set<String> missing = new java.util.TreeSet<>(declared);
    missing.removeAll(CALLED);
    assertEquals(Set.of(), missing, "operations no test called");
  }

  @Test
  void everyOperationHasAMethod() {
    Set<String> declared = new HashSet<>();
    for (java.lang.reflect.Method m : RoomchatOperations.class.getDeclaredMethods()) {
      if (java.lang.reflect.Modifier.isPublic(m.getModifiers())) {
        declared.add(m.getName());
      }
    }
    assertTrue(declared.size() >= 41, "methods: " + declared.size());
  }
}
