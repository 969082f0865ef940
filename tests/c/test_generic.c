/*
 * Calls by an operation's name (roomchat_client_call_operation), the pages of
 * a declared listing (roomchat_client_operation_pages), the pure layer
 * (roomchat_wire_build_request, roomchat_wire_decode_response) and
 * roomchat_error_never_sent: what the Go and JVM packages stand on. Against
 * the emulator binary, under valgrind (tests/c/run.sh): every out-pointer
 * written only on success, NULLs and bad JSON refused with a typed code.
 *
 * usage: test_generic <path to roomchat-emulator>
 */
#include "harness.h"
#include "roomchat.h"

static emulator emu;

static roomchat_client *new_client(void) {
  roomchat_client_options *options = NULL;
  roomchat_client *client = NULL;
  CHECK(roomchat_client_options_new(emu.private_key, &options, NULL) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_client_options_set_base_url(options, emu.base_url) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_client_new(options, &client, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_client_options_free(options);
  return client;
}

static void test_call_operation(roomchat_client *client) {
  char *json = NULL;
  roomchat_response_meta *meta = NULL;
  roomchat_error *err = NULL;
  CHECK(roomchat_client_call_operation(client, "list_users", "{\"limit\": 2}", &json, &meta, &err) ==
        ROOMCHAT_RESULT_OK);
  CHECK(json != NULL && strstr(json, "\"total\":5") != NULL && strstr(json, "\"limit\":2") != NULL);
  CHECK(meta != NULL && roomchat_response_meta_status(meta) == 200);
  CHECK(err == NULL);
  roomchat_string_free(json);
  roomchat_response_meta_free(meta);

  /* A create: its JSON answer, no meta asked. */
  json = NULL;
  CHECK(roomchat_client_call_operation(client, "create_chat_room", "{\"name\": \"Generic\", \"enableChannels\": true}",
                                       &json, NULL, NULL) == ROOMCHAT_RESULT_OK);
  CHECK(json != NULL && strstr(json, "roomId") != NULL);
  roomchat_string_free(json);

  /* Not declared, bad JSON, NULLs: refused, nothing written, nothing sent. */
  json = NULL;
  CHECK(roomchat_client_call_operation(client, "no_such_operation", NULL, &json, NULL, &err) ==
        ROOMCHAT_RESULT_INVALID_ARGUMENT);
  CHECK(json == NULL && err != NULL && strstr(roomchat_error_message(err), "no_such_operation") != NULL);
  CHECK(roomchat_error_never_sent(err));
  roomchat_error_free(err);
  err = NULL;
  CHECK(roomchat_client_call_operation(client, "list_users", "{\"limit\": ", &json, NULL, NULL) ==
        ROOMCHAT_RESULT_INVALID_ARGUMENT);
  CHECK(roomchat_client_call_operation(client, "list_users", "{\"limit\": 0}", &json, NULL, &err) ==
        ROOMCHAT_RESULT_VALIDATION);
  CHECK(json == NULL);
  roomchat_error_free(err);
  err = NULL;
  CHECK(roomchat_client_call_operation(NULL, "list_users", NULL, &json, NULL, NULL) == ROOMCHAT_RESULT_INVALID_ARGUMENT);
  CHECK(roomchat_client_call_operation(client, NULL, NULL, &json, NULL, NULL) == ROOMCHAT_RESULT_INVALID_ARGUMENT);
  CHECK(roomchat_client_call_operation(client, "list_users", NULL, NULL, NULL, NULL) ==
        ROOMCHAT_RESULT_INVALID_ARGUMENT);

  /* The service's error, typed; a 404 was sent, so not never_sent. */
  CHECK(roomchat_client_call_operation(client, "get_chat_room", "{\"roomId\": \"nope\"}", &json, NULL, &err) ==
        ROOMCHAT_RESULT_NOT_FOUND);
  CHECK(err != NULL && roomchat_error_status(err) == 404 && !roomchat_error_never_sent(err));
  roomchat_error_free(err);
  CHECK(!roomchat_error_never_sent(NULL));
}

static void test_pages(roomchat_client *client) {
  roomchat_operation_pages *pages = NULL;
  roomchat_error *err = NULL;
  char *page = NULL;
  int count = 0, steps = 0;
  roomchat_result code;
  CHECK(roomchat_client_operation_pages(client, "list_users", "{\"limit\": 2}", &pages, NULL) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_operation_pages_next_skip(pages) == 0);
  while ((code = roomchat_operation_pages_next(pages, NULL, &page, NULL)) == ROOMCHAT_RESULT_OK) {
    count += count_occurrences(page, "\"username\"");
    roomchat_string_free(page);
    page = NULL;
    steps++;
  }
  CHECK(code == ROOMCHAT_RESULT_ITERATION_DONE && page == NULL);
  CHECK(count == 5 && steps == 3);
  CHECK(roomchat_operation_pages_next_skip(pages) == 5);
  /* Done stays done. */
  CHECK(roomchat_operation_pages_next(pages, NULL, &page, NULL) == ROOMCHAT_RESULT_ITERATION_DONE);
  roomchat_operation_pages_free(pages);

  /* A cancelled token cancels the step only; the next one fetches the same page. */
  roomchat_cancel_token *token = NULL;
  CHECK(roomchat_cancel_token_new(&token) == ROOMCHAT_RESULT_OK);
  roomchat_cancel_token_cancel(token);
  CHECK(roomchat_client_operation_pages(client, "list_users", "{\"limit\": 3, \"skip\": 1}", &pages, NULL) ==
        ROOMCHAT_RESULT_OK);
  CHECK(roomchat_operation_pages_next(pages, token, &page, &err) == ROOMCHAT_RESULT_CANCELLED);
  CHECK(page == NULL && err != NULL && roomchat_error_never_sent(err));
  roomchat_error_free(err);
  err = NULL;
  CHECK(roomchat_operation_pages_next(pages, NULL, &page, NULL) == ROOMCHAT_RESULT_OK);
  CHECK(page != NULL && count_occurrences(page, "\"username\"") == 3);
  roomchat_string_free(page);
  CHECK(roomchat_operation_pages_next_skip(pages) == 4);
  roomchat_operation_pages_free(pages);
  roomchat_cancel_token_free(token);

  /* Not a listing; bad params; NULLs. */
  pages = NULL;
  CHECK(roomchat_client_operation_pages(client, "create_chat_room", NULL, &pages, &err) == ROOMCHAT_RESULT_VALIDATION);
  CHECK(pages == NULL);
  roomchat_error_free(err);
  CHECK(roomchat_client_operation_pages(client, "list_users", "[1]", &pages, NULL) == ROOMCHAT_RESULT_VALIDATION);
  CHECK(roomchat_client_operation_pages(client, "list_users", "{\"limit\": -1}", &pages, NULL) ==
        ROOMCHAT_RESULT_VALIDATION);
  CHECK(roomchat_client_operation_pages(client, "list_users", NULL, NULL, NULL) == ROOMCHAT_RESULT_INVALID_ARGUMENT);
  CHECK(roomchat_operation_pages_next(NULL, NULL, &page, NULL) == ROOMCHAT_RESULT_INVALID_ARGUMENT);
  CHECK(roomchat_operation_pages_next_skip(NULL) == 0);
  roomchat_operation_pages_free(NULL);
}

static void test_wire(void) {
  char *json = NULL;
  roomchat_error *err = NULL;
  CHECK(roomchat_wire_build_request("get_chat_room", "{\"roomId\": \"a b\"}", "https://api.example.com", "REDACTED",
                                    &json, NULL) == ROOMCHAT_RESULT_OK);
  CHECK(json != NULL && strstr(json, "\"path\":\"/consumer/api/v1/chatroom/a%20b\"") != NULL);
  CHECK(strstr(json, "\"url\":\"https://api.example.com/consumer/api/v1/chatroom/a%20b?auth=REDACTED\"") != NULL);
  roomchat_string_free(json);
  json = NULL;
  CHECK(roomchat_wire_build_request("get_chat_room", "{}", NULL, NULL, &json, &err) == ROOMCHAT_RESULT_VALIDATION);
  CHECK(json == NULL && err != NULL);
  roomchat_error_free(err);
  err = NULL;

  const char body[] = "{\"total\":1,\"limit\":1,\"skip\":0,\"data\":[{\"_id\":\"u1\",\"username\":\"ann\",\"x\":1}]}";
  CHECK(roomchat_wire_decode_response("list_users", 200, "[[\"content-type\", \"application/json\"]]",
                                      (const uint8_t *)body, strlen(body), &json, NULL) == ROOMCHAT_RESULT_OK);
  CHECK(json != NULL && strstr(json, "\"username\":\"ann\"") != NULL && strstr(json, "\"x\":1") != NULL);
  roomchat_string_free(json);
  json = NULL;
  const char failure[] = "{\"message\":\"slow down\"}";
  CHECK(roomchat_wire_decode_response("list_users", 429, "[[\"Retry-After\", \"3\"]]", (const uint8_t *)failure,
                                      strlen(failure), &json, &err) == ROOMCHAT_RESULT_RATE_LIMITED);
  CHECK(json == NULL && err != NULL && roomchat_error_retry_after_ms(err) == 3000);
  roomchat_error_free(err);
  CHECK(roomchat_wire_decode_response("list_users", 99, NULL, NULL, 0, &json, NULL) == ROOMCHAT_RESULT_INVALID_ARGUMENT);
  CHECK(roomchat_wire_decode_response("list_users", 200, NULL, NULL, 5, &json, NULL) ==
        ROOMCHAT_RESULT_INVALID_ARGUMENT);
  CHECK(roomchat_wire_decode_response("list_users", 200, "{}", NULL, 0, &json, NULL) ==
        ROOMCHAT_RESULT_INVALID_ARGUMENT);
  CHECK(roomchat_wire_decode_response("list_users", 200, NULL, NULL, 0, &json, NULL) == ROOMCHAT_RESULT_DECODE);
  CHECK(json == NULL);
}

static void test_users_cancellable(roomchat_client *client) {
  roomchat_users_iter *iter = NULL;
  roomchat_user *user = NULL;
  roomchat_cancel_token *token = NULL;
  roomchat_error *err = NULL;
  int count = 0;
  CHECK(roomchat_cancel_token_new(&token) == ROOMCHAT_RESULT_OK);
  roomchat_cancel_token_cancel(token);
  CHECK(roomchat_client_users_iter(client, 2, &iter, NULL) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_users_iter_next_cancellable(iter, token, &user, &err) == ROOMCHAT_RESULT_CANCELLED);
  CHECK(user == NULL && err != NULL);
  roomchat_error_free(err);
  /* The cancelled step cancelled nothing else: the whole listing follows. */
  while (roomchat_users_iter_next_cancellable(iter, NULL, &user, NULL) == ROOMCHAT_RESULT_OK) {
    CHECK(roomchat_user_json(user) != NULL);
    roomchat_user_free(user);
    user = NULL;
    count++;
  }
  CHECK(count == 5);
  CHECK(roomchat_users_iter_next_cancellable(NULL, NULL, &user, NULL) == ROOMCHAT_RESULT_INVALID_ARGUMENT);
  roomchat_users_iter_free(iter);
  roomchat_cancel_token_free(token);
}

int main(int argc, char **argv) {
  const char *args[] = {"--seed-users", "5", NULL};
  if (argc < 2 || !emulator_start(&emu, argv[1], args)) {
    fprintf(stderr, "usage: %s <roomchat-emulator>\n", argv[0]);
    return 2;
  }
  roomchat_client *client = new_client();
  test_call_operation(client);
  test_pages(client);
  test_wire();
  test_users_cancellable(client);
  roomchat_client_free(client);
  CHECK(emulator_stop(&emu));
  printf("generic: %d passed, %d failed\n", harness_passed, harness_failed);
  return harness_failed == 0 ? 0 : 1;
}
