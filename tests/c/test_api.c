/*
 * The C99 suite of the whole documented API (issue 29): one end-to-end test
 * per operation added by the declarations (rooms, messages and history,
 * channels, conversations, users, members, bots) against ONE emulator, each
 * asserting the typed answer and the state change another operation sees; the
 * not-found cases (ROOMCHAT_RESULT_NOT_FOUND); the item iterators (paging,
 * resuming, an error that does not end them); the webinar story. Run once
 * under valgrind by tests/c/run.sh (not in the TLS or network passes).
 *
 * usage: test_api <path to roomchat-emulator>
 */

#include "harness.h"
#include "roomchat.h"

/* The C guide's export (ffi/README.md shows this file verbatim). */
#include "readme_export.c"

static emulator emu;
static roomchat_client *client;
static roomchat_error *err;

/* A call that must succeed: its error printed when it does not. */
#define OK(call) ok_call((call), __LINE__)
static int ok_call(roomchat_result got, int line) {
  CHECK(got == ROOMCHAT_RESULT_OK);
  if (got != ROOMCHAT_RESULT_OK)
    fprintf(stderr, "test_api.c:%d: %s: %s\n", line, roomchat_result_name(got),
            err ? roomchat_error_message(err) : "(no error)");
  roomchat_error_free(err);
  err = NULL;
  return got == ROOMCHAT_RESULT_OK;
}

/* A call that must fail with `want` (and `status` when not 0). */
#define FAILS(call, want, status) fails_call((call), (want), (status), __LINE__)
static void fails_call(roomchat_result got, roomchat_result want, int status, int line) {
  CHECK(got == want);
  if (got != want)
    fprintf(stderr, "test_api.c:%d: wanted %s, got %s: %s\n", line, roomchat_result_name(want),
            roomchat_result_name(got), err ? roomchat_error_message(err) : "(no error)");
  if (status && err) CHECK(roomchat_error_status(err) == status);
  if (err) CHECK(roomchat_error_code(err) == want);
  roomchat_error_free(err);
  err = NULL;
}

static int same(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }
static int has(const char *text, const char *part) { return text && strstr(text, part) != NULL; }

static int admin(const char *path, const char *body, char **answer) {
  return http_request(&emu, "POST", path, body, answer);
}

static int journal_count(const char *needle) {
  char *journal = NULL;
  int count;
  CHECK(http_request(&emu, "GET", "/_emulator/journal", NULL, &journal) == 200);
  count = journal ? count_occurrences(journal, needle) : -1;
  free(journal);
  return count;
}

static void clear_journal(void) { CHECK(http_request(&emu, "DELETE", "/_emulator/journal", NULL, NULL) == 200); }

/* Creates a room through the admin API. */
static void seed_room(const char *room_id) {
  char body[256];
  snprintf(body, sizeof body, "{\"roomId\": \"%s\", \"name\": \"%s\"}", room_id, room_id);
  CHECK(admin("/_emulator/rooms", body, NULL) == 200);
}

/* The room's record (owned), or NULL. */
static roomchat_room *get_room(const char *room_id) {
  roomchat_room *room = NULL;
  OK(roomchat_client_get_chat_room(client, room_id, &room, &err));
  return room;
}

/* The number of messages the room holds, through room_messages. */
static long long room_total(const char *room_id) {
  roomchat_message_page *page = NULL;
  long long total;
  if (!OK(roomchat_client_room_messages(client, room_id, NULL, &page, &err))) return -1;
  total = roomchat_message_page_total_records(page);
  roomchat_message_page_free(page);
  return total;
}

/* ---- rooms ---------------------------------------------------------------------------- */

static void test_create_chat_room(void) {
  roomchat_create_chat_room_params *params = NULL;
  roomchat_room_answer *answer = NULL;
  roomchat_room *room;
  char room_id[64] = "";
  OK(roomchat_create_chat_room_params_new(&params));
  /* A password-protected room without its password: the service's validation object. */
  OK(roomchat_create_chat_room_params_set_password_protected(params, true));
  FAILS(roomchat_client_create_chat_room(client, params, &answer, &err), ROOMCHAT_RESULT_INVALID_REQUEST, 0);
  CHECK(answer == NULL);
  /* JSON setters refuse text that is not JSON (or not an object): the call then sends nothing. */
  CHECK(roomchat_create_chat_room_params_set_customization(params, "{nope") == ROOMCHAT_RESULT_INVALID_ARGUMENT);
  CHECK(roomchat_create_chat_room_params_set_extra_json(params, "[1]") == ROOMCHAT_RESULT_INVALID_ARGUMENT);
  clear_journal();
  FAILS(roomchat_client_create_chat_room(client, params, &answer, &err), ROOMCHAT_RESULT_INVALID_ARGUMENT, 0);
  CHECK(journal_count("\"method\"") == 0);
  OK(roomchat_create_chat_room_params_set_customization(params, "{\"sidebarColor\": \"#123456\"}"));
  OK(roomchat_create_chat_room_params_set_extra_json(params, "{\"mainColor\": \"#336699\"}"));
  OK(roomchat_create_chat_room_params_set_name(params, "Launch"));
  OK(roomchat_create_chat_room_params_set_room_password(params, "s3cret"));
  OK(roomchat_create_chat_room_params_set_enable_channels(params, true));
  OK(roomchat_create_chat_room_params_set_pre_moderated_chat_room(params, false));
  OK(roomchat_create_chat_room_params_set_chat_room_permission_level(params, "members"));
  OK(roomchat_client_create_chat_room(client, params, &answer, &err));
  roomchat_create_chat_room_params_free(params);
  CHECK(roomchat_room_answer_success(answer) == 1);
  if (roomchat_room_answer_room_id(answer)) snprintf(room_id, sizeof room_id, "%s", roomchat_room_answer_room_id(answer));
  CHECK(room_id[0] != '\0' && has(roomchat_room_answer_url(answer), room_id));
  roomchat_room_answer_free(answer);
  /* Switches go as "on"/"off"; untyped fields as given. */
  CHECK(journal_count("\\\"passwordProtected\\\":\\\"on\\\"") == 1);
  CHECK(journal_count("\\\"preModeratedChatRoom\\\":\\\"off\\\"") == 1);
  CHECK(journal_count("\\\"mainColor\\\":\\\"#336699\\\"") == 1);
  /* The room as get_chat_room reads it: booleans, and the fields it does not type in extra_json. */
  room = get_room(room_id);
  CHECK(same(roomchat_room_name(room), "Launch"));
  CHECK(roomchat_room_password_protected(room) == 1 && roomchat_room_enable_channels(room) == 1);
  CHECK(roomchat_room_pre_moderated_chat_room(room) == 0);
  CHECK(same(roomchat_room_room_password(room), "s3cret"));
  CHECK(has(roomchat_room_extra_json(room), "\"mainColor\":\"#336699\""));
  CHECK(has(roomchat_room_extra_json(room), "\"chatRoomPermissionLevel\":\"members\""));
  roomchat_room_free(room);
}

