/*
 * The C99 suite: every endpoint and every result code of the C ABI, against
 * the emulator binary, run under valgrind by tests/c/run.sh.
 *
 * With ROOMCHAT_TEST_TLS=1 the same suite runs over HTTPS: the emulator is
 * started with --tls, every client made here trusts its CA
 * (roomchat_client_options_set_ca_pem), and the admin calls go over https.
 *
 * usage: test_roomchat <path to roomchat-emulator>
 */
#include <pthread.h>
#include <time.h>

#include "harness.h"
#include "roomchat.h"

static emulator emu;

static roomchat_client *make_client(const char *key, const char *base_url, uint32_t retries, uint64_t timeout_ms,
                                    uint64_t max_response_bytes) {
  roomchat_client_options *options = NULL;
  roomchat_client *client = NULL;
  roomchat_error *err = NULL;
  CHECK(roomchat_client_options_new(key, &options, &err) == ROOMCHAT_RESULT_OK);
  roomchat_client_options_set_base_url(options, base_url);
  if (emu.ca_pem) CHECK(roomchat_client_options_set_ca_pem(options, emu.ca_pem) == ROOMCHAT_RESULT_OK);
  roomchat_client_options_set_chat_url(options, emu.chat_url);
  roomchat_client_options_set_public_key(options, emu.public_key);
  roomchat_client_options_set_app_name(options, "c-tests/1.0");
  roomchat_client_options_set_retries(options, retries, false);
  roomchat_client_options_set_timeouts(options, 0, timeout_ms);
  roomchat_client_options_set_rate_limit(options, 100000, 60000, false, 60000);
  if (max_response_bytes) roomchat_client_options_set_max_response_bytes(options, max_response_bytes);
  if (roomchat_client_new(options, &client, &err) != ROOMCHAT_RESULT_OK) {
    fprintf(stderr, "client: %s\n", roomchat_error_message(err));
    roomchat_error_free(err);
  }
  roomchat_client_options_free(options);
  return client;
}

/* Runs a failing call's error through the common checks and frees it. */
/* `errp` is read after the call has run (an argument `err` would not be: C leaves
 * the order in which arguments are evaluated unspecified). */
static void expect_error(roomchat_result got, roomchat_error **errp, roomchat_result want, int status) {
  roomchat_error *err = *errp;
  *errp = NULL;
  CHECK(got == want);
  if (got != want) fprintf(stderr, "  wanted %s, got %s: %s\n", roomchat_result_name(want), roomchat_result_name(got),
                           err ? roomchat_error_message(err) : "(no error)");
  CHECK(err != NULL);
  if (!err) return;
  CHECK(roomchat_error_code(err) == want);
  CHECK(roomchat_error_status(err) == status);
  CHECK(roomchat_error_message(err) != NULL);
  CHECK(strstr(roomchat_error_message(err), emu.private_key) == NULL);
  if (roomchat_error_path(err)) {
    CHECK(strstr(roomchat_error_path(err), emu.private_key) == NULL);
    CHECK(roomchat_error_method(err) != NULL);
  }
  roomchat_error_free(err);
}

static void test_version_and_names(void) {
  CHECK(strcmp(roomchat_version(), "0.1.0") == 0);
  CHECK(strcmp(roomchat_result_name(ROOMCHAT_RESULT_USER_NOT_FOUND), "user_not_found") == 0);
  CHECK(ROOMCHAT_RESULT_OK == 0 && ROOMCHAT_RESULT_CONFIGURATION == 14 && ROOMCHAT_RESULT_INVALID_ARGUMENT == 100);
}

static void test_users(roomchat_client *client) {
  roomchat_created_user *jon = NULL, *ann = NULL, *bob = NULL;
  roomchat_user_page *page = NULL;
  roomchat_users_iter *iter = NULL;
  roomchat_user *user = NULL;
  roomchat_error *err = NULL;
  const roomchat_user *third;
  roomchat_result rc;
  int count = 0;
  char jon_id[64];

  CHECK(roomchat_client_create_user(client, "jon", ROOMCHAT_ROLE_REGULAR, NULL, NULL, &jon, &err) == ROOMCHAT_RESULT_OK);
  CHECK(!roomchat_created_user_is_moderator(jon));
  CHECK(roomchat_created_user_chat_room(jon) == NULL);
  CHECK(strlen(roomchat_created_user_user_id(jon)) == 24);
  CHECK(count_occurrences(roomchat_created_user_access_token(jon), ".") == 2);
  strcpy(jon_id, roomchat_created_user_user_id(jon));
  CHECK(roomchat_client_create_user(client, "ann", ROOMCHAT_ROLE_MODERATOR_OF_ALL_ROOMS, NULL,
                                    "{\"uniqueUserIdentifier\": \"crm-ann\", \"email\": \"ann@example.com\"}", &ann,
                                    &err) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_created_user_is_moderator(ann));
  CHECK(roomchat_client_create_user(client, "bob", ROOMCHAT_ROLE_MODERATOR_OF_ROOM, "room-1", NULL, &bob, &err) ==
        ROOMCHAT_RESULT_OK);
  CHECK(strcmp(roomchat_created_user_chat_room(bob), "room-1") == 0);
  CHECK(strcmp(roomchat_created_user_username(bob), "bob") == 0);

  CHECK(roomchat_client_list_users(client, 0, 0, &page, &err) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_user_page_total(page) == 3);
  CHECK(roomchat_user_page_limit(page) == 50);
  CHECK(roomchat_user_page_skip(page) == 0);
  CHECK(roomchat_user_page_len(page) == 3);
  CHECK(strcmp(roomchat_user_username(roomchat_user_page_get(page, 0)), "jon") == 0);
  CHECK(roomchat_user_email(roomchat_user_page_get(page, 0)) == NULL); /* absent, not empty */
  CHECK(strcmp(roomchat_user_email(roomchat_user_page_get(page, 1)), "ann@example.com") == 0);
  CHECK(strcmp(roomchat_user_unique_user_identifier(roomchat_user_page_get(page, 1)), "crm-ann") == 0);
  CHECK(roomchat_user_is_moderator(roomchat_user_page_get(page, 1)) == 1);
  third = roomchat_user_page_get(page, 2);
  CHECK(strcmp(roomchat_user_chat_room(third), "room-1") == 0);
  CHECK(strcmp(roomchat_user_id(third), roomchat_created_user_user_id(bob)) == 0);
  CHECK(roomchat_user_profile_pic(third) != NULL);
  CHECK(strstr(roomchat_user_json(third), "\"created\"") != NULL);
  CHECK(roomchat_user_page_get(page, 3) == NULL);
  roomchat_user_page_free(page);

  page = NULL;
  CHECK(roomchat_client_list_users(client, 2, 1, &page, &err) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_user_page_len(page) == 2 && roomchat_user_page_skip(page) == 1);
  roomchat_user_page_free(page);

  CHECK(roomchat_client_users_iter(client, 1, &iter, &err) == ROOMCHAT_RESULT_OK);
  while ((rc = roomchat_users_iter_next(iter, &user, &err)) == ROOMCHAT_RESULT_OK) {
    CHECK(roomchat_user_username(user) != NULL);
    roomchat_user_free(user);
    user = NULL;
    count++;
  }
  CHECK(rc == ROOMCHAT_RESULT_ITERATION_DONE);
  CHECK(count == 3);
  CHECK(user == NULL); /* outputs are written only on success */
  roomchat_users_iter_free(iter);

  CHECK(roomchat_client_deactivate_user(client, ROOMCHAT_USER_IDENTIFIER_USER_ID, jon_id, &err) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_client_deactivate_user(client, ROOMCHAT_USER_IDENTIFIER_UNIQUE_USER_IDENTIFIER, "crm-ann", &err) ==
        ROOMCHAT_RESULT_OK);
  expect_error(roomchat_client_deactivate_user(client, ROOMCHAT_USER_IDENTIFIER_USER_ID, jon_id, &err), &err,
               ROOMCHAT_RESULT_USER_NOT_FOUND, 400);

  page = NULL;
  CHECK(roomchat_client_list_users(client, 0, 0, &page, &err) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_user_page_total(page) == 1);
  roomchat_user_page_free(page);
  roomchat_created_user_free(jon);
  roomchat_created_user_free(ann);
  roomchat_created_user_free(bob);
}

