/*
 * The C99 suite of the generated operations (ffi/src/generated.rs, from
 * api/operations.toml): eject all users and update bot against the emulator
 * binary, their records (nested records, unknown fields), their params
 * handles, the declared limits, the exact paths, NULL arguments. Run under
 * valgrind by tests/c/run.sh.
 *
 * usage: test_operations <path to roomchat-emulator>
 */

#include "harness.h"
#include "roomchat.h"

static emulator emu;

#define ROOM "bbNiVFoXm"
#define EJECT_PATH "/api/v1/chatRoom/" ROOM "/eject-all"

static roomchat_client *make_client(void) {
  roomchat_client_options *options = NULL;
  roomchat_client *client = NULL;
  CHECK(roomchat_client_options_new(emu.private_key, &options, NULL) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_client_options_set_base_url(options, emu.base_url) == ROOMCHAT_RESULT_OK);
  if (emu.ca_pem) CHECK(roomchat_client_options_set_ca_pem(options, emu.ca_pem) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_client_options_set_rate_limit(options, 100000, 60000, false, 60000) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_client_new(options, &client, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_client_options_free(options);
  return client;
}

/* How many journal entries contain `needle`. */
static int journal_count(const char *needle) {
  char *journal = NULL;
  int count;
  CHECK(http_request(&emu, "GET", "/_emulator/journal", NULL, &journal) == 200);
  count = journal ? count_occurrences(journal, needle) : -1;
  free(journal);
  return count;
}

/* Checks a failing call's code (and status when `status` is not 0), frees its error. */
static void expect_error(roomchat_result got, roomchat_error **errp, roomchat_result want, int status,
                         const char *message_part) {
  roomchat_error *err = *errp;
  *errp = NULL;
  CHECK(got == want);
  if (got != want)
    fprintf(stderr, "  wanted %s, got %s: %s\n", roomchat_result_name(want), roomchat_result_name(got),
            err ? roomchat_error_message(err) : "(no error)");
  CHECK(err != NULL);
  if (!err) return;
  CHECK(roomchat_error_code(err) == want);
  if (status) CHECK(roomchat_error_status(err) == status);
  if (message_part) {
    CHECK(strstr(roomchat_error_message(err), message_part) != NULL);
    if (!strstr(roomchat_error_message(err), message_part))
      fprintf(stderr, "  message: %s (wanted %s)\n", roomchat_error_message(err), message_part);
  }
  CHECK(strstr(roomchat_error_message(err), emu.private_key) == NULL);
  roomchat_error_free(err);
}

static int same(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

/* Seeds a bot through the admin API; its _id goes to `id`. */
static int add_bot(const char *spec, char *id, size_t size) {
  char *body = NULL;
  int ok = http_request(&emu, "POST", "/_emulator/bots", spec, &body) == 200 && body &&
           json_string_field(body, "_id", id, size);
  free(body);
  return ok;
}

static void test_eject_all_users(roomchat_client *client) {
  roomchat_acknowledged *answer = NULL;
  roomchat_response_meta *meta = NULL;
  roomchat_error *err = NULL;
  CHECK(http_request(&emu, "POST", "/_emulator/rooms", "{\"roomId\": \"" ROOM "\", \"name\": \"General\"}", NULL) ==
        200);
  CHECK(http_request(&emu, "DELETE", "/_emulator/journal", NULL, NULL) == 200);

  CHECK(roomchat_client_eject_all_users(client, ROOM, &answer, &err) == ROOMCHAT_RESULT_OK);
  CHECK(err == NULL);
  CHECK(roomchat_acknowledged_success(answer) == 1);
  CHECK(roomchat_acknowledged_message(answer) == NULL);
  CHECK(same(roomchat_acknowledged_extra_json(answer), "{}"));
  roomchat_acknowledged_free(answer);
  answer = NULL;
  /* The path exactly as the reference prints it: no /consumer, chatRoom in camel case. */
  CHECK(journal_count("\"method\":\"POST\",\"path\":\"" EJECT_PATH "\"") == 1);

  CHECK(roomchat_client_eject_all_users_with_response(client, ROOM, &answer, &meta, &err) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_acknowledged_success(answer) == 1);
  CHECK(roomchat_response_meta_status(meta) == 200);
  CHECK(roomchat_response_meta_attempts(meta) == 1);
  roomchat_response_meta_free(meta);
  roomchat_acknowledged_free(answer);
  answer = NULL;
  meta = NULL;

  /* An unknown room: the service's 404 and its message; nothing written out. */
  expect_error(roomchat_client_eject_all_users_with_response(client, "nope", &answer, &meta, &err), &err,
               ROOMCHAT_RESULT_NOT_FOUND, 404, "invalid chatroom id");
  CHECK(answer == NULL && meta == NULL);
  CHECK(journal_count("\"path\":\"/api/v1/chatRoom/nope/eject-all\"") == 1);

  /* NULL arguments and an empty id: refused, nothing sent. */
  CHECK(http_request(&emu, "DELETE", "/_emulator/journal", NULL, NULL) == 200);
  expect_error(roomchat_client_eject_all_users(NULL, ROOM, &answer, &err), &err, ROOMCHAT_RESULT_INVALID_ARGUMENT, 0,
               "client");
  expect_error(roomchat_client_eject_all_users(client, NULL, &answer, &err), &err, ROOMCHAT_RESULT_INVALID_ARGUMENT,
               0, "room_id");
  expect_error(roomchat_client_eject_all_users(client, ROOM, NULL, &err), &err, ROOMCHAT_RESULT_INVALID_ARGUMENT, 0,
               "acknowledged_out");
  expect_error(roomchat_client_eject_all_users(client, "", &answer, &err), &err, ROOMCHAT_RESULT_VALIDATION, 0, NULL);
  CHECK(roomchat_client_eject_all_users(client, "\xff", &answer, NULL) == ROOMCHAT_RESULT_INVALID_ARGUMENT);
  CHECK(answer == NULL);
  CHECK(journal_count("\"method\"") == 0);

  /* The accessors and _free take NULL. */
  CHECK(roomchat_acknowledged_success(NULL) == -1);
  CHECK(roomchat_acknowledged_message(NULL) == NULL);
  CHECK(roomchat_acknowledged_extra_json(NULL) == NULL);
  roomchat_acknowledged_free(NULL);
}

static void test_update_bot(roomchat_client *client) {
  char bot_id[64], path[160], needle[256];
  roomchat_update_bot_params *params = NULL;
  roomchat_bot_answer *answer = NULL;
  roomchat_response_meta *meta = NULL;
  roomchat_error *err = NULL;
  const roomchat_bot *bot;
  CHECK(add_bot("{\"name\": \"helper\", \"webhookURL\": \"https://hooks.example/b\", \"trigger\": \"mention\", "
                "\"messageVisibility\": \"public\"}",
                bot_id, sizeof bot_id));
  snprintf(path, sizeof path, "/consumer/api/v2/bot/%s", bot_id);
  snprintf(needle, sizeof needle, "\"method\":\"PUT\",\"path\":\"%s\"", path);
  CHECK(http_request(&emu, "DELETE", "/_emulator/journal", NULL, NULL) == 200);

  CHECK(roomchat_update_bot_params_new(&params) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_update_bot_params_set_description(params, "answers questions") == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_update_bot_params_set_message_history_limit(params, 20) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_update_bot_params_set_enabled(params, false) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_update_bot_params_set_is_allowed_in_all_chat_rooms(params, true) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_update_bot_params_set_webhook_url(params, "https://hooks.example/old") == ROOMCHAT_RESULT_OK);
  /* A later call of a setter replaces the value. */
  CHECK(roomchat_update_bot_params_set_webhook_url(params, "https://hooks.example/new") == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_client_update_bot_with_response(client, bot_id, params, &answer, &meta, &err) == ROOMCHAT_RESULT_OK);
  /* The params are only read by the call: freed now, the answer stands on its own. */
  roomchat_update_bot_params_free(params);
  params = NULL;
  CHECK(err == NULL);
  CHECK(roomchat_response_meta_status(meta) == 200);
  roomchat_response_meta_free(meta);
  meta = NULL;
  CHECK(roomchat_bot_answer_success(answer) == 1);
  CHECK(same(roomchat_bot_answer_extra_json(answer), "{}"));
  bot = roomchat_bot_answer_bot(answer);
  CHECK(bot != NULL);
  CHECK(same(roomchat_bot_id(bot), bot_id));
  CHECK(same(roomchat_bot_name(bot), "helper"));
  CHECK(same(roomchat_bot_description(bot), "answers questions"));
  CHECK(same(roomchat_bot_webhook_url(bot), "https://hooks.example/new"));
  CHECK(same(roomchat_bot_trigger(bot), "mention"));
  CHECK(same(roomchat_bot_message_visibility(bot), "public"));
  CHECK(roomchat_bot_message_history_limit(bot) == 20);
  CHECK(roomchat_bot_enabled(bot) == 0);
  CHECK(roomchat_bot_is_allowed_in_all_chat_rooms(bot) == 1);
  CHECK(same(roomchat_bot_customer(bot), "emulated-customer"));
  CHECK(roomchat_bot_created(bot) != NULL);
  CHECK(same(roomchat_bot_extra_json(bot), "{}"));
  roomchat_bot_answer_free(answer);
  answer = NULL;
  CHECK(journal_count(needle) == 1);
  CHECK(journal_count("\"method\":\"PUT\",\"path\":\"/consumer/api/v2/bot/") == 1);

  /* NULL params: none set; the bot is answered as it is. */
  CHECK(roomchat_client_update_bot(client, bot_id, NULL, &answer, &err) == ROOMCHAT_RESULT_OK);
  CHECK(same(roomchat_bot_description(roomchat_bot_answer_bot(answer)), "answers questions"));
  roomchat_bot_answer_free(answer);
  answer = NULL;
  CHECK(journal_count(needle) == 2);

  /* The service's rule: a bot on every message cannot answer in private. */
  CHECK(roomchat_update_bot_params_new(&params) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_update_bot_params_set_trigger(params, "message") == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_update_bot_params_set_message_visibility(params, "private") == ROOMCHAT_RESULT_OK);
  expect_error(roomchat_client_update_bot(client, bot_id, params, &answer, &err), &err,
               ROOMCHAT_RESULT_INVALID_REQUEST, 400, "trigger on every message");
  roomchat_update_bot_params_free(params);
  params = NULL;
  /* An unknown bot: the service's 401, read by its body as not found (not as the key refused). */
  expect_error(roomchat_client_update_bot(client, "000000000000000000000000", NULL, &answer, &err), &err,
               ROOMCHAT_RESULT_NOT_FOUND, 401, "bot not found");
  CHECK(answer == NULL);

  /* Fields the record does not name are kept, in the answer and in the nested bot. */
  {
    char fault[1024];
    snprintf(fault, sizeof fault,
             "{\"method\": \"PUT\", \"path\": \"%s\", \"action\": {\"kind\": \"respond\", \"status\": 200, "
             "\"body\": {\"success\": true, \"requestId\": \"r-1\", \"bot\": {\"_id\": \"%s\", \"name\": \"helper\", "
             "\"avatar\": {\"url\": \"https://img.example/a.png\"}}}}}",
             path, bot_id);
    CHECK(http_request(&emu, "POST", "/_emulator/faults", fault, NULL) == 200);
    CHECK(roomchat_client_update_bot(client, bot_id, NULL, &answer, &err) == ROOMCHAT_RESULT_OK);
    bot = roomchat_bot_answer_bot(answer);
    CHECK(same(roomchat_bot_answer_extra_json(answer), "{\"requestId\":\"r-1\"}"));
    CHECK(same(roomchat_bot_extra_json(bot), "{\"avatar\":{\"url\":\"https://img.example/a.png\"}}"));
    CHECK(same(roomchat_bot_name(bot), "helper"));
    /* Absent fields: NULL and -1. */
    CHECK(roomchat_bot_description(bot) == NULL);
    CHECK(roomchat_bot_message_history_limit(bot) == -1);
    CHECK(roomchat_bot_enabled(bot) == -1);
    roomchat_bot_answer_free(answer);
    answer = NULL;
  }
}

static void test_update_bot_refused_before_sending(roomchat_client *client) {
  roomchat_update_bot_params *params = NULL;
  roomchat_bot_answer *answer = NULL;
  roomchat_error *err = NULL;
  char long_name[102];
  memset(long_name, 'x', 101);
  long_name[101] = '\0';
  CHECK(http_request(&emu, "DELETE", "/_emulator/journal", NULL, NULL) == 200);

  /* The declared limits: Validation, nothing sent. */
  CHECK(roomchat_update_bot_params_new(&params) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_update_bot_params_set_name(params, long_name) == ROOMCHAT_RESULT_OK);
  expect_error(roomchat_client_update_bot(client, "b1", params, &answer, &err), &err, ROOMCHAT_RESULT_VALIDATION, 0,
               NULL);
  roomchat_update_bot_params_free(params);
  CHECK(roomchat_update_bot_params_new(&params) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_update_bot_params_set_message_history_limit(params, 101) == ROOMCHAT_RESULT_OK);
  expect_error(roomchat_client_update_bot(client, "b1", params, &answer, &err), &err, ROOMCHAT_RESULT_VALIDATION, 0,
               NULL);
  roomchat_update_bot_params_free(params);
  CHECK(roomchat_update_bot_params_new(&params) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_update_bot_params_set_trigger(params, "always") == ROOMCHAT_RESULT_OK);
  expect_error(roomchat_client_update_bot(client, "b1", params, &answer, &err), &err, ROOMCHAT_RESULT_VALIDATION, 0,
               NULL);

  /* A setter given NULL or non-UTF-8 says so, and the call refuses the params
   * rather than sending without that value; a later valid call repairs them. */
  CHECK(roomchat_update_bot_params_set_name(params, NULL) == ROOMCHAT_RESULT_INVALID_ARGUMENT);
  CHECK(roomchat_update_bot_params_set_trigger(params, "mention") == ROOMCHAT_RESULT_OK);
  expect_error(roomchat_client_update_bot(client, "b1", params, &answer, &err), &err,
               ROOMCHAT_RESULT_INVALID_ARGUMENT, 0, "name");
  CHECK(roomchat_update_bot_params_set_description(params, "\xff\xfe") == ROOMCHAT_RESULT_INVALID_ARGUMENT);
  CHECK(roomchat_update_bot_params_set_name(params, "helper") == ROOMCHAT_RESULT_OK);
  expect_error(roomchat_client_update_bot(client, "b1", params, &answer, &err), &err,
               ROOMCHAT_RESULT_INVALID_ARGUMENT, 0, "description");
  roomchat_update_bot_params_free(params);

  /* NULL everywhere else. */
  expect_error(roomchat_client_update_bot(NULL, "b1", NULL, &answer, &err), &err, ROOMCHAT_RESULT_INVALID_ARGUMENT, 0,
               "client");
  expect_error(roomchat_client_update_bot(client, NULL, NULL, &answer, &err), &err, ROOMCHAT_RESULT_INVALID_ARGUMENT,
               0, "bot_id");
  expect_error(roomchat_client_update_bot(client, "b1", NULL, NULL, &err), &err, ROOMCHAT_RESULT_INVALID_ARGUMENT, 0,
               "bot_answer_out");
  expect_error(roomchat_client_update_bot(client, "", NULL, &answer, &err), &err, ROOMCHAT_RESULT_VALIDATION, 0, NULL);
  CHECK(roomchat_update_bot_params_new(NULL) == ROOMCHAT_RESULT_INVALID_ARGUMENT);
  CHECK(roomchat_update_bot_params_set_name(NULL, "x") == ROOMCHAT_RESULT_INVALID_ARGUMENT);
  CHECK(roomchat_update_bot_params_set_enabled(NULL, true) == ROOMCHAT_RESULT_INVALID_ARGUMENT);
  CHECK(roomchat_update_bot_params_set_message_history_limit(NULL, 1) == ROOMCHAT_RESULT_INVALID_ARGUMENT);
  roomchat_update_bot_params_free(NULL);
  CHECK(roomchat_bot_answer_bot(NULL) == NULL);
  CHECK(roomchat_bot_answer_success(NULL) == -1);
  CHECK(roomchat_bot_name(NULL) == NULL);
  CHECK(roomchat_bot_enabled(NULL) == -1);
  CHECK(roomchat_bot_message_history_limit(NULL) == -1);
  CHECK(roomchat_bot_extra_json(NULL) == NULL);
  roomchat_bot_answer_free(NULL);
  roomchat_bot_free(NULL);
  CHECK(answer == NULL);
  CHECK(journal_count("\"method\"") == 0);
}

int main(int argc, char **argv) {
  const char *args[] = {"--rate-limit", "100000/60s", NULL};
  roomchat_client *client;
  if (argc < 2 || !emulator_start(&emu, argv[1], args)) {
    fprintf(stderr, "usage: %s <roomchat-emulator>\n", argv[0]);
    return 2;
  }
  client = make_client();
  CHECK(client != NULL);
  test_eject_all_users(client);
  test_update_bot(client);
  test_update_bot_refused_before_sending(client);
  roomchat_client_free(client);
  CHECK(emulator_stop(&emu));
  printf("operations: %d passed, %d failed\n", harness_passed, harness_failed);
  return harness_failed == 0 ? 0 : 1;
}