static void test_get_and_list_chat_rooms(void) {
  roomchat_room *room = NULL;
  roomchat_room_list *rooms = NULL;
  size_t i, found = 0;
  seed_room("get-1");
  room = get_room("get-1");
  CHECK(same(roomchat_room_room_id(room), "get-1") && same(roomchat_room_name(room), "get-1"));
  CHECK(roomchat_room_password_protected(room) == 0);
  roomchat_room_free(room);
  room = NULL;
  /* An unknown room: the service's 404 `{}`, now a kind of its own. */
  FAILS(roomchat_client_get_chat_room(client, "nope", &room, &err), ROOMCHAT_RESULT_NOT_FOUND, 404);
  CHECK(room == NULL);
  /* list_chat_rooms keeps 0.1.0's prototype: the answer's JSON text through `char **`, freed
     with roomchat_string_free (a 0.1.0 program runs unchanged on this library). */
  {
    char *json = NULL;
    roomchat_response_meta *meta = NULL;
    OK(roomchat_client_list_chat_rooms(client, &json, &err));
    CHECK(json != NULL && json[0] == '[' && strstr(json, "\"roomId\":\"get-1\"") != NULL);
    roomchat_string_free(json);
    json = NULL;
    OK(roomchat_client_list_chat_rooms_with_response(client, &json, &meta, &err));
    CHECK(json != NULL && json[0] == '[' && roomchat_response_meta_status(meta) == 200);
    roomchat_string_free(json);
    roomchat_response_meta_free(meta);
  }
  /* The typed list under its own name. */
  OK(roomchat_client_list_chat_rooms_typed(client, &rooms, &err));
  CHECK(roomchat_room_list_len(rooms) >= 2);
  for (i = 0; i < roomchat_room_list_len(rooms); i++)
    found += same(roomchat_room_room_id(roomchat_room_list_get(rooms, i)), "get-1");
  CHECK(found == 1);
  CHECK(roomchat_room_list_get(rooms, roomchat_room_list_len(rooms)) == NULL);
  roomchat_room_list_free(rooms);
  CHECK(roomchat_room_list_len(NULL) == 0 && roomchat_room_list_get(NULL, 0) == NULL);
  roomchat_room_list_free(NULL);
}

static void test_update_chat_room(void) {
  roomchat_update_chat_room_params *params = NULL;
  roomchat_room_answer *answer = NULL;
  roomchat_room *room;
  char long_text[1102];
  seed_room("upd-1");
  OK(roomchat_update_chat_room_params_new(&params));
  OK(roomchat_update_chat_room_params_set_name(params, "Renamed"));
  OK(roomchat_update_chat_room_params_set_metadata(params, "{\"crm\": 7}"));
  OK(roomchat_client_update_chat_room(client, "upd-1", params, &answer, &err));
  CHECK(roomchat_room_answer_success(answer) == 1 && same(roomchat_room_answer_room_id(answer), "upd-1"));
  roomchat_room_answer_free(answer);
  answer = NULL;
  room = get_room("upd-1");
  CHECK(same(roomchat_room_name(room), "Renamed") && same(roomchat_room_metadata(room), "{\"crm\": 7}"));
  roomchat_room_free(room);
  FAILS(roomchat_client_update_chat_room(client, "nope", params, &answer, &err), ROOMCHAT_RESULT_NOT_FOUND, 0);
  /* metadata is at most 1000 characters: refused before sending. */
  memset(long_text, 'x', sizeof long_text - 1);
  long_text[sizeof long_text - 1] = '\0';
  OK(roomchat_update_chat_room_params_set_metadata(params, long_text));
  clear_journal();
  FAILS(roomchat_client_update_chat_room(client, "upd-1", params, &answer, &err), ROOMCHAT_RESULT_VALIDATION, 0);
  CHECK(journal_count("\"method\"") == 0 && answer == NULL);
  roomchat_update_chat_room_params_free(params);
}

static void test_chat_on_off_and_message(void) {
  roomchat_acknowledged *ack = NULL;
  roomchat_send_room_message_params *guest = NULL;
  roomchat_room *room;
  seed_room("onoff-1");
  OK(roomchat_send_room_message_params_new(&guest));
  OK(roomchat_send_room_message_params_set_user(guest, "{\"username\": \"guest\"}"));
  clear_journal();
  OK(roomchat_client_turn_chat_off(client, "onoff-1", &ack, &err));
  CHECK(roomchat_acknowledged_success(ack) == 1);
  roomchat_acknowledged_free(ack);
  ack = NULL;
  /* The on/off rule: /off turns it off, whatever the reference pages print. */
  CHECK(journal_count("\"path\":\"/consumer/api/v1/chatRoom/onoff-1/off\"") == 1);
  OK(roomchat_client_set_chat_off_message(client, "onoff-1", "back soon", &ack, &err));
  CHECK(roomchat_acknowledged_success(ack) == 1);
  roomchat_acknowledged_free(ack);
  ack = NULL;
  room = get_room("onoff-1");
  /* The chat-off state is a typed field (issue 37), no longer among the extra fields. */
  CHECK(roomchat_room_chat_off(room) == 1 && !has(roomchat_room_extra_json(room), "chatOff\""));
  CHECK(has(roomchat_room_extra_json(room), "\"chatOffMessage\":\"back soon\""));
  roomchat_room_free(room);
  /* While off, a user cannot post. */
  FAILS(roomchat_client_send_room_message(client, "onoff-1", "hello?", guest, &ack, &err),
        ROOMCHAT_RESULT_INVALID_REQUEST, 400);
  OK(roomchat_client_turn_chat_on(client, "onoff-1", &ack, &err));
  roomchat_acknowledged_free(ack);
  ack = NULL;
  CHECK(journal_count("\"path\":\"/consumer/api/v1/chatRoom/onoff-1/on\"") == 1);
  OK(roomchat_client_send_room_message(client, "onoff-1", "hello!", guest, &ack, &err));
  roomchat_acknowledged_free(ack);
  ack = NULL;
  CHECK(room_total("onoff-1") == 1);
  roomchat_send_room_message_params_free(guest);
  FAILS(roomchat_client_turn_chat_off(client, "nope", &ack, &err), ROOMCHAT_RESULT_NOT_FOUND, 0);
  FAILS(roomchat_client_turn_chat_on(client, "nope", &ack, &err), ROOMCHAT_RESULT_NOT_FOUND, 0);
  FAILS(roomchat_client_set_chat_off_message(client, "nope", "x", &ack, &err), ROOMCHAT_RESULT_NOT_FOUND, 0);
  /* A required argument is no optional one: NULL is refused. */
  FAILS(roomchat_client_set_chat_off_message(client, "onoff-1", NULL, &ack, &err), ROOMCHAT_RESULT_INVALID_ARGUMENT,
        0);
  CHECK(ack == NULL);
}

static void test_delete_chat_room(void) {
  roomchat_room_answer *answer = NULL;
  roomchat_room *room = NULL;
  seed_room("del-1");
  CHECK(admin("/_emulator/messages", "{\"roomId\": \"del-1\", \"count\": 3}", NULL) == 200);
  OK(roomchat_client_delete_chat_room(client, "del-1", &answer, &err));
  CHECK(roomchat_room_answer_success(answer) == 1 && same(roomchat_room_answer_room_id(answer), "del-1"));
  roomchat_room_answer_free(answer);
  answer = NULL;
  FAILS(roomchat_client_get_chat_room(client, "del-1", &room, &err), ROOMCHAT_RESULT_NOT_FOUND, 404);
  /* A second delete (what a retry after a lost answer meets) is not found. */
  FAILS(roomchat_client_delete_chat_room(client, "del-1", &answer, &err), ROOMCHAT_RESULT_NOT_FOUND, 404);
  CHECK(answer == NULL && room == NULL);
}