static void test_rooms_messages_sign_in(roomchat_client *client) {
  char *body = NULL, *url = NULL, *html = NULL, *raw = NULL;
  roomchat_room_list *rooms = NULL;
  char conversation[64], path[1024];
  roomchat_messages *messages = NULL;
  roomchat_created_user *mod = NULL;
  roomchat_error *err = NULL;
  const roomchat_message *first;
  roomchat_rate_limit_state state;
  uint16_t status = 0;
  int form;

  CHECK(http_request(&emu, "POST", "/_emulator/rooms", "{\"roomId\": \"r1\", \"name\": \"General\"}", NULL) == 200);
  CHECK(http_request(&emu, "POST", "/_emulator/conversations",
                     "{\"roomId\": \"r1\", \"messages\": [{\"messages\": \"hello\", \"user\": {\"username\": \"jon\", "
                     "\"email\": \"jon@example.com\"}}, {\"messages\": \"hi\", \"user\": {\"username\": \"ann\"}}]}",
                     &body) == 200);
  CHECK(json_string_field(body, "conversationId", conversation, sizeof conversation));
  free(body);

  for (form = 0; form < 2; form++) {
    messages = NULL;
    CHECK(roomchat_client_conversation_messages(client, "r1", conversation,
                                                form ? ROOMCHAT_PATH_FORM_CHAT_ROOM : ROOMCHAT_PATH_FORM_ROOM,
                                                &messages, &err) == ROOMCHAT_RESULT_OK);
    CHECK(roomchat_messages_len(messages) == 2);
    first = roomchat_messages_get(messages, 0);
    CHECK(strcmp(roomchat_message_get_field(first, ROOMCHAT_MESSAGE_FIELD_TEXT), "hello") == 0);
    CHECK(strcmp(roomchat_message_get_field(first, ROOMCHAT_MESSAGE_FIELD_CONVERSATION), conversation) == 0);
    CHECK(strcmp(roomchat_message_get_field(first, ROOMCHAT_MESSAGE_FIELD_AUTHOR_USERNAME), "jon") == 0);
    CHECK(strcmp(roomchat_message_get_field(first, ROOMCHAT_MESSAGE_FIELD_AUTHOR_EMAIL), "jon@example.com") == 0);
    CHECK(roomchat_message_get_field(first, ROOMCHAT_MESSAGE_FIELD_AUTHOR_UNIQUE_USER_IDENTIFIER) == NULL);
    CHECK(roomchat_message_get_field(first, ROOMCHAT_MESSAGE_FIELD_ID) != NULL);
    CHECK(roomchat_message_get_field(first, ROOMCHAT_MESSAGE_FIELD_CREATED) != NULL);
    CHECK(roomchat_message_get_field(first, ROOMCHAT_MESSAGE_FIELD_AUTHOR_ID) != NULL);
    CHECK(roomchat_messages_get(messages, 2) == NULL);
    roomchat_messages_free(messages);
  }
  CHECK(http_request(&emu, "GET", "/_emulator/journal", NULL, &body) == 200);
  snprintf(path, sizeof path, "\"path\":\"/consumer/api/v2/chatroom/r1/conversation/%s/messages\"", conversation);
  CHECK(count_occurrences(body, path) == 1);
  free(body);

  CHECK(roomchat_client_list_chat_rooms_typed(client, &rooms, &err) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_room_list_len(rooms) == 1);
  CHECK(strcmp(roomchat_room_room_id(roomchat_room_list_get(rooms, 0)), "r1") == 0);
  roomchat_room_list_free(rooms);

  CHECK(roomchat_client_create_user(client, "mod", ROOMCHAT_ROLE_MODERATOR_OF_ROOM, "r1", NULL, &mod, &err) ==
        ROOMCHAT_RESULT_OK);
  CHECK(roomchat_client_sign_in_url(client, "r1", roomchat_created_user_access_token(mod), &url, &err) ==
        ROOMCHAT_RESULT_OK);
  CHECK(strncmp(url, emu.chat_url, strlen(emu.chat_url)) == 0);
  CHECK(strstr(url, "/r1?accessToken=") != NULL);
  CHECK(http_request(&emu, "GET", url + strlen(emu.base_url), NULL, &body) == 200);
  CHECK(strstr(body, "data-moderator=\"true\"") != NULL);
  free(body);
  CHECK(roomchat_client_iframe_html(client, "r1", roomchat_created_user_access_token(mod), "100%", "600", &html,
                                    &err) == ROOMCHAT_RESULT_OK);
  CHECK(strncmp(html, "<iframe src=\"", 13) == 0);
  CHECK(strstr(html, "height=\"600\"") != NULL);
  roomchat_string_free(html);

  /* raw request: Validate Access Token with the public key */
  snprintf(path, sizeof path, "[[\"accessToken\", \"%s\"]]", roomchat_created_user_access_token(mod));
  CHECK(roomchat_client_raw_request(client, "GET", "/consumer/api/v1/validate", path, NULL,
                                    ROOMCHAT_RAW_AUTH_PUBLIC_KEY, &status, &raw, &err) == ROOMCHAT_RESULT_OK);
  CHECK(status == 200);
  CHECK(raw != NULL && strstr(raw, "\"valid\":true") != NULL);
  roomchat_string_free(raw);
  raw = NULL;
  CHECK(roomchat_client_raw_request(client, "POST", "/consumer/api/v1/user", NULL, "{\"username\": \"raw\"}",
                                    ROOMCHAT_RAW_AUTH_PRIVATE_KEY, &status, &raw, &err) == ROOMCHAT_RESULT_OK);
  CHECK(strstr(raw, "\"username\":\"raw\"") != NULL);
  roomchat_string_free(raw);
  roomchat_string_free(url);
  roomchat_created_user_free(mod);

  CHECK(roomchat_client_rate_limit_state(client, &state) == ROOMCHAT_RESULT_OK);
  CHECK(state.used > 0 && state.remaining + state.used == state.limit);
  CHECK(state.blocked_for_ms == -1);
}

