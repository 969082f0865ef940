/*
 * Per-call options (roomchat_client_with_options), the answer beside the result
 * (the _with_response calls and roomchat_response_meta), the log callback and
 * its destroy notifier, ROOMCHAT_LOG and the User-Agent, against the emulator
 * binary, under valgrind (tests/c/run.sh).
 *
 * usage: test_options <path to roomchat-emulator>
 */
#include <fcntl.h>
#include <sys/utsname.h>
#include <time.h>

#include "harness.h"
#include "roomchat.h"

static emulator emu;

#define USERS_PATH "/consumer/api/v2/users"

static roomchat_client *make_client(uint32_t retries) {
  roomchat_client_options *options = NULL;
  roomchat_client *client = NULL;
  roomchat_error *err = NULL;
  CHECK(roomchat_client_options_new(emu.private_key, &options, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_client_options_set_base_url(options, emu.base_url);
  if (emu.ca_pem) roomchat_client_options_set_ca_pem(options, emu.ca_pem);
  roomchat_client_options_set_public_key(options, emu.public_key);
  roomchat_client_options_set_app_name(options, "c-options/1.0");
  roomchat_client_options_set_retries(options, retries, false);
  roomchat_client_options_set_rate_limit(options, 100000, 60000, false, 60000);
  if (roomchat_client_new(options, &client, &err) != ROOMCHAT_RESULT_OK) {
    fprintf(stderr, "client: %s\n", roomchat_error_message(err));
    roomchat_error_free(err);
  }
  roomchat_client_options_free(options);
  return client;
}

/* A view of `client` with a timeout (0: the client's) and retries (-1: the client's). */
static roomchat_client *make_view(const roomchat_client *client, uint64_t timeout_ms, int retries) {
  roomchat_call_options *options = NULL;
  roomchat_client *view = NULL;
  roomchat_error *err = NULL;
  CHECK(roomchat_call_options_new(&options) == ROOMCHAT_RESULT_OK);
  if (timeout_ms) CHECK(roomchat_call_options_set_timeout_ms(options, timeout_ms) == ROOMCHAT_RESULT_OK);
  if (retries >= 0) CHECK(roomchat_call_options_set_max_retries(options, (uint32_t)retries) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_client_with_options(client, options, &view, &err) == ROOMCHAT_RESULT_OK);
  if (err) fprintf(stderr, "view: %s\n", roomchat_error_message(err));
  roomchat_error_free(err);
  roomchat_call_options_free(options);
  return view;
}

static void add_fault(const char *spec) { CHECK(http_request(&emu, "POST", "/_emulator/faults", spec, NULL) == 200); }

static void clear_journal(void) { CHECK(http_request(&emu, "DELETE", "/_emulator/journal", NULL, NULL) == 200); }

/* How many requests of `method` to `path` the journal holds. */
static int arrivals(const char *method, const char *path) {
  char *journal = NULL, needle[256];
  int count;
  CHECK(http_request(&emu, "GET", "/_emulator/journal", NULL, &journal) == 200);
  snprintf(needle, sizeof needle, "\"method\":\"%s\",\"path\":\"%s\"", method, path);
  count = journal ? count_occurrences(journal, needle) : -1;
  free(journal);
  return count;
}

/* The request id the emulator gave its latest request: "req_<seq>" (written to `out`). */
static void last_request_id(char *out, size_t size) {
  char *journal = NULL;
  const char *at, *last = NULL;
  CHECK(http_request(&emu, "GET", "/_emulator/journal", NULL, &journal) == 200);
  for (at = journal; at && (at = strstr(at, "\"seq\":")) != NULL; at++) last = at;
  snprintf(out, size, "req_%lld", last ? json_number_field(last, "seq") : -1LL);
  free(journal);
}

/* The latest request's User-Agent (written to `out`). */
static void last_user_agent(char *out, size_t size) {
  char *journal = NULL;
  const char *at, *last = NULL;
  out[0] = '\0';
  CHECK(http_request(&emu, "GET", "/_emulator/journal", NULL, &journal) == 200);
  for (at = journal; at && (at = strstr(at, "\"user_agent\":")) != NULL; at++) last = at;
  if (last) CHECK(json_string_field(last, "user_agent", out, size));
  free(journal);
}

static int starts_with(const char *text, const char *prefix) {
  return strncmp(text, prefix, strlen(prefix)) == 0;
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1000.0 + (double)t.tv_nsec / 1e6;
}

static void test_view_shares_budget_and_pool(void) {
  roomchat_client *client = make_client(2), *view;
  roomchat_user_page *page = NULL;
  roomchat_rate_limit_state state;
  char *stats = NULL;
  roomchat_room_list *rooms = NULL;
  CHECK(http_request(&emu, "DELETE", "/_emulator/connections", NULL, NULL) == 200);
  view = make_view(client, 5000, 0);
  CHECK(view != NULL && view != client);
  CHECK(roomchat_client_list_users(client, 0, 0, &page, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_user_page_free(page);
  page = NULL;
  CHECK(roomchat_client_list_users(view, 0, 0, &page, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_user_page_free(page);
  page = NULL;
  CHECK(roomchat_client_list_chat_rooms_typed(view, &rooms, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_room_list_free(rooms);
  CHECK(roomchat_client_rate_limit_state(client, &state) == ROOMCHAT_RESULT_OK);
  CHECK(state.used == 3); /* the parent counts its view's calls */
  CHECK(roomchat_client_rate_limit_state(view, &state) == ROOMCHAT_RESULT_OK);
  CHECK(state.used == 3);
  /* One connection for the parent and the view, plus the one this request came on. */
  CHECK(http_request(&emu, "GET", "/_emulator/connections", NULL, &stats) == 200);
  CHECK(stats != NULL && json_number_field(stats, "accepted") == 2);
  if (stats && json_number_field(stats, "accepted") != 2) fprintf(stderr, "  connections: %s\n", stats);
  free(stats);
  /* The view keeps what it shares: it works after the parent is freed. */
  roomchat_client_free(client);
  CHECK(roomchat_client_list_users(view, 0, 0, &page, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_user_page_free(page);
  roomchat_client_free(view);
}

static void test_view_retries(void) {
  roomchat_client *client = make_client(2), *once_only = make_view(client, 0, 0);
  roomchat_user_page *page = NULL;
  roomchat_error *err = NULL;
  clear_journal();
  add_fault("{\"method\": \"GET\", \"path\": \"" USERS_PATH "\", \"times\": 3, \"action\": {\"kind\": \"respond\", "
            "\"status\": 503}}");
  CHECK(roomchat_client_list_users(once_only, 0, 0, &page, &err) == ROOMCHAT_RESULT_SERVER_ERROR);
  CHECK(roomchat_error_status(err) == 503);
  roomchat_error_free(err);
  CHECK(arrivals("GET", USERS_PATH) == 1); /* one attempt, no retry */
  /* the parent keeps its 2 retries: 503, 503, then the answer */
  CHECK(roomchat_client_list_users(client, 0, 0, &page, NULL) == ROOMCHAT_RESULT_OK);
  CHECK(arrivals("GET", USERS_PATH) == 4);
  roomchat_user_page_free(page);
  roomchat_client_free(once_only);
  roomchat_client_free(client);
}

static void test_view_timeout(void) {
  roomchat_client *client = make_client(2), *quick = make_view(client, 300, 0);
  roomchat_user_page *page = NULL;
  roomchat_error *err = NULL;
  double started, took;
  add_fault("{\"method\": \"GET\", \"path\": \"" USERS_PATH "\", \"action\": {\"kind\": \"delay\", \"ms\": 1500}}");
  started = now_ms();
  CHECK(roomchat_client_list_users(quick, 0, 0, &page, &err) == ROOMCHAT_RESULT_TIMEOUT);
  took = now_ms() - started;
  CHECK(took >= 280 && took < 1400); /* the view's 300 ms, not the parent's 30 s */
  if (!(took >= 280 && took < 1400)) fprintf(stderr, "  the timed-out call took %.0f ms\n", took);
  roomchat_error_free(err);
  CHECK(page == NULL);
  /* the same kind of slow answer is within the parent's own timeout */
  add_fault("{\"method\": \"GET\", \"path\": \"" USERS_PATH "\", \"action\": {\"kind\": \"delay\", \"ms\": 600}}");
  CHECK(roomchat_client_list_users(client, 0, 0, &page, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_user_page_free(page);
  roomchat_client_free(quick);
  roomchat_client_free(client);
}

static void test_bad_call_options(void) {
  roomchat_client *client = make_client(2), *view = NULL;
  roomchat_call_options *options = NULL;
  roomchat_error *err = NULL;
  const uint64_t too_long = 1000000000000ULL + 1; /* 10^12 ms + 1 */
  CHECK(roomchat_call_options_new(NULL) == ROOMCHAT_RESULT_INVALID_ARGUMENT);
  CHECK(roomchat_call_options_set_timeout_ms(NULL, 10) == ROOMCHAT_RESULT_INVALID_ARGUMENT);
  CHECK(roomchat_call_options_set_max_retries(NULL, 1) == ROOMCHAT_RESULT_INVALID_ARGUMENT);

  CHECK(roomchat_call_options_new(&options) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_call_options_set_timeout_ms(options, 0) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_client_with_options(client, options, &view, &err) == ROOMCHAT_RESULT_CONFIGURATION);
  CHECK(err != NULL && strstr(roomchat_error_message(err), "timeout") != NULL);
  roomchat_error_free(err);
  err = NULL;
  CHECK(view == NULL);
  CHECK(roomchat_call_options_set_timeout_ms(options, too_long) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_client_with_options(client, options, &view, &err) == ROOMCHAT_RESULT_CONFIGURATION);
  roomchat_error_free(err);
  err = NULL;
  CHECK(roomchat_call_options_set_timeout_ms(options, 1000) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_call_options_set_connect_timeout_ms(options, 0) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_client_with_options(client, options, &view, NULL) == ROOMCHAT_RESULT_CONFIGURATION);
  CHECK(roomchat_call_options_set_connect_timeout_ms(options, 1000) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_call_options_set_max_retry_wait_ms(options, too_long) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_client_with_options(client, options, &view, NULL) == ROOMCHAT_RESULT_CONFIGURATION);
  CHECK(roomchat_call_options_set_max_retry_wait_ms(options, 1000) == ROOMCHAT_RESULT_OK);
  CHECK(view == NULL);

  CHECK(roomchat_client_with_options(NULL, options, &view, NULL) == ROOMCHAT_RESULT_INVALID_ARGUMENT);
  CHECK(roomchat_client_with_options(client, NULL, &view, NULL) == ROOMCHAT_RESULT_INVALID_ARGUMENT);
  CHECK(roomchat_client_with_options(client, options, NULL, NULL) == ROOMCHAT_RESULT_INVALID_ARGUMENT);
  CHECK(view == NULL);
  /* every setting valid: a view */
  CHECK(roomchat_client_with_options(client, options, &view, NULL) == ROOMCHAT_RESULT_OK);
  CHECK(view != NULL);
  roomchat_client_free(view);
  roomchat_call_options_free(options);
  roomchat_call_options_free(NULL);
  roomchat_client_free(client);
}

/* The common checks of an answer to a call answered 200 after `attempts` attempts. */
static void check_meta(const roomchat_response_meta *meta, uint32_t attempts) {
  char id[64];
  size_t i;
  CHECK(meta != NULL);
  if (!meta) return;
  last_request_id(id, sizeof id);
  CHECK(roomchat_response_meta_status(meta) == 200);
  CHECK(roomchat_response_meta_attempts(meta) == attempts);
  CHECK(roomchat_response_meta_request_id(meta) != NULL && strcmp(roomchat_response_meta_request_id(meta), id) == 0);
  CHECK(roomchat_response_meta_header(meta, "Date") != NULL);
  CHECK(roomchat_response_meta_header(meta, "date") == roomchat_response_meta_header(meta, "DATE"));
  CHECK(roomchat_response_meta_header(meta, "no-such-header") == NULL);
  CHECK(roomchat_response_meta_header(meta, NULL) == NULL);
  CHECK(roomchat_response_meta_header_count(meta) >= 3);
  for (i = 0; i < roomchat_response_meta_header_count(meta); i++) {
    const char *name = roomchat_response_meta_header_name(meta, i), *c;
    CHECK(name != NULL && roomchat_response_meta_header_value(meta, i) != NULL);
    for (c = name; c && *c; c++) CHECK(!(*c >= 'A' && *c <= 'Z'));
  }
  CHECK(roomchat_response_meta_header_name(meta, i) == NULL);
  CHECK(roomchat_response_meta_header_value(meta, i) == NULL);
}

static void test_with_response(void) {
  roomchat_client *client = make_client(2);
  roomchat_user_page *page = NULL;
  roomchat_created_user *user = NULL;
  roomchat_token_user *token = NULL;
  roomchat_messages *messages = NULL;
  roomchat_response_meta *meta = NULL;
  roomchat_error *err = NULL;
  char *body = NULL, *raw = NULL, conversation[64];
  roomchat_room_list *rooms = NULL;
  uint16_t status = 0;

  CHECK(roomchat_client_list_users_with_response(client, 0, 0, &page, &meta, NULL) == ROOMCHAT_RESULT_OK);
  check_meta(meta, 1);
  CHECK(page != NULL);
  roomchat_user_page_free(page);
  page = NULL;
  roomchat_response_meta_free(meta);
  meta = NULL;

  /* after a retry: the second attempt's answer */
  add_fault("{\"method\": \"GET\", \"path\": \"" USERS_PATH "\", \"action\": {\"kind\": \"respond\", \"status\": 503}}");
  CHECK(roomchat_client_list_users_with_response(client, 0, 0, &page, &meta, NULL) == ROOMCHAT_RESULT_OK);
  check_meta(meta, 2);
  roomchat_user_page_free(page);
  page = NULL;
  roomchat_response_meta_free(meta);
  meta = NULL;

  /* NULL meta_out: the plain call */
  CHECK(roomchat_client_list_users_with_response(client, 0, 0, &page, NULL, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_user_page_free(page);

  /* every endpoint */
  CHECK(roomchat_client_create_user_with_response(client, "jon", ROOMCHAT_ROLE_REGULAR, NULL,
                                                  "{\"uniqueUserIdentifier\": \"crm-c-1\"}", &user, &meta,
                                                  NULL) == ROOMCHAT_RESULT_OK);
  check_meta(meta, 1);
  roomchat_response_meta_free(meta);
  meta = NULL;
  CHECK(roomchat_client_deactivate_user_with_response(client, ROOMCHAT_USER_IDENTIFIER_UNIQUE_USER_IDENTIFIER,
                                                      "crm-c-1", &meta, NULL) == ROOMCHAT_RESULT_OK);
  check_meta(meta, 1);
  roomchat_response_meta_free(meta);
  meta = NULL;
  CHECK(roomchat_client_reactivate_user_with_response(client, ROOMCHAT_USER_IDENTIFIER_UNIQUE_USER_IDENTIFIER,
                                                      "crm-c-1", &meta, NULL) == ROOMCHAT_RESULT_OK);
  check_meta(meta, 1);
  roomchat_response_meta_free(meta);
  meta = NULL;
  CHECK(roomchat_client_validate_access_token_with_response(client, roomchat_created_user_access_token(user), &token,
                                                            &meta, NULL) == ROOMCHAT_RESULT_OK);
  check_meta(meta, 1);
  CHECK(token != NULL && strcmp(roomchat_token_user_username(token), "jon") == 0);
  roomchat_token_user_free(token);
  roomchat_response_meta_free(meta);
  meta = NULL;
  CHECK(roomchat_client_invalidate_access_token_with_response(client, roomchat_created_user_access_token(user), &meta,
                                                              NULL) == ROOMCHAT_RESULT_OK);
  check_meta(meta, 1);
  roomchat_response_meta_free(meta);
  meta = NULL;
  roomchat_created_user_free(user);
  CHECK(http_request(&emu, "POST", "/_emulator/rooms", "{\"roomId\": \"r-meta\", \"name\": \"Meta\"}", NULL) == 200);
  CHECK(http_request(&emu, "POST", "/_emulator/conversations",
                     "{\"roomId\": \"r-meta\", \"messages\": [{\"messages\": \"hi\", \"user\": {\"username\": \"jon\"}}]}",
                     &body) == 200);
  CHECK(json_string_field(body, "conversationId", conversation, sizeof conversation));
  free(body);
  CHECK(roomchat_client_conversation_messages_with_response(client, "r-meta", conversation, ROOMCHAT_PATH_FORM_ROOM,
                                                            &messages, &meta, NULL) == ROOMCHAT_RESULT_OK);
  check_meta(meta, 1);
  CHECK(roomchat_messages_len(messages) == 1);
  roomchat_messages_free(messages);
  roomchat_response_meta_free(meta);
  meta = NULL;
  CHECK(roomchat_client_list_chat_rooms_typed_with_response(client, &rooms, &meta, NULL) == ROOMCHAT_RESULT_OK);
  check_meta(meta, 1);
  CHECK(roomchat_room_list_len(rooms) == 1);
  CHECK(strcmp(roomchat_room_room_id(roomchat_room_list_get(rooms, 0)), "r-meta") == 0);
  roomchat_room_list_free(rooms);
  roomchat_response_meta_free(meta);
  meta = NULL;
  CHECK(roomchat_client_raw_request_with_response(client, "GET", USERS_PATH, NULL, NULL,
                                                  ROOMCHAT_RAW_AUTH_PRIVATE_KEY, &status, &raw, &meta,
                                                  NULL) == ROOMCHAT_RESULT_OK);
  check_meta(meta, 1);
  CHECK(status == 200);
  roomchat_string_free(raw);
  roomchat_response_meta_free(meta);
  meta = NULL;

  /* a failure writes no answer */
  CHECK(roomchat_client_deactivate_user_with_response(client, ROOMCHAT_USER_IDENTIFIER_USER_ID,
                                                      "000000000000000000000000", &meta, &err) ==
        ROOMCHAT_RESULT_USER_NOT_FOUND);
  CHECK(meta == NULL);
  CHECK(roomchat_error_status(err) == 400);
  roomchat_error_free(err);

  /* NULL is safe to every getter */
  CHECK(roomchat_response_meta_status(NULL) == 0);
  CHECK(roomchat_response_meta_attempts(NULL) == 0);
  CHECK(roomchat_response_meta_header_count(NULL) == 0);
  CHECK(roomchat_response_meta_header(NULL, "date") == NULL);
  CHECK(roomchat_response_meta_request_id(NULL) == NULL);
  CHECK(roomchat_response_meta_header_name(NULL, 0) == NULL);
  roomchat_response_meta_free(NULL);
  roomchat_client_free(client);
}

/* What the log callback heard. */
typedef struct heard {
  char lines[8][512];
  int levels[8];
  int count;
} heard;

static void on_log(void *user_data, roomchat_log_level level, const char *line) {
  heard *h = (heard *)user_data;
  if (h->count < 8) {
    snprintf(h->lines[h->count], sizeof h->lines[0], "%s", line);
    h->levels[h->count] = (int)level;
  }
  h->count++;
}

static roomchat_client *logging_client(heard *h, uint32_t lowest_level, roomchat_error **err) {
  roomchat_client_options *options = NULL;
  roomchat_client *client = NULL;
  CHECK(roomchat_client_options_new(emu.private_key, &options, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_client_options_set_base_url(options, emu.base_url);
  if (emu.ca_pem) roomchat_client_options_set_ca_pem(options, emu.ca_pem);
  roomchat_client_options_set_log_callback(options, on_log, h, lowest_level);
  roomchat_client_new(options, &client, err);
  roomchat_client_options_free(options);
  return client;
}

static void test_log_callback(void) {
  heard h;
  roomchat_client *client;
  roomchat_client_options *options = NULL;
  roomchat_user_page *page = NULL;
  roomchat_error *err = NULL;
  memset(&h, 0, sizeof h);
  client = logging_client(&h, ROOMCHAT_LOG_LEVEL_DEBUG, NULL);
  add_fault("{\"method\": \"GET\", \"path\": \"" USERS_PATH "\", \"action\": {\"kind\": \"respond\", \"status\": 503}}");
  CHECK(roomchat_client_list_users(client, 5, 0, &page, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_user_page_free(page);
  page = NULL;
  CHECK(h.count == 3);
  CHECK(h.levels[0] == ROOMCHAT_LOG_LEVEL_DEBUG && h.levels[1] == ROOMCHAT_LOG_LEVEL_WARNING &&
        h.levels[2] == ROOMCHAT_LOG_LEVEL_DEBUG);
  CHECK(starts_with(h.lines[0], "GET " USERS_PATH "?auth=REDACTED&limit=5&skip=0 -> 503 (attempt 1, "));
  CHECK(starts_with(h.lines[1], "retrying GET " USERS_PATH "?auth=REDACTED&limit=5&skip=0 in "));
  CHECK(strstr(h.lines[2], "-> 200 (attempt 2, ") != NULL);
  CHECK(strstr(h.lines[0], emu.private_key) == NULL && strstr(h.lines[1], emu.private_key) == NULL);
  roomchat_client_free(client);

  /* warnings only */
  memset(&h, 0, sizeof h);
  client = logging_client(&h, ROOMCHAT_LOG_LEVEL_WARNING, NULL);
  add_fault("{\"method\": \"GET\", \"path\": \"" USERS_PATH "\", \"action\": {\"kind\": \"respond\", \"status\": 503}}");
  CHECK(roomchat_client_list_users(client, 5, 0, &page, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_user_page_free(page);
  page = NULL;
  CHECK(h.count == 1 && h.levels[0] == ROOMCHAT_LOG_LEVEL_WARNING);
  roomchat_client_free(client);

  /* a level that is not a roomchat_log_level: reported by roomchat_client_new */
  memset(&h, 0, sizeof h);
  client = logging_client(&h, 7, &err);
  CHECK(client == NULL);
  CHECK(err != NULL && roomchat_error_code(err) == ROOMCHAT_RESULT_INVALID_ARGUMENT);
  CHECK(err != NULL && strstr(roomchat_error_message(err), "roomchat_log_level") != NULL);
  roomchat_error_free(err);

  /* a NULL callback turns it off again */
  CHECK(roomchat_client_options_new(emu.private_key, &options, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_client_options_set_base_url(options, emu.base_url);
  if (emu.ca_pem) roomchat_client_options_set_ca_pem(options, emu.ca_pem);
  roomchat_client_options_set_log_callback(options, on_log, &h, ROOMCHAT_LOG_LEVEL_DEBUG);
  roomchat_client_options_set_log_callback(options, NULL, NULL, ROOMCHAT_LOG_LEVEL_DEBUG);
  CHECK(roomchat_client_new(options, &client, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_client_options_free(options);
  CHECK(roomchat_client_list_users(client, 5, 0, &page, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_user_page_free(page);
  CHECK(h.count == 0);
  CHECK(roomchat_client_options_set_log_callback(NULL, on_log, &h, 0) == ROOMCHAT_RESULT_INVALID_ARGUMENT);
  roomchat_client_free(client);
}

/* The destroy notifier's record: how often it ran, and the user_data of each run
 * (as numbers: the notifier frees them). */
static int destroy_calls = 0;
static uintptr_t destroyed[8];

static void on_destroy(void *user_data) {
  if (destroy_calls < 8) destroyed[destroy_calls] = (uintptr_t)user_data;
  destroy_calls++;
  free(user_data);
}

/* Options for the emulator with a log callback into a fresh malloc'd `heard`
 * owned by the library (freed by on_destroy); the `heard` goes to `*data_out`. */
static roomchat_client_options *owned_log_options(heard **data_out) {
  roomchat_client_options *options = NULL;
  heard *data = (heard *)calloc(1, sizeof *data);
  CHECK(roomchat_client_options_new(emu.private_key, &options, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_client_options_set_base_url(options, emu.base_url);
  if (emu.ca_pem) roomchat_client_options_set_ca_pem(options, emu.ca_pem);
  CHECK(roomchat_client_options_set_log_callback_with_destroy(options, on_log, data, ROOMCHAT_LOG_LEVEL_DEBUG,
                                                              on_destroy) == ROOMCHAT_RESULT_OK);
  *data_out = data;
  return options;
}

/* The case: an iterator and a view outlive their client's
 * roomchat_client_free and still log; the notifier runs once, when the last of
 * them is freed, and only then is user_data freed (valgrind: no invalid access). */
static void test_log_destroy_after_iterator_and_view(void) {
  heard *data = NULL;
  roomchat_client_options *options = owned_log_options(&data);
  roomchat_client *client = NULL, *view;
  roomchat_users_iter *iter = NULL;
  roomchat_user *user = NULL;
  roomchat_user_page *page = NULL;
  roomchat_result step;
  int before;
  destroy_calls = 0;
  CHECK(roomchat_client_new(options, &client, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_client_options_free(options);
  CHECK(destroy_calls == 0); /* the client holds the callback */
  CHECK(roomchat_client_users_iter(client, 1, &iter, NULL) == ROOMCHAT_RESULT_OK);
  view = make_view(client, 5000, 0);
  roomchat_client_free(client);
  CHECK(destroy_calls == 0);

  /* The client is gone: the iterator's step and the view's call still log. */
  before = data->count;
  step = roomchat_users_iter_next(iter, &user, NULL);
  CHECK(step == ROOMCHAT_RESULT_OK || step == ROOMCHAT_RESULT_ITERATION_DONE);
  roomchat_user_free(user);
  CHECK(data->count == before + 1 && data->count <= 8);
  if (data->count >= 1 && data->count <= 8)
    CHECK(starts_with(data->lines[data->count - 1], "GET " USERS_PATH "?auth=REDACTED&limit=1&skip=0 -> 200"));
  CHECK(roomchat_client_list_users(view, 2, 0, &page, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_user_page_free(page);
  CHECK(data->count == before + 2);
  CHECK(destroy_calls == 0);

  roomchat_users_iter_free(iter);
  CHECK(destroy_calls == 0); /* the view still holds it */
  roomchat_client_free(view);
  CHECK(destroy_calls == 1 && destroyed[0] == (uintptr_t)data); /* and on_destroy freed it */
}

/* The notifier runs exactly once however the options end: freed unused, the
 * callback replaced, turned off, refused. */
static void test_log_destroy_runs_once(void) {
  heard *first = NULL, *second = NULL, *off = (heard *)calloc(1, sizeof *off);
  roomchat_client_options *options;
  roomchat_client *client = NULL;
  roomchat_error *err = NULL;

  /* options never used to build a client: on roomchat_client_options_free */
  destroy_calls = 0;
  options = owned_log_options(&first);
  CHECK(destroy_calls == 0);
  roomchat_client_options_free(options);
  CHECK(destroy_calls == 1 && destroyed[0] == (uintptr_t)first);

  /* set twice: the first's notifier runs during the second call (nothing else held it) */
  destroy_calls = 0;
  options = owned_log_options(&first);
  second = (heard *)calloc(1, sizeof *second);
  CHECK(roomchat_client_options_set_log_callback_with_destroy(options, on_log, second, ROOMCHAT_LOG_LEVEL_WARNING,
                                                              on_destroy) == ROOMCHAT_RESULT_OK);
  CHECK(destroy_calls == 1 && destroyed[0] == (uintptr_t)first);
  roomchat_client_options_free(options);
  CHECK(destroy_calls == 2 && destroyed[1] == (uintptr_t)second);

  /* set twice while a client holds the first: it lives on with that client */
  destroy_calls = 0;
  options = owned_log_options(&first);
  CHECK(roomchat_client_new(options, &client, NULL) == ROOMCHAT_RESULT_OK);
  second = (heard *)calloc(1, sizeof *second);
  CHECK(roomchat_client_options_set_log_callback_with_destroy(options, on_log, second, ROOMCHAT_LOG_LEVEL_DEBUG,
                                                              on_destroy) == ROOMCHAT_RESULT_OK);
  CHECK(destroy_calls == 0);
  roomchat_client_options_free(options);
  CHECK(destroy_calls == 1 && destroyed[0] == (uintptr_t)second);
  roomchat_client_free(client);
  CHECK(destroy_calls == 2 && destroyed[1] == (uintptr_t)first);

  /* a call the options do not keep runs the notifier before returning */
  destroy_calls = 0;
  options = owned_log_options(&first);
  second = (heard *)calloc(1, sizeof *second);
  CHECK(roomchat_client_options_set_log_callback_with_destroy(options, on_log, second, 7, on_destroy) ==
        ROOMCHAT_RESULT_OK); /* a bad level: recorded, the first callback stays */
  CHECK(destroy_calls == 1 && destroyed[0] == (uintptr_t)second);
  client = NULL;
  CHECK(roomchat_client_new(options, &client, &err) == ROOMCHAT_RESULT_INVALID_ARGUMENT);
  CHECK(client == NULL);
  roomchat_error_free(err);
  second = (heard *)calloc(1, sizeof *second);
  CHECK(roomchat_client_options_set_log_callback_with_destroy(options, NULL, second, ROOMCHAT_LOG_LEVEL_DEBUG,
                                                              on_destroy) == ROOMCHAT_RESULT_OK);
  /* turned off: the new user_data at once, then the replaced first */
  CHECK(destroy_calls == 3 && destroyed[1] == (uintptr_t)second && destroyed[2] == (uintptr_t)first);
  roomchat_client_options_free(options);
  CHECK(destroy_calls == 3);
  CHECK(roomchat_client_options_set_log_callback_with_destroy(NULL, on_log, off, ROOMCHAT_LOG_LEVEL_DEBUG,
                                                              on_destroy) == ROOMCHAT_RESULT_INVALID_ARGUMENT);
  CHECK(destroy_calls == 4 && destroyed[3] == (uintptr_t)off);

  /* a NULL notifier, or the function without one: nothing is called, user_data stays the caller's */
  destroy_calls = 0;
  first = (heard *)calloc(1, sizeof *first);
  CHECK(roomchat_client_options_new(emu.private_key, &options, NULL) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_client_options_set_log_callback_with_destroy(options, on_log, first, ROOMCHAT_LOG_LEVEL_DEBUG,
                                                              NULL) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_client_options_set_log_callback(options, on_log, first, ROOMCHAT_LOG_LEVEL_DEBUG) ==
        ROOMCHAT_RESULT_OK);
  roomchat_client_options_free(options);
  CHECK(destroy_calls == 0);
  free(first);
}

/* ROOMCHAT_LOG without a callback: lines on standard error (captured in a file here). */
static void test_roomchat_log_variable(void) {
  char path[] = "/tmp/roomchat-c-log-XXXXXX";
  int fd = mkstemp(path), saved;
  roomchat_client *client;
  roomchat_user_page *page = NULL;
  char *text;
  CHECK(fd >= 0);
  if (fd < 0) return;
  fflush(stderr);
  saved = dup(2);
  dup2(fd, 2);
  setenv("ROOMCHAT_LOG", "debug", 1);
  client = make_client(2); /* read when the client is made */
  unsetenv("ROOMCHAT_LOG");
  CHECK(roomchat_client_list_users(client, 3, 0, &page, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_user_page_free(page);
  roomchat_client_free(client);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  close(fd);
  text = read_whole_file(path);
  unlink(path);
  CHECK(text != NULL);
  if (!text) return;
  CHECK(strstr(text, "[roomchat] DEBUG: GET " USERS_PATH "?auth=REDACTED&limit=3&skip=0 -> 200 (attempt 1, ") != NULL);
  CHECK(strstr(text, emu.private_key) == NULL);
  if (!strstr(text, "[roomchat] DEBUG:")) fprintf(stderr, "  stderr was: %s\n", text);
  free(text);
}

static void test_user_agent(void) {
  roomchat_client *client = make_client(0);
  char agent[512], want[512];
  roomchat_room_list *rooms = NULL;
  struct utsname host;
  CHECK(uname(&host) == 0);
  CHECK(roomchat_client_list_chat_rooms_typed(client, &rooms, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_room_list_free(rooms);
  last_user_agent(agent, sizeof agent);
  snprintf(want, sizeof want, "roomchat-c/%s (core %s; linux %s) c-options/1.0", roomchat_version(),
           roomchat_version(), host.machine);
  CHECK(strcmp(agent, want) == 0);
  if (strcmp(agent, want) != 0) fprintf(stderr, "  User-Agent: %s\n  wanted:     %s\n", agent, want);
  roomchat_client_free(client);
}

/* Plain http:// to a remote host is refused, the message naming C's setter and no other language's option. */
static void test_plain_http_names_the_c_setter(void) {
  roomchat_client_options *options = NULL;
  roomchat_client *client = NULL;
  roomchat_error *err = NULL;
  CHECK(roomchat_client_options_new("sk_1", &options, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_client_options_set_base_url(options, "http://api.example.com");
  CHECK(roomchat_client_new(options, &client, &err) == ROOMCHAT_RESULT_CONFIGURATION);
  CHECK(client == NULL && err != NULL);
  const char *message = roomchat_error_message(err);
  const char *want = "use https://, or roomchat_client_options_set_allow_insecure_http(options, true) if you really mean it";
  CHECK(strlen(message) > strlen(want) && strcmp(message + strlen(message) - strlen(want), want) == 0);
  CHECK(strstr(message, "\"api.example.com\"") != NULL);
  CHECK(strstr(message, "allow_insecure_http(true)") == NULL && strstr(message, "allow_insecure_http=True") == NULL &&
        strstr(message, "allowInsecureHttp") == NULL && strstr(message, "::") == NULL);
  if (strstr(message, want) == NULL) fprintf(stderr, "  message: %s\n", message);
  roomchat_error_free(err);
  /* The setter lifts the refusal. */
  err = NULL;
  CHECK(roomchat_client_options_set_allow_insecure_http(options, true) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_client_new(options, &client, &err) == ROOMCHAT_RESULT_OK && client != NULL);
  roomchat_client_free(client);
  roomchat_client_options_free(options);
}

/* Sets (or, with NULL, unsets) every variable roomchat_client_options_new_from_env reads. */
static void set_roomchat_env(const char *key, const char *base, const char *chat, const char *public_key,
                             const char *app) {
  const char *names[] = {"ROOMCHAT_PRIVATE_KEY", "ROOMCHAT_BASE_URL", "ROOMCHAT_CHAT_URL", "ROOMCHAT_PUBLIC_KEY",
                         "ROOMCHAT_APP_NAME"};
  const char *values[] = {key, base, chat, public_key, app};
  size_t i;
  for (i = 0; i < sizeof names / sizeof names[0]; i++) {
    if (values[i]) {
      CHECK(setenv(names[i], values[i], 1) == 0);
    } else {
      CHECK(unsetenv(names[i]) == 0);
    }
  }
}

/* roomchat_client_options_new_from_env fails with `code` and exactly core's `message`, writing no options. */
static void check_from_env_refused(roomchat_result code, const char *message) {
  roomchat_client_options *options = NULL;
  roomchat_error *err = NULL;
  CHECK(roomchat_client_options_new_from_env(&options, &err) == code);
  CHECK(options == NULL && err != NULL);
  if (err) {
    CHECK(roomchat_error_code(err) == code);
    CHECK(strcmp(roomchat_error_message(err), message) == 0);
    if (strcmp(roomchat_error_message(err), message) != 0)
      fprintf(stderr, "  message: %s\n  wanted:  %s\n", roomchat_error_message(err), message);
  }
  roomchat_error_free(err);
}

/* The environment as core's ClientBuilder::from_env reads it (the variables, their errors),
 * the setters after it, and a value that is set but wrong refused by roomchat_client_new. */
static void test_options_from_env(void) {
  roomchat_client_options *options = NULL;
  roomchat_client *client = NULL;
  roomchat_error *err = NULL;
  roomchat_room_list *rooms = NULL;
  char agent[512], *url = NULL;

  set_roomchat_env(NULL, NULL, NULL, NULL, NULL);
  check_from_env_refused(ROOMCHAT_RESULT_CONFIGURATION, "the environment variable ROOMCHAT_PRIVATE_KEY is not set");
  /* An empty variable counts as unset. */
  set_roomchat_env(emu.private_key, "", NULL, NULL, NULL);
  check_from_env_refused(ROOMCHAT_RESULT_CONFIGURATION, "the environment variable ROOMCHAT_BASE_URL is not set");
  set_roomchat_env(emu.private_key, "http://127.0.0.1:1/\xff", NULL, NULL, NULL);
  check_from_env_refused(ROOMCHAT_RESULT_CONFIGURATION, "the environment variable ROOMCHAT_BASE_URL is not valid UTF-8");
  set_roomchat_env(emu.private_key, emu.base_url, "\xfe", NULL, NULL);
  check_from_env_refused(ROOMCHAT_RESULT_CONFIGURATION, "the environment variable ROOMCHAT_CHAT_URL is not valid UTF-8");
  CHECK(roomchat_client_options_new_from_env(NULL, NULL) == ROOMCHAT_RESULT_INVALID_ARGUMENT);

  /* Set but wrong: the options are made, the client is refused as for the setter's value. */
  set_roomchat_env(emu.private_key, "api.example.com", NULL, NULL, NULL);
  CHECK(roomchat_client_options_new_from_env(&options, NULL) == ROOMCHAT_RESULT_OK && options != NULL);
  CHECK(roomchat_client_new(options, &client, &err) == ROOMCHAT_RESULT_CONFIGURATION && client == NULL);
  CHECK(err && strcmp(roomchat_error_message(err), "the base URL must start with https:// or http://") == 0);
  roomchat_error_free(err);
  err = NULL;
  /* A setter replaces the variable's value. */
  CHECK(roomchat_client_options_set_base_url(options, emu.base_url) == ROOMCHAT_RESULT_OK);
  if (emu.ca_pem) roomchat_client_options_set_ca_pem(options, emu.ca_pem);
  CHECK(roomchat_client_new(options, &client, &err) == ROOMCHAT_RESULT_OK && client != NULL);
  if (err) fprintf(stderr, "  client: %s\n", roomchat_error_message(err));
  roomchat_error_free(err);
  err = NULL;
  roomchat_client_free(client);
  client = NULL;
  roomchat_client_options_free(options);
  options = NULL;

  /* Every variable honoured, the values copied when the options are made. */
  set_roomchat_env(emu.private_key, emu.base_url, emu.chat_url, emu.public_key, "c-env/2.0");
  CHECK(roomchat_client_options_new_from_env(&options, &err) == ROOMCHAT_RESULT_OK && options != NULL && err == NULL);
  set_roomchat_env(NULL, NULL, NULL, NULL, NULL);
  if (emu.ca_pem) roomchat_client_options_set_ca_pem(options, emu.ca_pem);
  CHECK(roomchat_client_new(options, &client, &err) == ROOMCHAT_RESULT_OK && client != NULL);
  roomchat_client_options_free(options);
  if (client) {
    CHECK(roomchat_client_list_chat_rooms_typed(client, &rooms, NULL) == ROOMCHAT_RESULT_OK);
    roomchat_room_list_free(rooms);
    last_user_agent(agent, sizeof agent);
    CHECK(strlen(agent) > strlen(" c-env/2.0") && strcmp(agent + strlen(agent) - strlen(" c-env/2.0"), " c-env/2.0") == 0);
    CHECK(roomchat_client_base_url(client, &url, NULL) == ROOMCHAT_RESULT_OK && url && strcmp(url, emu.base_url) == 0);
    roomchat_string_free(url);
    url = NULL;
    /* The chat URL: the sign-in address is on it. */
    CHECK(roomchat_client_sign_in_url(client, "room-1", "token-1", &url, NULL) == ROOMCHAT_RESULT_OK && url &&
          starts_with(url, emu.chat_url));
    roomchat_string_free(url);
    url = NULL;
    /* The public key: a call it authenticates is sent (without it: CONFIGURATION, nothing sent). */
    {
      roomchat_token_user *user = NULL;
      CHECK(roomchat_client_validate_access_token(client, "forged-token", &user, NULL) ==
            ROOMCHAT_RESULT_INVALID_REQUEST);
      roomchat_token_user_free(user);
    }
    CHECK(roomchat_client_base_url(client, NULL, NULL) == ROOMCHAT_RESULT_INVALID_ARGUMENT);
  }
  CHECK(roomchat_client_base_url(NULL, &url, NULL) == ROOMCHAT_RESULT_INVALID_ARGUMENT && url == NULL);
  roomchat_client_free(client);
}

/* The default longest wait for a slot, as core computes it for a window. */
static void test_default_rate_limit_wait(void) {
  CHECK(roomchat_rate_limit_default_max_wait_ms(60000) == 62000);
  CHECK(roomchat_rate_limit_default_max_wait_ms(120000) == 122000);
  /* A short window still waits a minute: the service's limit clears within one. */
  CHECK(roomchat_rate_limit_default_max_wait_ms(5000) == 60000);
  CHECK(roomchat_rate_limit_default_max_wait_ms(0) == 60000);
  /* The jitter allowance is a twentieth of the window, at most a second. */
  CHECK(roomchat_rate_limit_default_max_wait_ms(1200000) == 1202000);
  CHECK(roomchat_rate_limit_default_max_wait_ms(70000) == 72000);
  CHECK(roomchat_rate_limit_default_max_wait_ms(UINT64_MAX) == 1000000000000ULL);
}

int main(int argc, char **argv) {
  const int over_tls = harness_test_tls();
  const char *args[] = {"--rate-limit", "100000/60s", over_tls ? "--tls" : NULL, NULL};
  if (argc < 2 || !emulator_start(&emu, argv[1], args)) {
    fprintf(stderr, "usage: %s <roomchat-emulator>\n", argv[0]);
    return 2;
  }
  test_view_shares_budget_and_pool();
  test_view_retries();
  test_view_timeout();
  test_bad_call_options();
  test_with_response();
  test_log_callback();
  test_log_destroy_after_iterator_and_view();
  test_log_destroy_runs_once();
  test_roomchat_log_variable();
  test_user_agent();
  test_plain_http_names_the_c_setter();
  test_options_from_env();
  test_default_rate_limit_wait();
  CHECK(emulator_stop(&emu));
  printf("options: %d passed, %d failed\n", harness_passed, harness_failed);
  return harness_failed == 0 ? 0 : 1;
}