/* ---- room messages -------------------------------------------------------------------- */

static void test_send_room_message_and_room_messages(void) {
  roomchat_send_room_message_params *system = NULL, *as_user = NULL, *none = NULL;
  roomchat_room_messages_params *query = NULL;
  roomchat_acknowledged *ack = NULL;
  roomchat_message_page *page = NULL;
  roomchat_created_user *ann = NULL;
  const roomchat_chat_message *m;
  seed_room("msg-1");
  OK(roomchat_client_create_user(client, "ann", ROOMCHAT_ROLE_REGULAR, NULL, "{\"uniqueUserIdentifier\": \"crm-42\"}",
                                 &ann, &err));
  OK(roomchat_send_room_message_params_new(&system));
  OK(roomchat_send_room_message_params_set_system_message(system, true));
  OK(roomchat_send_room_message_params_new(&as_user));
  OK(roomchat_send_room_message_params_set_user_access_token(as_user, roomchat_created_user_access_token(ann)));
  clear_journal();
  OK(roomchat_client_send_room_message(client, "msg-1", "Welcome", system, &ack, &err));
  CHECK(roomchat_acknowledged_success(ack) == 1);
  roomchat_acknowledged_free(ack);
  ack = NULL;
  OK(roomchat_client_send_room_message(client, "msg-1", "Hi all", as_user, &ack, &err));
  roomchat_acknowledged_free(ack);
  ack = NULL;
  CHECK(journal_count("\"method\":\"POST\",\"path\":\"/consumer/api/v1/chatroom/msg-1/message\"") == 2);
  /* Exactly one author: none is refused before sending. */
  OK(roomchat_send_room_message_params_new(&none));
  FAILS(roomchat_client_send_room_message(client, "msg-1", "who?", none, &ack, &err), ROOMCHAT_RESULT_VALIDATION, 0);
  roomchat_send_room_message_params_free(none);
  FAILS(roomchat_client_send_room_message(client, "nope", "x", system, &ack, &err), ROOMCHAT_RESULT_NOT_FOUND, 404);
  /* A message with a file and one with a bot's buttons, seeded. */
  CHECK(admin("/_emulator/messages",
              "{\"roomId\": \"msg-1\", \"messages\": [{\"message\": \"see file\", \"system\": true, \"file\": "
              "{\"url\": \"https://files.example/a.png\", \"fileName\": \"a.png\", \"size\": 1234, \"fileType\": "
              "\"image\"}}, {\"message\": \"buttons\", \"system\": true, \"actionButtons\": [{\"type\": \"link\", "
              "\"displayText\": \"Docs\", \"id\": \"docs\", \"url\": \"https://docs.example\"}, {\"type\": \"action\", "
              "\"displayText\": \"Yes\", \"id\": \"yes\", \"payload\": \"y\"}]}]}",
              NULL) == 200);
  OK(roomchat_room_messages_params_new(&query));
  OK(roomchat_room_messages_params_set_limit(query, 3));
  OK(roomchat_client_room_messages(client, "msg-1", query, &page, &err));
  CHECK(roomchat_message_page_total_records(page) == 4 && roomchat_message_page_count(page) == 3);
  CHECK(roomchat_message_page_limit(page) == 3 && roomchat_message_page_skip(page) == 0);
  CHECK(roomchat_message_page_messages_len(page) == 3);
  m = roomchat_message_page_messages_get(page, 0); /* oldest first */
  CHECK(same(roomchat_chat_message_message(m), "Welcome") && same(roomchat_chat_message_chat_room(m), "msg-1"));
  CHECK(same(roomchat_chat_message_author_username(roomchat_chat_message_user(m)), "system"));
  /* The system author has no identifier (the service's null): NULL, not the text "null". */
  CHECK(roomchat_chat_message_author_unique_user_identifier(roomchat_chat_message_user(m)) == NULL);
  m = roomchat_message_page_messages_get(page, 1);
  CHECK(same(roomchat_chat_message_author_username(roomchat_chat_message_user(m)), "ann"));
  /* An identifier is text: strcmp(id, "crm-42") == 0, no JSON quotes (issue 37). */
  CHECK(same(roomchat_chat_message_author_unique_user_identifier(roomchat_chat_message_user(m)), "crm-42"));
  CHECK(same(roomchat_chat_message_author_id(roomchat_chat_message_user(m)), roomchat_created_user_user_id(ann)));
  m = roomchat_message_page_messages_get(page, 2);
  CHECK(same(roomchat_message_file_url(roomchat_chat_message_file(m)), "https://files.example/a.png"));
  CHECK(roomchat_message_file_size(roomchat_chat_message_file(m)) == 1234.0);
  CHECK(roomchat_message_page_messages_get(page, 3) == NULL);
  roomchat_message_page_free(page);
  page = NULL;
  /* The next page: the bot's buttons, a list in a record in a list. */
  OK(roomchat_room_messages_params_set_skip(query, 3));
  OK(roomchat_client_room_messages(client, "msg-1", query, &page, &err));
  CHECK(roomchat_message_page_messages_len(page) == 1 && roomchat_message_page_skip(page) == 3);
  m = roomchat_message_page_messages_get(page, 0);
  CHECK(roomchat_chat_message_action_buttons_len(m) == 2);
  CHECK(same(roomchat_action_button_display_text(roomchat_chat_message_action_buttons_get(m, 0)), "Docs"));
  CHECK(same(roomchat_action_button_url(roomchat_chat_message_action_buttons_get(m, 0)), "https://docs.example"));
  CHECK(same(roomchat_action_button_button_type(roomchat_chat_message_action_buttons_get(m, 1)), "action"));
  CHECK(roomchat_chat_message_action_buttons_get(m, 2) == NULL);
  roomchat_message_page_free(page);
  page = NULL;
  /* onlyAttachments: the one with a file. */
  OK(roomchat_room_messages_params_set_skip(query, 0));
  OK(roomchat_room_messages_params_set_only_attachments(query, true));
  OK(roomchat_client_room_messages(client, "msg-1", query, &page, &err));
  CHECK(roomchat_message_page_messages_len(page) == 1);
  CHECK(same(roomchat_chat_message_message(roomchat_message_page_messages_get(page, 0)), "see file"));
  roomchat_message_page_free(page);
  page = NULL;
  FAILS(roomchat_client_room_messages(client, "nope", NULL, &page, &err), ROOMCHAT_RESULT_NOT_FOUND, 0);
  CHECK(roomchat_message_page_messages_len(NULL) == 0 && roomchat_message_page_messages_get(NULL, 0) == NULL);
  roomchat_room_messages_params_free(query);
  roomchat_send_room_message_params_free(system);
  roomchat_send_room_message_params_free(as_user);
  roomchat_created_user_free(ann);
}