static void test_invalid_arguments(roomchat_client *client) {
  roomchat_user_page *page = NULL;
  roomchat_created_user *user = NULL;
  roomchat_error *err = NULL;
  roomchat_client_options *options = NULL;
  roomchat_client *other = NULL;
  char *out = NULL;
  uint16_t status = 0;
  const char bad_utf8[] = {(char)0xff, (char)0xfe, 0};

  expect_error(roomchat_client_list_users(NULL, 0, 0, &page, &err), &err, ROOMCHAT_RESULT_INVALID_ARGUMENT, 0);
  expect_error(roomchat_client_list_users(client, 0, 0, NULL, &err), &err, ROOMCHAT_RESULT_INVALID_ARGUMENT, 0);
  CHECK(roomchat_client_list_users(client, 0, 0, NULL, NULL) == ROOMCHAT_RESULT_INVALID_ARGUMENT); /* err_out may be NULL */
  expect_error(roomchat_client_create_user(client, NULL, ROOMCHAT_ROLE_REGULAR, NULL, NULL, &user, &err), &err,
               ROOMCHAT_RESULT_INVALID_ARGUMENT, 0);
  expect_error(roomchat_client_create_user(client, bad_utf8, ROOMCHAT_ROLE_REGULAR, NULL, NULL, &user, &err), &err,
               ROOMCHAT_RESULT_INVALID_ARGUMENT, 0);
  expect_error(roomchat_client_create_user(client, "x", ROOMCHAT_ROLE_REGULAR, NULL, "{not json", &user, &err), &err,
               ROOMCHAT_RESULT_INVALID_ARGUMENT, 0);
  expect_error(roomchat_client_create_user(client, "x", ROOMCHAT_ROLE_MODERATOR_OF_ROOM, NULL, NULL, &user, &err), &err, ROOMCHAT_RESULT_INVALID_ARGUMENT, 0);
  expect_error(roomchat_client_raw_request(client, "GET", "/x", "{\"a\": 1}", NULL, ROOMCHAT_RAW_AUTH_NONE, &status,
                                           &out, &err), &err, ROOMCHAT_RESULT_INVALID_ARGUMENT, 0);
  CHECK(user == NULL && page == NULL && out == NULL);
  CHECK(roomchat_client_rate_limit_state(client, NULL) == ROOMCHAT_RESULT_INVALID_ARGUMENT);
  CHECK(roomchat_users_iter_next(NULL, NULL, NULL) == ROOMCHAT_RESULT_INVALID_ARGUMENT);
  CHECK(roomchat_client_options_new(NULL, &options, NULL) == ROOMCHAT_RESULT_INVALID_ARGUMENT);
  CHECK(roomchat_client_options_set_base_url(NULL, "x") == ROOMCHAT_RESULT_INVALID_ARGUMENT);
  CHECK(roomchat_error_code(NULL) == ROOMCHAT_RESULT_INVALID_ARGUMENT);
  CHECK(roomchat_error_message(NULL) == NULL);
  CHECK(roomchat_user_username(NULL) == NULL);
  CHECK(roomchat_user_is_moderator(NULL) == -1);
  CHECK(roomchat_user_page_len(NULL) == 0);
  /* _free(NULL) is a no-op for every object */
  roomchat_client_free(NULL);
  roomchat_client_options_free(NULL);
  roomchat_error_free(NULL);
  roomchat_user_free(NULL);
  roomchat_user_page_free(NULL);
  roomchat_users_iter_free(NULL);
  roomchat_messages_free(NULL);
  roomchat_created_user_free(NULL);
  roomchat_string_free(NULL);

  /* an invalid option is reported by roomchat_client_new */
  CHECK(roomchat_client_options_new(emu.private_key, &options, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_client_options_set_base_url(options, bad_utf8);
  expect_error(roomchat_client_new(options, &other, &err), &err, ROOMCHAT_RESULT_INVALID_ARGUMENT, 0);
  CHECK(other == NULL);
  roomchat_client_options_free(options);
}

static void add_fault(const char *spec) { CHECK(http_request(&emu, "POST", "/_emulator/faults", spec, NULL) == 200); }

static void test_error_codes(roomchat_client *client) {
  roomchat_user_page *page = NULL;
  roomchat_created_user *user = NULL;
  roomchat_client *other;
  roomchat_error *err = NULL;
  roomchat_client_options *options = NULL;
  roomchat_room_list *rooms = NULL;
  char *out = NULL, *journal = NULL;
  uint16_t status = 0;
  char dead_url[64];

  /* missing and invalid auth */
  expect_error(roomchat_client_raw_request(client, "GET", "/consumer/api/v2/users", NULL, NULL,
                                           ROOMCHAT_RAW_AUTH_NONE, &status, &out, &err), &err, ROOMCHAT_RESULT_MISSING_AUTH, 401);
  other = make_client("sk_wrong_key", emu.base_url, 0, 0, 0);
  expect_error(roomchat_client_list_users(other, 0, 0, &page, &err), &err, ROOMCHAT_RESULT_INVALID_AUTH, 401);
  roomchat_client_free(other);

  /* invalid request: the message names the parameter */
  CHECK(roomchat_client_raw_request(client, "GET", "/consumer/api/v2/users", "[[\"limit\", \"abc\"]]", NULL,
                                    ROOMCHAT_RAW_AUTH_PRIVATE_KEY, &status, &out, &err) ==
        ROOMCHAT_RESULT_INVALID_REQUEST);
  CHECK(strstr(roomchat_error_message(err), "limit") != NULL);
  CHECK(strcmp(roomchat_error_path(err), "/consumer/api/v2/users?auth=REDACTED&limit=abc") == 0);
  CHECK(strcmp(roomchat_error_method(err), "GET") == 0);
  CHECK(roomchat_error_service_message(err) != NULL);
  CHECK(roomchat_error_service_error(err) == NULL);
  CHECK(roomchat_error_service_error_message(err) == NULL);
  roomchat_error_free(err);

  /* the service's detail: in the message, and each of its texts through its own accessor */
  add_fault("{\"method\": \"GET\", \"path\": \"/consumer/api/v2/users\", \"action\": {\"kind\": \"respond\", "
            "\"status\": 400, \"body\": \"{\\\"message\\\": \\\"invalid request\\\", \\\"error\\\": "
            "\\\"\\\\\\\"actionButtons[0].type\\\\\\\" must be one of [link, action]\\\", \\\"success\\\": false}\"}}");
  CHECK(roomchat_client_list_users(client, 5, 0, &page, &err) == ROOMCHAT_RESULT_INVALID_REQUEST);
  CHECK(page == NULL);
  CHECK(roomchat_error_status(err) == 400);
  CHECK(strcmp(roomchat_error_message(err),
               "invalid request: \"actionButtons[0].type\" must be one of [link, action]") == 0);
  CHECK(strcmp(roomchat_error_service_message(err), "invalid request") == 0);
  CHECK(strcmp(roomchat_error_service_error(err), "\"actionButtons[0].type\" must be one of [link, action]") == 0);
  CHECK(roomchat_error_service_error_message(err) == NULL);
  CHECK(roomchat_error_service_message(NULL) == NULL);
  roomchat_error_free(err);

  /* plan upgrade */
  CHECK(http_request(&emu, "POST", "/_emulator/gate", "{\"method\": \"GET\", \"path\": \"/consumer/api/v1/chatrooms\"}",
                     NULL) == 200);
  expect_error(roomchat_client_list_chat_rooms_typed(client, &rooms, &err), &err, ROOMCHAT_RESULT_PLAN_UPGRADE_REQUIRED, 400);
  CHECK(rooms == NULL);
  CHECK(http_request(&emu, "DELETE", "/_emulator/gate", NULL, NULL) == 200);

  /* server error with eventId; a POST is sent once */
  CHECK(http_request(&emu, "DELETE", "/_emulator/journal", NULL, NULL) == 200);
  add_fault("{\"method\": \"POST\", \"path\": \"/consumer/api/v1/user\", \"action\": {\"kind\": \"respond\", "
            "\"status\": 500, \"body\": \"{\\\"message\\\": \\\"boom\\\", \\\"eventId\\\": \\\"ev-c-1\\\"}\"}}");
  CHECK(roomchat_client_create_user(client, "twice?", ROOMCHAT_ROLE_REGULAR, NULL, NULL, &user, &err) ==
        ROOMCHAT_RESULT_SERVER_ERROR);
  CHECK(strcmp(roomchat_error_event_id(err), "ev-c-1") == 0);
  CHECK(roomchat_error_status(err) == 500);
  roomchat_error_free(err);
  CHECK(http_request(&emu, "GET", "/_emulator/journal", NULL, &journal) == 200);
  CHECK(count_occurrences(journal, "\"method\":\"POST\",\"path\":\"/consumer/api/v1/user\"") == 1);
  free(journal);

  /* a GET is retried after a 503 and succeeds */
  add_fault("{\"method\": \"GET\", \"path\": \"/consumer/api/v2/users\", \"action\": {\"kind\": \"respond\", "
            "\"status\": 503}}");
  CHECK(roomchat_client_list_users(client, 0, 0, &page, &err) == ROOMCHAT_RESULT_OK);
  roomchat_user_page_free(page);
  page = NULL;

  /* a 404 `{}` (the emulator's unknown path, the service's unknown room): not found */
  expect_error(roomchat_client_raw_request(client, "GET", "/consumer/api/v9/nothing", NULL, NULL,
                                           ROOMCHAT_RAW_AUTH_PRIVATE_KEY, &status, &out, &err), &err, ROOMCHAT_RESULT_NOT_FOUND, 404);

  /* timeout */
  other = make_client(emu.private_key, emu.base_url, 0, 300, 0);
  add_fault("{\"method\": \"GET\", \"path\": \"/consumer/api/v2/users\", \"action\": {\"kind\": \"delay\", \"ms\": 1500}}");
  expect_error(roomchat_client_list_users(other, 0, 0, &page, &err), &err, ROOMCHAT_RESULT_TIMEOUT, 0);
  roomchat_client_free(other);

  /* connection failure: nothing listens on port 1 */
  snprintf(dead_url, sizeof dead_url, "http://127.0.0.1:1");
  other = make_client(emu.private_key, dead_url, 0, 0, 0);
  expect_error(roomchat_client_list_users(other, 0, 0, &page, &err), &err, ROOMCHAT_RESULT_CONNECTION, 0);
  roomchat_client_free(other);

  /* undecodable, too large */
  add_fault("{\"method\": \"GET\", \"path\": \"/consumer/api/v2/users\", \"action\": {\"kind\": \"not_json\"}}");
  expect_error(roomchat_client_list_users(client, 0, 0, &page, &err), &err, ROOMCHAT_RESULT_DECODE, 200);
  other = make_client(emu.private_key, emu.base_url, 0, 0, 1000);
  add_fault("{\"method\": \"GET\", \"path\": \"/consumer/api/v2/users\", \"action\": {\"kind\": \"large_body\", "
            "\"bytes\": 100000}}");
  expect_error(roomchat_client_list_users(other, 0, 0, &page, &err), &err, ROOMCHAT_RESULT_RESPONSE_TOO_LARGE, 200);
  roomchat_client_free(other);

  /* validation: nothing is sent */
  expect_error(roomchat_client_list_users(client, 201, 0, &page, &err), &err, ROOMCHAT_RESULT_VALIDATION, 0);

  /* configuration */
  CHECK(roomchat_client_options_new("", &options, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_client_options_set_base_url(options, emu.base_url);
  other = NULL;
  expect_error(roomchat_client_new(options, &other, &err), &err, ROOMCHAT_RESULT_CONFIGURATION, 0);
  roomchat_client_options_free(options);
  CHECK(roomchat_client_options_new(emu.private_key, &options, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_client_options_set_base_url(options, "http://chat.example.com");
  expect_error(roomchat_client_new(options, &other, &err), &err, ROOMCHAT_RESULT_CONFIGURATION, 0);
  CHECK(other == NULL);
  roomchat_client_options_free(options);
  CHECK(page == NULL && user == NULL && out == NULL);
}

/* Numbers that no enum parameter of the ABI takes: each enum's max + 1 is added per enum. */
static const uint32_t out_of_range[] = {19, 255, 256, 65536, 0x7fffffffu, 0x80000000u, UINT32_MAX};
#define OUT_OF_RANGE_COUNT (sizeof out_of_range / sizeof out_of_range[0])

/* A call given an enum parameter outside its enum: ROOMCHAT_RESULT_INVALID_ARGUMENT,
 * with a message naming the parameter and the value. */
static void expect_enum_refused(roomchat_result got, roomchat_error **errp, const char *param, uint32_t value) {
  char named[96];
  snprintf(named, sizeof named, "%s is %lu,", param, (unsigned long)value);
  CHECK(*errp != NULL && strstr(roomchat_error_message(*errp), named) != NULL);
  if (*errp && !strstr(roomchat_error_message(*errp), named))
    fprintf(stderr, "  wanted \"%s\" in: %s\n", named, roomchat_error_message(*errp));
  expect_error(got, errp, ROOMCHAT_RESULT_INVALID_ARGUMENT, 0);
}

/* Issue 19, defect 3: enum parameters are uint32_t, so C may pass any number; one
 * outside the enum is refused (a documented result), never undefined behaviour
 * (roomchat_result_name(17) died with SIGILL), and nothing is sent. */
static void test_enum_parameters_out_of_range(roomchat_client *client) {
  roomchat_messages *messages = NULL;
  roomchat_created_user *user = NULL;
  roomchat_error *err = NULL;
  const roomchat_message *first;
  char *body = NULL, *out = NULL;
  char conversation[64];
  uint16_t status = 0;
  uint32_t value;
  size_t i;
  int round, named = 0;

  /* Every code has its own name; any other number is "unknown". */
  for (value = 0; value <= 18; value++) named += strcmp(roomchat_result_name(value), "unknown") != 0;
  for (value = 100; value <= 102; value++) named += strcmp(roomchat_result_name(value), "unknown") != 0;
  CHECK(named == 22);
  CHECK(strcmp(roomchat_result_name(ROOMCHAT_RESULT_UNKNOWN), "unknown") == 0);
  CHECK(strcmp(roomchat_result_name(ROOMCHAT_RESULT_TLS), "tls") == 0);
  CHECK(strcmp(roomchat_result_name(ROOMCHAT_RESULT_NOT_FOUND), "not_found") == 0);
  CHECK(strcmp(roomchat_result_name(19), "unknown") == 0);
  for (value = 19; value < 100; value++) CHECK(strcmp(roomchat_result_name(value), "unknown") == 0);
  for (i = 0; i < OUT_OF_RANGE_COUNT; i++) CHECK(strcmp(roomchat_result_name(out_of_range[i]), "unknown") == 0);
  CHECK(strcmp(roomchat_result_name(104), "unknown") == 0);

  CHECK(http_request(&emu, "POST", "/_emulator/rooms", "{\"roomId\": \"r-enum\", \"name\": \"Enums\"}", NULL) == 200);
  CHECK(http_request(&emu, "POST", "/_emulator/conversations",
                     "{\"roomId\": \"r-enum\", \"messages\": [{\"messages\": \"one\", \"user\": {\"username\": \"e\"}}]}",
                     &body) == 200);
  CHECK(json_string_field(body, "conversationId", conversation, sizeof conversation));
  free(body);
  CHECK(roomchat_client_conversation_messages(client, "r-enum", conversation, ROOMCHAT_PATH_FORM_ROOM, &messages,
                                              &err) == ROOMCHAT_RESULT_OK);
  first = roomchat_messages_get(messages, 0);
  CHECK(first != NULL);

  CHECK(http_request(&emu, "DELETE", "/_emulator/journal", NULL, NULL) == 200);
  /* round 0: each enum's max + 1; then the shared out-of-range numbers */
  for (round = 0; round <= (int)OUT_OF_RANGE_COUNT; round++) {
    uint32_t any = round ? out_of_range[round - 1] : 0;
    value = round ? any : ROOMCHAT_USER_IDENTIFIER_UNIQUE_USER_IDENTIFIER + 1;
    expect_enum_refused(roomchat_client_deactivate_user(client, value, "someone", &err), &err, "by", value);
    expect_enum_refused(roomchat_client_reactivate_user(client, value, "someone", &err), &err, "by", value);

    value = round ? any : ROOMCHAT_PATH_FORM_CHAT_ROOM + 1;
    expect_enum_refused(roomchat_client_conversation_messages(client, "r-enum", conversation, value, &messages, &err),
                        &err, "form", value);

    value = round ? any : ROOMCHAT_ROLE_MODERATOR_OF_ROOM + 1;
    expect_enum_refused(roomchat_client_create_user(client, "enum", value, NULL, NULL, &user, &err), &err, "role",
                        value);
    expect_enum_refused(roomchat_client_create_user(client, "enum", value, "r-enum", NULL, &user, &err), &err, "role",
                        value);

    value = round ? any : ROOMCHAT_RAW_AUTH_NONE + 1;
    expect_enum_refused(roomchat_client_raw_request(client, "POST", "/consumer/api/v1/user", NULL,
                                                    "{\"username\": \"enum\"}", value, &status, &out, &err),
                        &err, "auth", value);

    value = round ? any : ROOMCHAT_MESSAGE_FIELD_AUTHOR_UNIQUE_USER_IDENTIFIER + 1;
    CHECK(roomchat_message_get_field(first, value) == NULL); /* documented: no such field */
  }
  CHECK(user == NULL && out == NULL && status == 0);
  /* the messages from before are untouched (outputs are written only on success) */
  CHECK(strcmp(roomchat_message_get_field(first, ROOMCHAT_MESSAGE_FIELD_TEXT), "one") == 0);
  roomchat_messages_free(messages);
  /* nothing was sent for any of them */
  CHECK(http_request(&emu, "GET", "/_emulator/journal", NULL, &body) == 200);
  CHECK(count_occurrences(body, "\"path\":") == 0);
  free(body);
}

/* Builds a client from `options` (then freed); returns the result, checking that
 * a failure's message contains `wanted` when it is not NULL. Frees the client. */
static roomchat_result build_from(roomchat_client_options *options, const char *wanted) {
  roomchat_client *client = NULL;
  roomchat_error *err = NULL;
  roomchat_result r = roomchat_client_new(options, &client, &err);
  if (r != ROOMCHAT_RESULT_OK) {
    CHECK(client == NULL);
    CHECK(err != NULL && roomchat_error_code(err) == r);
    if (wanted) {
      CHECK(err != NULL && strstr(roomchat_error_message(err), wanted) != NULL);
      if (err && !strstr(roomchat_error_message(err), wanted))
        fprintf(stderr, "  wanted \"%s\" in: %s\n", wanted, roomchat_error_message(err));
    }
  } else if (wanted) {
    fprintf(stderr, "  built, but wanted an error with \"%s\"\n", wanted);
  }
  roomchat_error_free(err);
  roomchat_client_free(client);
  roomchat_client_options_free(options);
  return r;
}

static roomchat_client_options *options_for_emulator(void) {
  roomchat_client_options *options = NULL;
  CHECK(roomchat_client_options_new(emu.private_key, &options, NULL) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_client_options_set_base_url(options, emu.base_url) == ROOMCHAT_RESULT_OK);
  if (emu.ca_pem) CHECK(roomchat_client_options_set_ca_pem(options, emu.ca_pem) == ROOMCHAT_RESULT_OK);
  return options;
}

/* How many requests with `method` to `path` the emulator's journal holds. */
static int journal_count(const char *method, const char *path) {
  char *journal = NULL;
  char needle[256];
  int count;
  CHECK(http_request(&emu, "GET", "/_emulator/journal", NULL, &journal) == 200);
  snprintf(needle, sizeof needle, "\"method\":\"%s\",\"path\":\"%s\"", method, path);
  count = journal ? count_occurrences(journal, needle) : -1;
  free(journal);
  return count;
}

#define REACTIVATE_PATH "/consumer/api/v2/user/reactivate"
#define VALIDATE_PATH "/consumer/api/v1/user/accessToken/validate"
#define INVALIDATE_PATH "/consumer/api/v1/user/accesstoken/invalidate"

/* Reactivate user, validate and invalidate access token: the lifecycle, the
 * typed record, no second POST after a 5xx, the public key, bad arguments. */
static void test_tokens(roomchat_client *client) {
  roomchat_created_user *eve = NULL;
  roomchat_token_user *record = NULL;
  roomchat_error *err = NULL;
  char eve_id[64], token[1024];
  const time_t now = time(NULL);

  CHECK(http_request(&emu, "POST", "/_emulator/rooms", "{\"roomId\": \"r-tokens\", \"name\": \"Tokens\"}", NULL) ==
        200);
  CHECK(roomchat_client_create_user(client, "eve", ROOMCHAT_ROLE_MODERATOR_OF_ROOM, "r-tokens",
                                    "{\"uniqueUserIdentifier\": \"crm-eve\", \"externalUserId\": \"ext-eve\"}", &eve,
                                    &err) == ROOMCHAT_RESULT_OK);
  snprintf(eve_id, sizeof eve_id, "%s", roomchat_created_user_user_id(eve));
  snprintf(token, sizeof token, "%s", roomchat_created_user_access_token(eve));
  roomchat_created_user_free(eve);

  /* validate: the record, typed */
  CHECK(roomchat_client_validate_access_token(client, token, &record, &err) == ROOMCHAT_RESULT_OK);
  CHECK(strcmp(roomchat_token_user_id(record), eve_id) == 0);
  CHECK(strcmp(roomchat_token_user_username(record), "eve") == 0);
  CHECK(strcmp(roomchat_token_user_chat_room(record), "r-tokens") == 0);
  CHECK(strcmp(roomchat_token_user_external_user_id(record), "ext-eve") == 0);
  CHECK(roomchat_token_user_is_moderator(record) == 1);
  CHECK(roomchat_token_user_iat(record) >= (int64_t)now - 5 && roomchat_token_user_iat(record) <= (int64_t)now + 5);
  CHECK(roomchat_token_user_created(record) != NULL && roomchat_token_user_updated(record) != NULL);
  CHECK(strstr(roomchat_token_user_json(record), "\"createdUsingApi\":true") != NULL); /* unknown fields kept */
  CHECK(strstr(roomchat_token_user_json(record), "\"iat\":") != NULL);
  roomchat_token_user_free(record);
  record = NULL;

  /* deactivated: refused; reactivated (either id): valid again */
  CHECK(roomchat_client_deactivate_user(client, ROOMCHAT_USER_IDENTIFIER_USER_ID, eve_id, &err) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_client_validate_access_token(client, token, &record, &err) == ROOMCHAT_RESULT_INVALID_REQUEST);
  CHECK(err != NULL && strcmp(roomchat_error_message(err), "invalid accessToken") == 0);
  CHECK(err != NULL && strcmp(roomchat_error_path(err), VALIDATE_PATH "?publicKey=REDACTED") == 0);
  roomchat_error_free(err);
  err = NULL;
  CHECK(record == NULL); /* outputs are written only on success */
  CHECK(roomchat_client_reactivate_user(client, ROOMCHAT_USER_IDENTIFIER_UNIQUE_USER_IDENTIFIER, "crm-eve", &err) ==
        ROOMCHAT_RESULT_OK);
  CHECK(roomchat_client_validate_access_token(client, token, &record, &err) == ROOMCHAT_RESULT_OK);
  roomchat_token_user_free(record);
  record = NULL;
  CHECK(roomchat_client_deactivate_user(client, ROOMCHAT_USER_IDENTIFIER_USER_ID, eve_id, &err) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_client_reactivate_user(client, ROOMCHAT_USER_IDENTIFIER_USER_ID, eve_id, &err) == ROOMCHAT_RESULT_OK);

  /* reactivating an active or unknown user: user not found */
  expect_error(roomchat_client_reactivate_user(client, ROOMCHAT_USER_IDENTIFIER_USER_ID, eve_id, &err), &err,
               ROOMCHAT_RESULT_USER_NOT_FOUND, 400);
  expect_error(roomchat_client_reactivate_user(client, ROOMCHAT_USER_IDENTIFIER_UNIQUE_USER_IDENTIFIER, "crm-nobody",
                                               &err),
               &err, ROOMCHAT_RESULT_USER_NOT_FOUND, 400);

  /* never sent twice after a 5xx: reactivate and invalidate (POSTs); validate (a read) is retried */
  CHECK(roomchat_client_deactivate_user(client, ROOMCHAT_USER_IDENTIFIER_USER_ID, eve_id, &err) == ROOMCHAT_RESULT_OK);
  CHECK(http_request(&emu, "DELETE", "/_emulator/journal", NULL, NULL) == 200);
  add_fault("{\"method\": \"POST\", \"path\": \"" REACTIVATE_PATH "\", \"action\": {\"kind\": \"respond\", "
            "\"status\": 503, \"body\": \"{\\\"message\\\": \\\"busy\\\", \\\"eventId\\\": \\\"ev-c-r\\\"}\"}}");
  CHECK(roomchat_client_reactivate_user(client, ROOMCHAT_USER_IDENTIFIER_USER_ID, eve_id, &err) ==
        ROOMCHAT_RESULT_SERVER_ERROR);
  CHECK(err != NULL && strcmp(roomchat_error_event_id(err), "ev-c-r") == 0);
  roomchat_error_free(err);
  err = NULL;
  CHECK(journal_count("POST", REACTIVATE_PATH) == 1);
  CHECK(roomchat_client_reactivate_user(client, ROOMCHAT_USER_IDENTIFIER_USER_ID, eve_id, &err) == ROOMCHAT_RESULT_OK);
  add_fault("{\"method\": \"POST\", \"path\": \"" INVALIDATE_PATH "\", \"action\": {\"kind\": \"close\"}}");
  expect_error(roomchat_client_invalidate_access_token(client, token, &err), &err, ROOMCHAT_RESULT_CONNECTION, 0);
  CHECK(journal_count("POST", INVALIDATE_PATH) == 1);
  add_fault("{\"method\": \"POST\", \"path\": \"" VALIDATE_PATH "\", \"action\": {\"kind\": \"respond\", "
            "\"status\": 503}}");
  CHECK(roomchat_client_validate_access_token(client, token, &record, &err) == ROOMCHAT_RESULT_OK);
  roomchat_token_user_free(record);
  record = NULL;
  CHECK(journal_count("POST", VALIDATE_PATH) == 2);

  /* invalidated: refused for good, signs nobody in */
  CHECK(roomchat_client_invalidate_access_token(client, token, &err) == ROOMCHAT_RESULT_OK);
  expect_error(roomchat_client_validate_access_token(client, token, &record, &err), &err,
               ROOMCHAT_RESULT_INVALID_REQUEST, 400);
  expect_error(roomchat_client_invalidate_access_token(client, token, &err), &err, ROOMCHAT_RESULT_INVALID_REQUEST,
               400);
  {
    char page_path[1200];
    snprintf(page_path, sizeof page_path, "/chat/r-tokens?accessToken=%s", token);
    CHECK(http_request(&emu, "GET", page_path, NULL, NULL) == 401);
  }

  /* the public key: without one, a configuration error and nothing sent */
  CHECK(http_request(&emu, "DELETE", "/_emulator/journal", NULL, NULL) == 200);
  {
    roomchat_client_options *options = options_for_emulator();
    roomchat_client *no_public = NULL;
    CHECK(roomchat_client_new(options, &no_public, NULL) == ROOMCHAT_RESULT_OK);
    roomchat_client_options_free(options);
    CHECK(roomchat_client_validate_access_token(no_public, token, &record, &err) == ROOMCHAT_RESULT_CONFIGURATION);
    CHECK(err != NULL && strstr(roomchat_error_message(err), "public key") != NULL);
    CHECK(err != NULL && strstr(roomchat_error_message(err), emu.private_key) == NULL);
    roomchat_error_free(err);
    err = NULL;
    roomchat_client_free(no_public);
  }
  CHECK(journal_count("POST", VALIDATE_PATH) == 0);

  /* bad arguments: nothing sent, outputs untouched */
  expect_error(roomchat_client_validate_access_token(client, NULL, &record, &err), &err,
               ROOMCHAT_RESULT_INVALID_ARGUMENT, 0);
  expect_error(roomchat_client_validate_access_token(client, token, NULL, &err), &err,
               ROOMCHAT_RESULT_INVALID_ARGUMENT, 0);
  expect_error(roomchat_client_validate_access_token(NULL, token, &record, &err), &err,
               ROOMCHAT_RESULT_INVALID_ARGUMENT, 0);
  expect_error(roomchat_client_validate_access_token(client, "", &record, &err), &err, ROOMCHAT_RESULT_VALIDATION, 0);
  expect_error(roomchat_client_invalidate_access_token(client, NULL, &err), &err, ROOMCHAT_RESULT_INVALID_ARGUMENT,
               0);
  expect_error(roomchat_client_invalidate_access_token(client, "", &err), &err, ROOMCHAT_RESULT_VALIDATION, 0);
  expect_error(roomchat_client_reactivate_user(client, ROOMCHAT_USER_IDENTIFIER_USER_ID, NULL, &err), &err,
               ROOMCHAT_RESULT_INVALID_ARGUMENT, 0);
  expect_error(roomchat_client_reactivate_user(client, ROOMCHAT_USER_IDENTIFIER_USER_ID, "", &err), &err,
               ROOMCHAT_RESULT_VALIDATION, 0);
  CHECK(record == NULL);
  CHECK(journal_count("POST", VALIDATE_PATH) == 0 && journal_count("POST", REACTIVATE_PATH) == 0 &&
        journal_count("POST", INVALIDATE_PATH) == 0);
  /* NULL objects: the accessors' documented answers */
  CHECK(roomchat_token_user_id(NULL) == NULL && roomchat_token_user_username(NULL) == NULL);
  CHECK(roomchat_token_user_json(NULL) == NULL && roomchat_token_user_updated(NULL) == NULL);
  CHECK(roomchat_token_user_is_moderator(NULL) == -1 && roomchat_token_user_iat(NULL) == -1);
  roomchat_token_user_free(NULL);
}

/* Issue 19 ("the C options object keeps an error after a later valid set"):
 * only each setter's last call counts. */
/* Issue 20: trust and proxy options. Bad values are refused when the client is
 * made, with the right code; a proxy password shows in no message; NULL turns
 * proxies off even when the environment names an unusable one. */
static void test_trust_and_proxy_options(void) {
  roomchat_client_options *options;
  roomchat_client *client = NULL;
  roomchat_error *err = NULL;
  roomchat_result r;

  options = options_for_emulator();
  CHECK(roomchat_client_options_set_ca_pem(options, "not a certificate") == ROOMCHAT_RESULT_OK);
  CHECK(build_from(options, "holds no certificate") == ROOMCHAT_RESULT_CONFIGURATION);
  options = options_for_emulator();
  CHECK(roomchat_client_options_set_ca_pem(options, NULL) == ROOMCHAT_RESULT_OK);
  CHECK(build_from(options, "pem is NULL") == ROOMCHAT_RESULT_INVALID_ARGUMENT);

  /* gzip off and on: both build and call. */
  {
    int gzip;
    for (gzip = 0; gzip <= 1; gzip++) {
      roomchat_user_page *page = NULL;
      options = options_for_emulator();
      CHECK(roomchat_client_options_set_gzip(options, gzip != 0) == ROOMCHAT_RESULT_OK);
      CHECK(roomchat_client_new(options, &client, NULL) == ROOMCHAT_RESULT_OK);
      CHECK(roomchat_client_list_users(client, 1, 0, &page, NULL) == ROOMCHAT_RESULT_OK);
      roomchat_user_page_free(page);
      roomchat_client_free(client);
      client = NULL;
      roomchat_client_options_free(options);
    }
  }

  options = options_for_emulator();
  CHECK(roomchat_client_options_set_tls_roots(options, 7) == ROOMCHAT_RESULT_OK);
  CHECK(build_from(options, "roomchat_tls_roots") == ROOMCHAT_RESULT_INVALID_ARGUMENT);
  options = options_for_emulator();
  roomchat_client_options_set_tls_roots(options, UINT32_MAX);
  roomchat_client_options_set_tls_roots(options, ROOMCHAT_TLS_ROOTS_SYSTEM);
  CHECK(build_from(options, NULL) == ROOMCHAT_RESULT_OK);

  /* A remote https base URL through a SOCKS proxy: refused, password hidden. */
  CHECK(roomchat_client_options_new(emu.private_key, &options, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_client_options_set_base_url(options, "https://api.example.com");
  roomchat_client_options_set_proxy(options, "socks5://me:c-proxy-pw-9@127.0.0.1:1080");
  r = roomchat_client_new(options, &client, &err);
  CHECK(r == ROOMCHAT_RESULT_CONFIGURATION);
  CHECK(err != NULL && strstr(roomchat_error_message(err), "SOCKS") != NULL);
  CHECK(err != NULL && strstr(roomchat_error_message(err), "c-proxy-pw-9") == NULL);
  roomchat_error_free(err);
  err = NULL;
  /* The last call counts: NULL is no proxy, even with a SOCKS ALL_PROXY around. */
  setenv("ALL_PROXY", "socks5://127.0.0.1:1080", 1);
  roomchat_client_options_set_proxy(options, NULL);
  CHECK(roomchat_client_new(options, &client, &err) == ROOMCHAT_RESULT_OK);
  roomchat_client_free(client);
  client = NULL;
  roomchat_client_options_free(options);
  CHECK(roomchat_client_options_new(emu.private_key, &options, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_client_options_set_base_url(options, "https://api.example.com");
  CHECK(build_from(options, "ALL_PROXY") == ROOMCHAT_RESULT_CONFIGURATION);
  unsetenv("ALL_PROXY");
}

static void test_options_last_call_counts(void) {
  const char bad_utf8[] = {(char)0xff, (char)0xfe, 0};
  roomchat_client_options *options;
  roomchat_client *client = NULL;
  roomchat_rate_limit_state state;

  /* a bad value, then a valid one: the client builds */
  options = options_for_emulator();
  roomchat_client_options_set_base_url(options, bad_utf8);
  roomchat_client_options_set_base_url(options, emu.base_url);
  CHECK(build_from(options, NULL) == ROOMCHAT_RESULT_OK);
  options = options_for_emulator();
  roomchat_client_options_set_app_name(options, NULL);
  roomchat_client_options_set_app_name(options, "c-tests/2.0");
  roomchat_client_options_set_chat_url(options, bad_utf8);
  roomchat_client_options_set_chat_url(options, emu.chat_url);
  roomchat_client_options_set_public_key(options, NULL);
  roomchat_client_options_set_public_key(options, emu.public_key);
  CHECK(build_from(options, NULL) == ROOMCHAT_RESULT_OK);

  /* a valid value, then a bad one: refused; another setter's valid call clears nothing */
  options = options_for_emulator();
  roomchat_client_options_set_app_name(options, NULL);
  CHECK(build_from(options, "app_name is NULL") == ROOMCHAT_RESULT_INVALID_ARGUMENT);
  options = options_for_emulator();
  roomchat_client_options_set_base_url(options, bad_utf8);
  roomchat_client_options_set_app_name(options, "c-tests/2.0");
  CHECK(build_from(options, "base_url is not UTF-8") == ROOMCHAT_RESULT_INVALID_ARGUMENT);

  /* the Redis settings: a bad policy, then a valid one; the URL set before survives it */
  options = options_for_emulator();
  roomchat_client_options_set_rate_limit_redis(options, NULL);
  roomchat_client_options_set_rate_limit_redis(options, "redis://127.0.0.1:1/0");
  roomchat_client_options_set_redis_policy(options, 7, 0);
  roomchat_client_options_set_redis_key_prefix(options, NULL);
  roomchat_client_options_set_redis_policy(options, ROOMCHAT_REDIS_POLICY_FAIL_OPEN, 0);
  roomchat_client_options_set_redis_key_prefix(options, "c-tests");
  CHECK(roomchat_client_new(options, &client, NULL) == ROOMCHAT_RESULT_OK);
  CHECK(client != NULL && roomchat_client_rate_limit_state(client, &state) == ROOMCHAT_RESULT_OK);
  CHECK(client != NULL && state.backend == ROOMCHAT_BUDGET_BACKEND_REDIS);
  roomchat_client_free(client);
  roomchat_client_options_free(options);
  options = options_for_emulator();
  roomchat_client_options_set_rate_limit_redis(options, "redis://127.0.0.1:1/0");
  roomchat_client_options_set_redis_policy(options, ROOMCHAT_REDIS_POLICY_FAIL_OPEN, 0);
  roomchat_client_options_set_redis_policy(options, UINT32_MAX, 0);
  CHECK(build_from(options, "policy is 4294967295,") == ROOMCHAT_RESULT_INVALID_ARGUMENT);
}

/* A one-shot HTTP server on loopback that answers one request with a users page
 * sent chunked (no Content-Length: the emulator always sends one), then closes. */
typedef struct chunked_server {
  int listen_fd;
  int port;
  pthread_t thread;
} chunked_server;

static void *chunked_serve(void *arg) {
  chunked_server *server = (chunked_server *)arg;
  static const char *chunks[] = {"{\"data\": [{\"_id\": \"u1\", \"username\": \"chunked\"}], ",
                                 "\"total\": 1, \"limit\": 50, ", "\"skip\": 0}"};
  const char *head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
                     "Connection: close\r\n\r\n";
  char request[4096], line[64];
  size_t used = 0, i;
  int fd = accept(server->listen_fd, NULL, NULL);
  if (fd < 0) return NULL;
  while (used < sizeof request - 1) {
    ssize_t n = read(fd, request + used, sizeof request - 1 - used);
    if (n <= 0) break;
    used += (size_t)n;
    request[used] = '\0';
    if (strstr(request, "\r\n\r\n")) break;
  }
  if (write(fd, head, strlen(head)) < 0) goto done;
  for (i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
    snprintf(line, sizeof line, "%zx\r\n", strlen(chunks[i]));
    if (write(fd, line, strlen(line)) < 0 || write(fd, chunks[i], strlen(chunks[i])) < 0 || write(fd, "\r\n", 2) < 0)
      goto done;
  }
  if (write(fd, "0\r\n\r\n", 5) < 0) goto done;
done:
  close(fd);
  return NULL;
}

static int chunked_server_start(chunked_server *server) {
  struct sockaddr_in addr;
  socklen_t len = sizeof addr;
  server->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (server->listen_fd < 0 || bind(server->listen_fd, (struct sockaddr *)&addr, sizeof addr) != 0 ||
      listen(server->listen_fd, 1) != 0 || getsockname(server->listen_fd, (struct sockaddr *)&addr, &len) != 0)
    return 0;
  server->port = ntohs(addr.sin_port);
  return pthread_create(&server->thread, NULL, chunked_serve, server) == 0;
}

static void chunked_server_stop(chunked_server *server) {
  shutdown(server->listen_fd, SHUT_RDWR); /* wakes an accept that got no connection */
  pthread_join(server->thread, NULL);
  close(server->listen_fd);
}

/* Issue 19, defect 4 at the C boundary: any duration in milliseconds is safe to
 * pass (one above roomchat::MAX_DURATION, 10^12 ms, is a configuration error at
 * build, never a panic), and max_response_bytes = UINT64_MAX means no cap. */
static void test_huge_durations_and_sizes(void) {
  const uint64_t max_ms = UINT64_C(1000000000000); /* 10^9 s */
  roomchat_client_options *options;
  roomchat_client *client;
  roomchat_user_page *page = NULL;
  roomchat_error *err = NULL;
  char *body = NULL;
  uint16_t status = 0;

  options = options_for_emulator();
  roomchat_client_options_set_timeouts(options, UINT64_MAX, 0);
  CHECK(build_from(options, "connect timeout must be at most 1000000000 s") == ROOMCHAT_RESULT_CONFIGURATION);
  options = options_for_emulator();
  roomchat_client_options_set_timeouts(options, 0, UINT64_MAX);
  CHECK(build_from(options, "timeout must be at most") == ROOMCHAT_RESULT_CONFIGURATION);
  options = options_for_emulator();
  roomchat_client_options_set_timeouts(options, max_ms + 1, max_ms + 1);
  CHECK(build_from(options, "must be at most") == ROOMCHAT_RESULT_CONFIGURATION);
  options = options_for_emulator();
  roomchat_client_options_set_rate_limit(options, 100, UINT64_MAX, false, 1000);
  CHECK(build_from(options, "rate-limit window must be at most") == ROOMCHAT_RESULT_CONFIGURATION);
  options = options_for_emulator();
  roomchat_client_options_set_rate_limit(options, 100, 60000, false, UINT64_MAX);
  CHECK(build_from(options, "longest rate-limit wait must be at most") == ROOMCHAT_RESULT_CONFIGURATION);
  options = options_for_emulator();
  roomchat_client_options_set_rate_limit(options, UINT32_MAX, UINT64_MAX, true, UINT64_MAX);
  CHECK(build_from(options, "must be at most") == ROOMCHAT_RESULT_CONFIGURATION);
  options = options_for_emulator();
  roomchat_client_options_set_rate_limit_redis(options, "redis://127.0.0.1:1/0");
  roomchat_client_options_set_redis_timeouts(options, UINT64_MAX, 0, 0);
  CHECK(build_from(options, "Redis connect timeout must be at most") == ROOMCHAT_RESULT_CONFIGURATION);
  options = options_for_emulator();
  roomchat_client_options_set_rate_limit_redis(options, "redis://127.0.0.1:1/0");
  roomchat_client_options_set_redis_timeouts(options, 0, UINT64_MAX, 0);
  CHECK(build_from(options, "Redis I/O timeout must be at most") == ROOMCHAT_RESULT_CONFIGURATION);
  options = options_for_emulator();
  roomchat_client_options_set_rate_limit_redis(options, "redis://127.0.0.1:1/0");
  roomchat_client_options_set_redis_timeouts(options, 0, 0, UINT64_MAX);
  CHECK(build_from(options, "Redis breaker cooldown must be at most") == ROOMCHAT_RESULT_CONFIGURATION);

  /* the longest accepted durations build, and a call under them works */
  options = options_for_emulator();
  roomchat_client_options_set_timeouts(options, max_ms, max_ms);
  roomchat_client_options_set_rate_limit(options, 100000, max_ms, false, max_ms);
  client = NULL;
  CHECK(roomchat_client_new(options, &client, &err) == ROOMCHAT_RESULT_OK);
  roomchat_client_options_free(options);
  if (err) fprintf(stderr, "  longest durations: %s\n", roomchat_error_message(err));
  roomchat_error_free(err);
  err = NULL;
  CHECK(client != NULL && roomchat_client_list_users(client, 0, 0, &page, &err) == ROOMCHAT_RESULT_OK);
  roomchat_user_page_free(page);
  page = NULL;
  roomchat_client_free(client);

  /* no cap on the body: a 100 000-byte answer is read whole */
  client = make_client(emu.private_key, emu.base_url, 0, 0, UINT64_MAX);
  CHECK(client != NULL);
  CHECK(roomchat_client_list_users(client, 0, 0, &page, &err) == ROOMCHAT_RESULT_OK);
  roomchat_user_page_free(page);
  add_fault("{\"method\": \"GET\", \"path\": \"/consumer/api/v2/users\", \"action\": {\"kind\": \"large_body\", "
            "\"bytes\": 100000}}");
  CHECK(roomchat_client_raw_request(client, "GET", "/consumer/api/v2/users", NULL, NULL,
                                    ROOMCHAT_RAW_AUTH_PRIVATE_KEY, &status, &body, &err) == ROOMCHAT_RESULT_OK);
  if (err) fprintf(stderr, "  max_response_bytes UINT64_MAX: %s\n", roomchat_error_message(err));
  CHECK(status == 200 && body != NULL && strlen(body) >= 99990);
  roomchat_string_free(body);
  roomchat_error_free(err);
  err = NULL;
  roomchat_client_free(client);

  /* ... and a chunked answer (no length given, read up to the cap + 1: which wrapped) */
  {
    chunked_server server;
    char url[64];
    page = NULL;
    CHECK(chunked_server_start(&server));
    snprintf(url, sizeof url, "http://127.0.0.1:%d", server.port);
    client = make_client(emu.private_key, url, 0, 0, UINT64_MAX);
    CHECK(client != NULL && roomchat_client_list_users(client, 0, 0, &page, &err) == ROOMCHAT_RESULT_OK);
    if (err) fprintf(stderr, "  chunked, max_response_bytes UINT64_MAX: %s\n", roomchat_error_message(err));
    CHECK(roomchat_user_page_len(page) == 1 && roomchat_user_page_total(page) == 1);
    CHECK(page != NULL && strcmp(roomchat_user_username(roomchat_user_page_get(page, 0)), "chunked") == 0);
    roomchat_user_page_free(page);
    roomchat_error_free(err);
    roomchat_client_free(client);
    chunked_server_stop(&server);
  }
}

static void *list_many(void *arg) {
  roomchat_client *client = (roomchat_client *)arg;
  int i, ok = 0;
  for (i = 0; i < 10; i++) {
    roomchat_user_page *page = NULL;
    if (roomchat_client_list_users(client, 5, 0, &page, NULL) == ROOMCHAT_RESULT_OK) ok++;
    roomchat_user_page_free(page);
  }
  return (void *)(intptr_t)ok;
}

/* A fault answering the next `method` `path` with 200 and `body` (JSON-escaped here). */
static void respond_once(const char *method, const char *path, const char *body) {
  char spec[2048];
  size_t n = (size_t)snprintf(spec, sizeof spec,
                              "{\"method\": \"%s\", \"path\": \"%s\", \"action\": {\"kind\": \"respond\", \"status\": 200, "
                              "\"body\": \"", method, path);
  for (; *body && n + 8 < sizeof spec; body++) {
    if (*body == '"' || *body == '\\') spec[n++] = '\\';
    spec[n++] = *body;
  }
  snprintf(spec + n, sizeof spec - n, "\"}}");
  add_fault(spec);
}

/* `got` is the text `want` (false for NULL). */
static int is_text(const char *got, const char *want) { return got != NULL && strcmp(got, want) == 0; }

/* Reads every text of a created user: run by two threads at once on one handle. */
static void *read_created_user(void *user) {
  static const char *(*const texts[])(const roomchat_created_user *) = {
      roomchat_created_user_access_token, roomchat_created_user_username, roomchat_created_user_user_id,
      roomchat_created_user_chat_room};
  const char **got = malloc(4 * sizeof *got);
  size_t i;
  for (i = 0; got && i < 4; i++) got[i] = texts[i](user);
  return (void *)got;
}

/* A text the service sent with a NUL inside (JSON `\u0000`) comes out of every record's
 * accessor with U+FFFD in its place (a C string would end at the NUL); `_json` keeps
 * `\u0000`. Each accessor's string is made on its first read (issue 46): a second read,
 * interleaved reads and two threads' first reads at once all give one pointer. */
static void test_texts_with_nul(roomchat_client *client) {
  static const char *const fffd = "a\xef\xbf\xbd" "b";
  roomchat_user_page *page = NULL;
  roomchat_created_user *created = NULL;
  roomchat_token_user *record = NULL;
  roomchat_error *err = NULL;
  const roomchat_user *user;
  const char *name;
  pthread_t threads[2];
  void *got[2];
  int i;

  respond_once("GET", "/consumer/api/v2/users",
               "{\"total\": 1, \"limit\": 1, \"skip\": 0, \"data\": [{\"_id\": \"a\\u0000b\", \"username\": "
               "\"a\\u0000b\", \"email\": \"\", \"k\\u0000\": 1}]}");
  CHECK(roomchat_client_list_users(client, 1, 0, &page, &err) == ROOMCHAT_RESULT_OK);
  user = roomchat_user_page_get(page, 0);
  CHECK(user != NULL && roomchat_user_page_get(page, 1) == NULL);
  name = roomchat_user_username(user);
  CHECK(is_text(name, fffd));
  CHECK(is_text(roomchat_user_id(user), fffd));
  CHECK(is_text(roomchat_user_email(user), "") && roomchat_user_profile_pic(user) == NULL);
  CHECK(roomchat_user_username(user) == name);
  CHECK(roomchat_user_username(roomchat_user_page_get(page, 0)) == name);
  CHECK(is_text(roomchat_user_json(user),
                "{\"_id\":\"a\\u0000b\",\"username\":\"a\\u0000b\",\"email\":\"\",\"k\\u0000\":1}"));
  roomchat_user_page_free(page);

  respond_once("POST", "/consumer/api/v1/user",
               "{\"accessToken\": \"a\\u0000b\", \"username\": \"a\\u0000b\", \"userId\": \"u\\u0000\", "
               "\"isModerator\": true, \"chatRoom\": \"\\u0000\"}");
  CHECK(roomchat_client_create_user(client, "nul", ROOMCHAT_ROLE_REGULAR, NULL, NULL, &created, &err) ==
        ROOMCHAT_RESULT_OK);
  for (i = 0; i < 2; i++) CHECK(pthread_create(&threads[i], NULL, read_created_user, created) == 0);
  for (i = 0; i < 2; i++) pthread_join(threads[i], &got[i]);
  CHECK(got[0] != NULL && got[1] != NULL);
  if (got[0] && got[1]) {
    const char **one = got[0], **two = got[1];
    for (i = 0; i < 4; i++) CHECK(one[i] == two[i]);
    CHECK(one[0] == roomchat_created_user_access_token(created) && is_text(one[0], fffd));
    CHECK(one[1] == roomchat_created_user_username(created) && is_text(one[1], fffd));
    CHECK(is_text(one[2], "u\xef\xbf\xbd") && is_text(one[3], "\xef\xbf\xbd"));
  }
  free(got[0]);
  free(got[1]);
  CHECK(roomchat_created_user_is_moderator(created));
  roomchat_created_user_free(created);

  respond_once("POST", "/consumer/api/v1/user/accessToken/validate",
               "{\"_id\": \"a\\u0000b\", \"externalUserId\": \"a\\u0000b\", \"iat\": 1}");
  CHECK(roomchat_client_validate_access_token(client, "t.t.t", &record, &err) == ROOMCHAT_RESULT_OK);
  name = roomchat_token_user_external_user_id(record);
  CHECK(is_text(roomchat_token_user_id(record), fffd) && is_text(name, fffd));
  CHECK(roomchat_token_user_username(record) == NULL && roomchat_token_user_external_user_id(record) == name);
  CHECK(roomchat_token_user_iat(record) == 1 && roomchat_token_user_is_moderator(record) == -1);
  CHECK(is_text(roomchat_token_user_json(record),
                "{\"_id\":\"a\\u0000b\",\"externalUserId\":\"a\\u0000b\",\"iat\":1}"));
  roomchat_token_user_free(record);
}

static void test_threads(roomchat_client *client) {
  pthread_t threads[4];
  int i, total = 0;
  for (i = 0; i < 4; i++) pthread_create(&threads[i], NULL, list_many, client);
  for (i = 0; i < 4; i++) {
    void *ok;
    pthread_join(threads[i], &ok);
    total += (int)(intptr_t)ok;
  }
  CHECK(total == 40);
}

/* Last: a 429 holds every client of the key off. */
static void test_rate_limited(roomchat_client *client) {
  roomchat_user_page *page = NULL;
  roomchat_error *err = NULL;
  roomchat_rate_limit_state state;
  add_fault("{\"method\": \"GET\", \"path\": \"/consumer/api/v2/users\", \"action\": {\"kind\": \"respond\", "
            "\"status\": 429, \"headers\": {\"Retry-After\": \"120\"}}}");
  CHECK(roomchat_client_list_users(client, 0, 0, &page, &err) == ROOMCHAT_RESULT_RATE_LIMITED);
  CHECK(roomchat_error_retry_after_ms(err) == 120000);
  CHECK(roomchat_error_status(err) == 429);
  roomchat_error_free(err);
  CHECK(roomchat_client_rate_limit_state(client, &state) == ROOMCHAT_RESULT_OK);
  CHECK(state.blocked_for_ms > 100000);
  CHECK(page == NULL);
}

int main(int argc, char **argv) {
  const int over_tls = harness_test_tls();
  const char *args[] = {"--rate-limit", "100000/60s", over_tls ? "--tls" : NULL, NULL};
  const char *label = over_tls ? "C over TLS" : "C";
  roomchat_client *client;
  if (argc < 2 || !emulator_start(&emu, argv[1], args)) {
    fprintf(stderr, "usage: %s <roomchat-emulator>\n", argv[0]);
    return 2;
  }
  if (over_tls) {
    /* The TLS pass never quietly falls back to plain HTTP. */
    CHECK(emu.tls && emu.ca_pem != NULL && strncmp(emu.base_url, "https://", 8) == 0);
    CHECK(strncmp(emu.chat_url, "https://", 8) == 0);
    printf("C: this pass runs over TLS: the emulator at %s, every client trusting its CA (%s)\n", emu.base_url,
           emu.ca_file);
    fflush(stdout);
  }
  client = make_client(emu.private_key, emu.base_url, 2, 0, 0);
  CHECK(client != NULL);
  test_version_and_names();
  test_users(client);
  test_rooms_messages_sign_in(client);
  test_invalid_arguments(client);
  test_error_codes(client);
  test_enum_parameters_out_of_range(client);
  test_tokens(client);
  test_options_last_call_counts();
  test_trust_and_proxy_options();
  test_huge_durations_and_sizes();
  test_texts_with_nul(client);
  test_threads(client);
  test_rate_limited(client);
  roomchat_client_free(client);
  if (over_tls) {
    /* Every call above went over TLS: handshakes completed, none failed (the
     * suite's deliberate failures are all above the TLS layer). */
    char *stats = NULL;
    CHECK(http_request(&emu, "GET", "/_emulator/connections", NULL, &stats) == 200);
    CHECK(stats != NULL && json_number_field(stats, "tls_handshakes") > 0);
    CHECK(stats != NULL && json_number_field(stats, "tls_failed") == 0);
    if (stats && json_number_field(stats, "tls_failed") != 0) fprintf(stderr, "  connections: %s\n", stats);
    free(stats);
  }
  CHECK(emulator_stop(&emu));
  printf("%s: %d passed, %d failed\n", label, harness_passed, harness_failed);
  return harness_failed == 0 ? 0 : 1;
}