static void test_delete_room_messages(void) {
  roomchat_delete_room_messages_params *keep = NULL;
  roomchat_room_answer *answer = NULL;
  seed_room("delmsg-1");
  CHECK(admin("/_emulator/messages", "{\"roomId\": \"delmsg-1\", \"count\": 5}", NULL) == 200);
  CHECK(room_total("delmsg-1") == 5);
  OK(roomchat_delete_room_messages_params_new(&keep));
  OK(roomchat_delete_room_messages_params_set_do_not_delete_channel_messages(keep, true));
  OK(roomchat_client_delete_room_messages(client, "delmsg-1", keep, &answer, &err));
  CHECK(roomchat_room_answer_success(answer) == 1 && same(roomchat_room_answer_room_id(answer), "delmsg-1"));
  roomchat_room_answer_free(answer);
  answer = NULL;
  CHECK(room_total("delmsg-1") == 0);
  CHECK(journal_count("doNotDeleteChannelMessages") >= 1);
  FAILS(roomchat_client_delete_room_messages(client, "nope", NULL, &answer, &err), ROOMCHAT_RESULT_NOT_FOUND, 404);
  roomchat_delete_room_messages_params_free(keep);
}

/* ---- channels and conversations -------------------------------------------------------- */

static void test_channels(void) {
  roomchat_create_channel_params *create = NULL;
  roomchat_update_channel_params *update = NULL;
  roomchat_send_channel_message_params *system = NULL;
  roomchat_channel *channel = NULL;
  roomchat_acknowledged *ack = NULL;
  roomchat_message_page *page = NULL;
  char channel_id[64] = "", message_id[64] = "";
  const roomchat_chat_message *m;
  seed_room("chan-1");
  OK(roomchat_create_channel_params_new(&create));
  OK(roomchat_create_channel_params_set_notify_all_users(create, true));
  OK(roomchat_client_create_channel(client, "chan-1", "Q&A", create, &channel, &err));
  CHECK(same(roomchat_channel_channel_name(channel), "Q&A") && same(roomchat_channel_room_id(channel), "chan-1"));
  CHECK(roomchat_channel_notify_all_users(channel) == 1);
  if (roomchat_channel_id(channel)) snprintf(channel_id, sizeof channel_id, "%s", roomchat_channel_id(channel));
  CHECK(strlen(channel_id) == 24);
  roomchat_channel_free(channel);
  channel = NULL;
  FAILS(roomchat_client_create_channel(client, "nope", "x", NULL, &channel, &err), ROOMCHAT_RESULT_NOT_FOUND, 0);

  OK(roomchat_update_channel_params_new(&update));
  OK(roomchat_update_channel_params_set_channel_name(update, "Questions"));
  OK(roomchat_update_channel_params_set_enabled(update, false));
  OK(roomchat_client_update_channel(client, "chan-1", channel_id, update, &channel, &err));
  CHECK(same(roomchat_channel_channel_name(channel), "Questions") && roomchat_channel_enabled(channel) == 0);
  roomchat_channel_free(channel);
  channel = NULL;
  FAILS(roomchat_client_update_channel(client, "chan-1", "0123456789abcdef01234567", update, &channel, &err),
        ROOMCHAT_RESULT_NOT_FOUND, 400);
  roomchat_update_channel_params_free(update);

  OK(roomchat_send_channel_message_params_new(&system));
  OK(roomchat_send_channel_message_params_set_system_message(system, true));
  OK(roomchat_client_send_channel_message(client, "chan-1", channel_id, "first question", system, &ack, &err));
  CHECK(roomchat_acknowledged_success(ack) == 1);
  roomchat_acknowledged_free(ack);
  ack = NULL;
  FAILS(roomchat_client_send_channel_message(client, "chan-1", "0123456789abcdef01234567", "x", system, &ack, &err),
        ROOMCHAT_RESULT_NOT_FOUND, 0);
  OK(roomchat_client_channel_messages(client, "chan-1", channel_id, NULL, &page, &err));
  CHECK(roomchat_message_page_total_records(page) == 1 && roomchat_message_page_messages_len(page) == 1);
  m = roomchat_message_page_messages_get(page, 0);
  CHECK(same(roomchat_chat_message_message(m), "first question") && same(roomchat_chat_message_channel(m), channel_id));
  if (roomchat_chat_message_id(m)) snprintf(message_id, sizeof message_id, "%s", roomchat_chat_message_id(m));
  roomchat_message_page_free(page);
  page = NULL;
  /* The room's own history does not hold the channel's messages. */
  CHECK(room_total("chan-1") == 0);
  FAILS(roomchat_client_channel_messages(client, "chan-1", "0123456789abcdef01234567", NULL, &page, &err),
        ROOMCHAT_RESULT_NOT_FOUND, 0);

  OK(roomchat_client_delete_channel_message(client, "chan-1", channel_id, message_id, &ack, &err));
  CHECK(roomchat_acknowledged_success(ack) == 1 && same(roomchat_acknowledged_message(ack), "channel message deleted"));
  roomchat_acknowledged_free(ack);
  ack = NULL;
  OK(roomchat_client_channel_messages(client, "chan-1", channel_id, NULL, &page, &err));
  CHECK(roomchat_message_page_total_records(page) == 0);
  roomchat_message_page_free(page);
  FAILS(roomchat_client_delete_channel_message(client, "chan-1", channel_id, message_id, &ack, &err),
        ROOMCHAT_RESULT_NOT_FOUND, 400);
  CHECK(journal_count("\"path\":\"/consumer/api/v2/chatroom/chan-1/channel/") >= 2);
  roomchat_send_channel_message_params_free(system);
  roomchat_create_channel_params_free(create);
}

static void test_list_conversations(void) {
  roomchat_conversation_list *conversations = NULL;
  const roomchat_conversation *c;
  char *body = NULL, conversation_id[64] = "";
  seed_room("conv-1");
  CHECK(admin("/_emulator/conversations",
              "{\"roomId\": \"conv-1\", \"memberOne\": {\"username\": \"ann\"}, \"memberTwo\": {\"username\": "
              "\"bob\"}, \"messages\": [{\"messages\": \"hi bob\", \"user\": {\"username\": \"ann\"}}]}",
              &body) == 200);
  CHECK(body && json_string_field(body, "conversationId", conversation_id, sizeof conversation_id));
  free(body);
  clear_journal();
  OK(roomchat_client_list_conversations(client, "conv-1", NULL, &conversations, &err));
  CHECK(roomchat_conversation_list_len(conversations) == 1);
  c = roomchat_conversation_list_get(conversations, 0);
  CHECK(same(roomchat_conversation_conversation_id(c), conversation_id));
  CHECK(same(roomchat_conversation_room_id(c), "conv-1"));
  CHECK(same(roomchat_conversation_member_username(roomchat_conversation_member_one(c)), "ann"));
  CHECK(same(roomchat_conversation_member_username(roomchat_conversation_member_two(c)), "bob"));
  roomchat_conversation_list_free(conversations);
  conversations = NULL;
  CHECK(journal_count("\"path\":\"/consumer/api/v2/room/conv-1/conversations\"") == 1);
  /* The heading's /chatroom/ form lists the same conversation. */
  {
    roomchat_list_conversations_params *params = NULL;
    OK(roomchat_list_conversations_params_new(&params));
    OK(roomchat_list_conversations_params_set_path_form(params, "chatroom"));
    OK(roomchat_client_list_conversations(client, "conv-1", params, &conversations, &err));
    CHECK(roomchat_conversation_list_len(conversations) == 1);
    roomchat_conversation_list_free(conversations);
    conversations = NULL;
    roomchat_list_conversations_params_free(params);
    CHECK(journal_count("\"path\":\"/consumer/api/v2/chatroom/conv-1/conversations\"") == 1);
  }
  FAILS(roomchat_client_list_conversations(client, "nope", NULL, &conversations, &err), ROOMCHAT_RESULT_NOT_FOUND, 0);
  CHECK(conversations == NULL);
}

/* ---- users and members ----------------------------------------------------------------- */

static void test_users(void) {
  roomchat_create_user_v2_params *create = NULL;
  roomchat_update_user_params *update = NULL;
  roomchat_remove_user_params *remove = NULL;
  roomchat_provisioned_user *made = NULL;
  roomchat_user_profile *profile = NULL;
  roomchat_updated_user *updated = NULL;
  roomchat_room_name_record_list *rooms = NULL;
  roomchat_acknowledged *ack = NULL;
  seed_room("users-1");
  /* create_user_v2 with a membership. */
  OK(roomchat_create_user_v2_params_new(&create));
  OK(roomchat_create_user_v2_params_set_first_name(create, "Ann"));
  OK(roomchat_create_user_v2_params_set_meta(create, "{\"tier\": \"gold\"}"));
  OK(roomchat_create_user_v2_params_set_membership_details(create, "{\"roleName\": \"user\", \"roomId\": \"users-1\"}"));
  OK(roomchat_client_create_user_v2(client, "crm-ann", "ann", create, &made, &err));
  CHECK(roomchat_provisioned_user_access_token(made) && strlen(roomchat_provisioned_user_access_token(made)) > 0);
  CHECK(same(roomchat_user_profile_username(roomchat_provisioned_user_user(made)), "ann"));
  roomchat_provisioned_user_free(made);
  made = NULL;
  OK(roomchat_create_user_v2_params_set_membership_details(create, "{\"roleName\": \"user\", \"roomId\": \"nope\"}"));
  FAILS(roomchat_client_create_user_v2(client, "crm-x", "x", create, &made, &err), ROOMCHAT_RESULT_NOT_FOUND, 0);
  roomchat_create_user_v2_params_free(create);
  /* get_user, user_rooms: the state create made. */
  OK(roomchat_client_get_user(client, "crm-ann", &profile, &err));
  CHECK(same(roomchat_user_profile_username(profile), "ann") && same(roomchat_user_profile_first_name(profile), "Ann"));
  /* An identifier is text, not JSON text with its quotes (issue 37). */
  CHECK(same(roomchat_user_profile_unique_user_identifier(profile), "crm-ann"));
  CHECK(has(roomchat_user_profile_meta(profile), "gold"));
  roomchat_user_profile_free(profile);
  profile = NULL;
  OK(roomchat_client_user_rooms(client, "crm-ann", &rooms, &err));
  CHECK(roomchat_room_name_record_list_len(rooms) == 1);
  CHECK(same(roomchat_room_name_record_room_id(roomchat_room_name_record_list_get(rooms, 0)), "users-1"));
  roomchat_room_name_record_list_free(rooms);
  rooms = NULL;
  FAILS(roomchat_client_user_rooms(client, "nobody", &rooms, &err), ROOMCHAT_RESULT_USER_NOT_FOUND, 0);
  /* update_user by uniqueUserIdentifier; externalUserId is any JSON. */
  OK(roomchat_update_user_params_new(&update));
  OK(roomchat_update_user_params_set_unique_user_identifier(update, "crm-ann"));
  OK(roomchat_update_user_params_set_username(update, "ann2"));
  OK(roomchat_update_user_params_set_external_user_id(update, "7"));
  OK(roomchat_client_update_user(client, update, &updated, &err));
  CHECK(same(roomchat_updated_user_username(updated), "ann2"));
  roomchat_updated_user_free(updated);
  updated = NULL;
  OK(roomchat_client_get_user(client, "crm-ann", &profile, &err));
  CHECK(same(roomchat_user_profile_username(profile), "ann2"));
  roomchat_user_profile_free(profile);
  profile = NULL;
  roomchat_update_user_params_free(update);
  /* remove_user: gone for good. */
  OK(roomchat_remove_user_params_new(&remove));
  OK(roomchat_remove_user_params_set_unique_user_identifier(remove, "crm-ann"));
  OK(roomchat_client_remove_user(client, remove, &ack, &err));
  CHECK(roomchat_acknowledged_success(ack) == 1 && same(roomchat_acknowledged_message(ack), "user removed"));
  roomchat_acknowledged_free(ack);
  ack = NULL;
  FAILS(roomchat_client_get_user(client, "crm-ann", &profile, &err), ROOMCHAT_RESULT_USER_NOT_FOUND, 400);
  FAILS(roomchat_client_remove_user(client, remove, &ack, &err), ROOMCHAT_RESULT_USER_NOT_FOUND, 400);
  roomchat_remove_user_params_free(remove);
  CHECK(profile == NULL && ack == NULL);
}

static void test_members(void) {
  roomchat_member *member = NULL;
  roomchat_member_page *page = NULL;
  roomchat_acknowledged *ack = NULL;
  roomchat_created_user *user = NULL;
  seed_room("mem-1");
  OK(roomchat_client_create_user(client, "moe", ROOMCHAT_ROLE_REGULAR, NULL, "{\"uniqueUserIdentifier\": \"crm-moe\"}",
                                 &user, &err));
  roomchat_created_user_free(user);
  OK(roomchat_client_set_member(client, "mem-1", "crm-moe", "moderator", &member, &err));
  CHECK(same(roomchat_member_role_name(member), "moderator"));
  CHECK(same(roomchat_room_name_record_room_id(roomchat_member_chat_room(member)), "mem-1"));
  CHECK(same(roomchat_user_profile_username(roomchat_member_user(member)), "moe"));
  roomchat_member_free(member);
  member = NULL;
  /* An upsert: the role changes, no second membership. */
  OK(roomchat_client_set_member(client, "mem-1", "crm-moe", "guest", &member, &err));
  roomchat_member_free(member);
  member = NULL;
  OK(roomchat_client_list_members(client, "mem-1", NULL, &page, &err));
  CHECK(roomchat_member_page_total(page) == 1 && roomchat_member_page_data_len(page) == 1);
  CHECK(same(roomchat_member_role_name(roomchat_member_page_data_get(page, 0)), "guest"));
  roomchat_member_page_free(page);
  page = NULL;
  FAILS(roomchat_client_set_member(client, "mem-1", "nobody", "user", &member, &err), ROOMCHAT_RESULT_USER_NOT_FOUND,
        400);
  FAILS(roomchat_client_set_member(client, "nope", "crm-moe", "user", &member, &err), ROOMCHAT_RESULT_NOT_FOUND, 400);
  clear_journal();
  FAILS(roomchat_client_set_member(client, "mem-1", "crm-moe", "boss", &member, &err), ROOMCHAT_RESULT_VALIDATION, 0);
  CHECK(journal_count("\"method\"") == 0);
  FAILS(roomchat_client_list_members(client, "nope", NULL, &page, &err), ROOMCHAT_RESULT_NOT_FOUND, 400);
  OK(roomchat_client_remove_member(client, "mem-1", "crm-moe", &ack, &err));
  CHECK(roomchat_acknowledged_success(ack) == 1);
  roomchat_acknowledged_free(ack);
  ack = NULL;
  OK(roomchat_client_list_members(client, "mem-1", NULL, &page, &err));
  CHECK(roomchat_member_page_total(page) == 0);
  roomchat_member_page_free(page);
  FAILS(roomchat_client_remove_member(client, "mem-1", "crm-moe", &ack, &err), ROOMCHAT_RESULT_NOT_FOUND, 400);
  CHECK(member == NULL && ack == NULL);
}

/* ---- bots ------------------------------------------------------------------------------ */

static void test_bots(void) {
  roomchat_create_bot_params *create = NULL;
  roomchat_send_bot_message_params *say = NULL;
  roomchat_bot_answer *answer = NULL;
  roomchat_bot_list *bots = NULL;
  roomchat_bot_room_answer *in_room = NULL;
  roomchat_acknowledged *ack = NULL;
  roomchat_message_page *page = NULL;
  const roomchat_chat_message *m;
  char bot_id[64] = "";
  size_t i, found = 0;
  seed_room("bots-1");
  OK(roomchat_create_bot_params_new(&create));
  OK(roomchat_create_bot_params_set_trigger(create, "message"));
  OK(roomchat_create_bot_params_set_message_visibility(create, "private"));
  FAILS(roomchat_client_create_bot(client, "helper", "https://hooks.example/h", create, &answer, &err),
        ROOMCHAT_RESULT_INVALID_REQUEST, 400);
  OK(roomchat_create_bot_params_set_trigger(create, "mention"));
  OK(roomchat_create_bot_params_set_description(create, "answers questions"));
  OK(roomchat_client_create_bot(client, "helper", "https://hooks.example/h", create, &answer, &err));
  roomchat_create_bot_params_free(create);
  CHECK(roomchat_bot_answer_success(answer) == 1);
  CHECK(same(roomchat_bot_name(roomchat_bot_answer_bot(answer)), "helper"));
  CHECK(same(roomchat_bot_webhook_url(roomchat_bot_answer_bot(answer)), "https://hooks.example/h"));
  if (roomchat_bot_id(roomchat_bot_answer_bot(answer)))
    snprintf(bot_id, sizeof bot_id, "%s", roomchat_bot_id(roomchat_bot_answer_bot(answer)));
  roomchat_bot_answer_free(answer);
  answer = NULL;

  OK(roomchat_client_list_bots(client, &bots, &err));
  CHECK(roomchat_bot_list_success(bots) == 1);
  for (i = 0; i < roomchat_bot_list_bots_len(bots); i++) found += same(roomchat_bot_id(roomchat_bot_list_bots_get(bots, i)), bot_id);
  CHECK(found == 1);
  roomchat_bot_list_free(bots);

  OK(roomchat_client_disable_bot(client, bot_id, &answer, &err));
  CHECK(roomchat_bot_enabled(roomchat_bot_answer_bot(answer)) == 0);
  roomchat_bot_answer_free(answer);
  answer = NULL;
  OK(roomchat_client_enable_bot(client, bot_id, &answer, &err));
  CHECK(roomchat_bot_enabled(roomchat_bot_answer_bot(answer)) == 1);
  roomchat_bot_answer_free(answer);
  answer = NULL;
  /* An unknown bot: the service's 401 that is no authentication failure. */
  FAILS(roomchat_client_enable_bot(client, "0123456789abcdef01234567", &answer, &err), ROOMCHAT_RESULT_NOT_FOUND, 401);
  FAILS(roomchat_client_disable_bot(client, "0123456789abcdef01234567", &answer, &err), ROOMCHAT_RESULT_NOT_FOUND, 401);

  OK(roomchat_send_bot_message_params_new(&say));
  OK(roomchat_send_bot_message_params_set_action_buttons(
      say, "[{\"type\": \"link\", \"displayText\": \"Docs\", \"id\": \"docs\", \"url\": \"https://docs.example\"}]"));
  /* Not enabled in the room yet. */
  FAILS(roomchat_client_send_bot_message(client, bot_id, "bots-1", "hello", say, &ack, &err),
        ROOMCHAT_RESULT_INVALID_REQUEST, 400);
  OK(roomchat_client_enable_bot_in_room(client, bot_id, "bots-1", &in_room, &err));
  CHECK(roomchat_bot_room_answer_success(in_room) == 1);
  CHECK(same(roomchat_bot_status_status(roomchat_bot_room_answer_bot_status(in_room)), "ENABLED"));
  roomchat_bot_room_answer_free(in_room);
  in_room = NULL;
  OK(roomchat_client_send_bot_message(client, bot_id, "bots-1", "hello", say, &ack, &err));
  CHECK(roomchat_acknowledged_success(ack) == 1);
  roomchat_acknowledged_free(ack);
  ack = NULL;
  OK(roomchat_client_room_messages(client, "bots-1", NULL, &page, &err));
  CHECK(roomchat_message_page_messages_len(page) == 1);
  m = roomchat_message_page_messages_get(page, 0);
  CHECK(same(roomchat_chat_message_message(m), "hello") && roomchat_chat_message_action_buttons_len(m) == 1);
  CHECK(same(roomchat_action_button_button_id(roomchat_chat_message_action_buttons_get(m, 0)), "docs"));
  roomchat_message_page_free(page);
  OK(roomchat_client_disable_bot_in_room(client, bot_id, "bots-1", &in_room, &err));
  CHECK(roomchat_bot_room_answer_success(in_room) == 1 && roomchat_bot_room_answer_message(in_room) != NULL);
  roomchat_bot_room_answer_free(in_room);
  in_room = NULL;
  FAILS(roomchat_client_send_bot_message(client, bot_id, "bots-1", "again", say, &ack, &err),
        ROOMCHAT_RESULT_INVALID_REQUEST, 400);
  FAILS(roomchat_client_enable_bot_in_room(client, bot_id, "nope", &in_room, &err), ROOMCHAT_RESULT_NOT_FOUND, 401);
  FAILS(roomchat_client_disable_bot_in_room(client, "0123456789abcdef01234567", "bots-1", &in_room, &err),
        ROOMCHAT_RESULT_NOT_FOUND, 401);
  FAILS(roomchat_client_send_bot_message(client, "0123456789abcdef01234567", "bots-1", "x", say, &ack, &err),
        ROOMCHAT_RESULT_NOT_FOUND, 0);
  roomchat_send_bot_message_params_free(say);
  CHECK(ack == NULL && in_room == NULL);
}

/* ---- iterators ------------------------------------------------------------------------- */

/* Iterates every message of the room from `skip`, `page_size` a page; counts them, checks their order. */
static size_t export_room(const char *room_id, uint64_t page_size, uint64_t skip, uint64_t *next_skip) {
  roomchat_room_messages_params *params = NULL;
  roomchat_room_messages_iter *iter = NULL;
  roomchat_chat_message *message = NULL;
  roomchat_result code;
  size_t count = 0;
  char want[64];
  OK(roomchat_room_messages_params_new(&params));
  OK(roomchat_room_messages_params_set_limit(params, page_size));
  OK(roomchat_room_messages_params_set_skip(params, skip));
  OK(roomchat_client_iter_room_messages(client, room_id, params, &iter, &err));
  roomchat_room_messages_params_free(params);
  while ((code = roomchat_room_messages_iter_next(iter, &message, &err)) == ROOMCHAT_RESULT_OK) {
    snprintf(want, sizeof want, "message %llu", (unsigned long long)(skip + count + 1));
    if (!same(roomchat_chat_message_message(message), want)) {
      CHECK(same(roomchat_chat_message_message(message), want));
      fprintf(stderr, "  at %zu: %s\n", count, roomchat_chat_message_message(message));
    }
    roomchat_chat_message_free(message);
    message = NULL;
    count++;
  }
  CHECK(code == ROOMCHAT_RESULT_ITERATION_DONE && err == NULL && message == NULL);
  if (next_skip) *next_skip = roomchat_room_messages_iter_next_skip(iter);
  roomchat_room_messages_iter_free(iter);
  return count;
}

static void test_iter_room_messages(void) {
  roomchat_room_messages_iter *iter = NULL;
  roomchat_chat_message *message = NULL;
  uint64_t next_skip = 0;
  int i;
  seed_room("hist-1");
  CHECK(admin("/_emulator/messages", "{\"roomId\": \"hist-1\", \"count\": 450, \"system\": true}", NULL) == 200);
  clear_journal();
  /* Every message, in order, in 3 pages and not one request more. */
  CHECK(export_room("hist-1", 200, 0, &next_skip) == 450);
  CHECK(next_skip == 450);
  CHECK(journal_count("\"path\":\"/consumer/api/v1/chatRoom/hist-1/messages\"") == 3);
  /* Resumed from a skip. */
  CHECK(export_room("hist-1", 200, 440, NULL) == 10);
  /* A limit of 0 is "not set", as for roomchat_client_list_users and roomchat_client_users_iter
     (issue 37, item 20): the iterator's page size (200), and for one call the service's default. */
  clear_journal();
  CHECK(export_room("hist-1", 0, 0, NULL) == 450);
  CHECK(journal_count("limit=200") == 3 && journal_count("limit=0") == 0);
  {
    roomchat_room_messages_params *zero = NULL;
    roomchat_message_page *page = NULL;
    clear_journal();
    OK(roomchat_room_messages_params_new(&zero));
    OK(roomchat_room_messages_params_set_limit(zero, 0));
    OK(roomchat_client_room_messages(client, "hist-1", zero, &page, &err));
    CHECK(roomchat_message_page_count(page) == 50 && roomchat_message_page_limit(page) == 50);
    CHECK(journal_count("\"path\":\"/consumer/api/v1/chatRoom/hist-1/messages\"") == 1 && journal_count("limit=") == 0);
    roomchat_message_page_free(page);
    roomchat_room_messages_params_free(zero);
  }

  /* An error on the second page: returned, and the next step fetches that page again. */
  OK(roomchat_client_iter_room_messages(client, "hist-1", NULL, &iter, &err));
  for (i = 0; i < 200; i++) {
    OK(roomchat_room_messages_iter_next(iter, &message, &err));
    roomchat_chat_message_free(message);
    message = NULL;
  }
  CHECK(roomchat_room_messages_iter_next_skip(iter) == 200);
  CHECK(admin("/_emulator/faults",
              "{\"method\": \"GET\", \"path\": \"/consumer/api/v1/chatRoom/hist-1/messages\", \"times\": 1, "
              "\"action\": {\"kind\": \"respond\", \"status\": 400, \"body\": \"{\\\"message\\\": \\\"try later\\\"}\"}}",
              NULL) == 200);
  FAILS(roomchat_room_messages_iter_next(iter, &message, &err), ROOMCHAT_RESULT_INVALID_REQUEST, 400);
  CHECK(message == NULL && roomchat_room_messages_iter_next_skip(iter) == 200);
  OK(roomchat_room_messages_iter_next(iter, &message, &err));
  CHECK(same(roomchat_chat_message_message(message), "message 201"));
  roomchat_chat_message_free(message);
  message = NULL;
  /* A NULL out-pointer loses no record. */
  FAILS(roomchat_room_messages_iter_next(iter, NULL, &err), ROOMCHAT_RESULT_INVALID_ARGUMENT, 0);
  OK(roomchat_room_messages_iter_next(iter, &message, &err));
  CHECK(same(roomchat_chat_message_message(message), "message 202"));
  roomchat_chat_message_free(message);
  message = NULL;
  roomchat_room_messages_iter_free(iter);
  iter = NULL;

  /* An unknown room: NOT_FOUND every time, never the end. */
  OK(roomchat_client_iter_room_messages(client, "nope", NULL, &iter, &err));
  FAILS(roomchat_room_messages_iter_next(iter, &message, &err), ROOMCHAT_RESULT_NOT_FOUND, 0);
  FAILS(roomchat_room_messages_iter_next(iter, &message, &err), ROOMCHAT_RESULT_NOT_FOUND, 0);
  roomchat_room_messages_iter_free(iter);
  iter = NULL;
  /* NULLs. */
  FAILS(roomchat_client_iter_room_messages(client, NULL, NULL, &iter, &err), ROOMCHAT_RESULT_INVALID_ARGUMENT, 0);
  FAILS(roomchat_client_iter_room_messages(client, "hist-1", NULL, NULL, &err), ROOMCHAT_RESULT_INVALID_ARGUMENT, 0);
  FAILS(roomchat_room_messages_iter_next(NULL, &message, &err), ROOMCHAT_RESULT_INVALID_ARGUMENT, 0);
  CHECK(roomchat_room_messages_iter_next_skip(NULL) == 0);
  roomchat_room_messages_iter_free(NULL);
  CHECK(iter == NULL && message == NULL);
}

static void test_iter_channel_messages_and_members(void) {
  roomchat_channel_messages_params *by_two = NULL;
  roomchat_channel_messages_iter *messages = NULL;
  roomchat_list_members_iter *members = NULL;
  roomchat_chat_message *message = NULL;
  roomchat_member *member = NULL;
  roomchat_channel *channel = NULL;
  char body[256], channel_id[64] = "";
  size_t count = 0;
  int i;
  roomchat_created_user *user = NULL;
  seed_room("iter-1");
  OK(roomchat_client_create_channel(client, "iter-1", "talk", NULL, &channel, &err));
  if (roomchat_channel_id(channel)) snprintf(channel_id, sizeof channel_id, "%s", roomchat_channel_id(channel));
  roomchat_channel_free(channel);
  snprintf(body, sizeof body, "{\"roomId\": \"iter-1\", \"channelId\": \"%s\", \"count\": 5}", channel_id);
  CHECK(admin("/_emulator/messages", body, NULL) == 200);
  OK(roomchat_channel_messages_params_new(&by_two));
  OK(roomchat_channel_messages_params_set_limit(by_two, 2));
  OK(roomchat_client_iter_channel_messages(client, "iter-1", channel_id, by_two, &messages, &err));
  roomchat_channel_messages_params_free(by_two);
  while (roomchat_channel_messages_iter_next(messages, &message, &err) == ROOMCHAT_RESULT_OK) {
    CHECK(same(roomchat_chat_message_channel(message), channel_id));
    roomchat_chat_message_free(message);
    message = NULL;
    count++;
  }
  CHECK(count == 5 && err == NULL);
  roomchat_channel_messages_iter_free(messages);

  for (i = 0; i < 3; i++) {
    snprintf(body, sizeof body, "{\"uniqueUserIdentifier\": \"crm-it-%d\"}", i);
    OK(roomchat_client_create_user(client, "it", ROOMCHAT_ROLE_REGULAR, NULL, body, &user, &err));
    roomchat_created_user_free(user);
    user = NULL;
    snprintf(body, sizeof body, "{\"roomId\": \"iter-1\", \"uniqueUserIdentifier\": \"crm-it-%d\", \"roleName\": \"%s\"}",
             i, i == 0 ? "moderator" : "user");
    CHECK(admin("/_emulator/members", body, NULL) == 200);
  }
  count = 0;
  OK(roomchat_client_iter_list_members(client, "iter-1", NULL, &members, &err));
  while (roomchat_list_members_iter_next(members, &member, &err) == ROOMCHAT_RESULT_OK) {
    CHECK(same(roomchat_member_role_name(member), count == 0 ? "moderator" : "user"));
    roomchat_member_free(member);
    member = NULL;
    count++;
  }
  CHECK(count == 3 && err == NULL && roomchat_list_members_iter_next_skip(members) == 3);
  roomchat_list_members_iter_free(members);
}

/* ---- the webinar story ----------------------------------------------------------------- */

/* A backend provisions a room for a webinar, makes the host its moderator,
 * posts as the system and as the host, exports the transcript page by page,
 * and deletes the room. */
static void test_webinar_story(void) {
  roomchat_create_chat_room_params *room_params = NULL;
  roomchat_room_answer *room = NULL;
  roomchat_provisioned_user *host = NULL;
  roomchat_member *member = NULL;
  roomchat_send_room_message_params *as_system = NULL, *as_host = NULL;
  roomchat_acknowledged *ack = NULL;
  roomchat_room *gone = NULL;
  char room_id[64] = "";
  const char *transcript[2] = {"The webinar starts at 10:00.", "Welcome, everyone!"};
  char exported[256] = "";
  uint64_t resume_skip = 99;
  FILE *out = tmpfile();
  size_t length;

  OK(roomchat_create_chat_room_params_new(&room_params));
  OK(roomchat_create_chat_room_params_set_name(room_params, "Webinar: Q3 roadmap"));
  OK(roomchat_client_create_chat_room(client, room_params, &room, &err));
  roomchat_create_chat_room_params_free(room_params);
  if (roomchat_room_answer_room_id(room)) snprintf(room_id, sizeof room_id, "%s", roomchat_room_answer_room_id(room));
  roomchat_room_answer_free(room);

  OK(roomchat_client_create_user_v2(client, "host-42", "Grace", NULL, &host, &err));
  OK(roomchat_client_set_member(client, room_id, "host-42", "moderator", &member, &err));
  CHECK(same(roomchat_member_role_name(member), "moderator"));
  roomchat_member_free(member);

  OK(roomchat_send_room_message_params_new(&as_system));
  OK(roomchat_send_room_message_params_set_system_message(as_system, true));
  OK(roomchat_client_send_room_message(client, room_id, transcript[0], as_system, &ack, &err));
  roomchat_acknowledged_free(ack);
  ack = NULL;
  OK(roomchat_send_room_message_params_new(&as_host));
  OK(roomchat_send_room_message_params_set_user_access_token(as_host, roomchat_provisioned_user_access_token(host)));
  OK(roomchat_client_send_room_message(client, room_id, transcript[1], as_host, &ack, &err));
  roomchat_acknowledged_free(ack);
  roomchat_send_room_message_params_free(as_system);
  roomchat_send_room_message_params_free(as_host);

  /* The guide's export: the whole transcript, then where it ended. */
  CHECK(out != NULL);
  if (!out) return;
  CHECK(export_transcript(client, room_id, out, &resume_skip) == 0 && resume_skip == 2);
  rewind(out);
  length = fread(exported, 1, sizeof exported - 1, out);
  exported[length] = '\0';
  CHECK(strcmp(exported, "system: The webinar starts at 10:00.\nGrace: Welcome, everyone!\n") == 0);

  OK(roomchat_client_delete_chat_room(client, room_id, &room, &err));
  roomchat_room_answer_free(room);
  FAILS(roomchat_client_get_chat_room(client, room_id, &gone, &err), ROOMCHAT_RESULT_NOT_FOUND, 404);
  /* An export of the deleted room: each error reported and freed (valgrind: no leak), the
     export stopped after 3 in a row, at skip 0. */
  clear_journal();
  rewind(out);
  CHECK(export_transcript(client, room_id, out, &resume_skip) == -1 && resume_skip == 0);
  CHECK(journal_count("\"method\":\"GET\"") == 3);
  fclose(out);
  roomchat_provisioned_user_free(host);
}

int main(int argc, char **argv) {
  const char *args[] = {"--rate-limit", "100000/60s", NULL};
  if (argc < 2 || !emulator_start(&emu, argv[1], args)) {
    fprintf(stderr, "usage: %s <roomchat-emulator>\n", argv[0]);
    return 2;
  }
  {
    roomchat_client_options *options = NULL;
    CHECK(roomchat_client_options_new(emu.private_key, &options, NULL) == ROOMCHAT_RESULT_OK);
    CHECK(roomchat_client_options_set_base_url(options, emu.base_url) == ROOMCHAT_RESULT_OK);
    CHECK(roomchat_client_options_set_chat_url(options, emu.chat_url) == ROOMCHAT_RESULT_OK);
    CHECK(roomchat_client_options_set_rate_limit(options, 100000, 60000, false, 60000) == ROOMCHAT_RESULT_OK);
    CHECK(roomchat_client_new(options, &client, NULL) == ROOMCHAT_RESULT_OK);
    roomchat_client_options_free(options);
  }
  test_create_chat_room();
  test_get_and_list_chat_rooms();
  test_update_chat_room();
  test_chat_on_off_and_message();
  test_delete_chat_room();
  test_send_room_message_and_room_messages();
  test_delete_room_messages();
  test_channels();
  test_list_conversations();
  test_users();
  test_members();
  test_bots();
  test_iter_room_messages();
  test_iter_channel_messages_and_members();
  test_webinar_story();
  roomchat_client_free(client);
  CHECK(emulator_stop(&emu));
  printf("api: %d passed, %d failed\n", harness_passed, harness_failed);
  return harness_failed == 0 ? 0 : 1;
}
