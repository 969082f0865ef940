/*
 * The C99 suite of the observer callback and the extra headers (issue 45):
 * the reports of a call that succeeds, of a 429 then a 200, of an error, of a
 * rate-limit wait; headers from the client and from an attempt's start, both
 * seen by the emulator's journal; refused headers; trace context turned off;
 * no secret in any string the callback receives; the destroy notifier run
 * exactly once; and the C guide's Observability example (readme_observability.c,
 * verbatim in ffi/README.md) run as printed. Run under valgrind by tests/c/run.sh.
 *
 * usage: test_observer <path to roomchat-emulator> <path to the built readme_observability>
 */

#include <errno.h>
#include <time.h>

#include "harness.h"
#include "roomchat.h"

/* Keys with the characters URLs treat apart (as core's redaction tests use). */
#define PRIVATE_KEY "sk_live_S3cr?t#9/x@y+&=%"
#define PUBLIC_KEY "pk_live_Pub?l#c/k@y+&=%"
#define PROXY_PASSWORD "Pr0xy!p$ss*w0rd;9" /* what userinfo may hold unencoded */
#define REDIS_PASSWORD "R3d?s#9/p@ss"

static emulator emu;

/* ---- a recorder: every report, copied ---------------------------------------------- */

#define MAX_REPORTS 32
#define TEXT 512

typedef struct report {
  uint32_t kind, attempt, resend_count, error_kind;
  uint16_t status, server_port;
  uint64_t call_id, client_id, call_start, start, end, duration, rate_limit_wait, retry_wait;
  int has_headers, propagate;
  char operation[64], method[16], url_template[128], url_full[TEXT], server_address[64], error_type[64],
      retry_reason[32];
  size_t event_count;
  uint32_t event_kind[4];
  uint64_t event_wait[4];
  uint16_t event_status[4];
  char event_name[4][64], event_reason[4][32];
} report;

typedef struct recorder {
  report reports[MAX_REPORTS];
  int count;
  /* Every string the callback received, end to end (for the secrets test). */
  char seen[16384];
  size_t seen_len;
  /* At each attempt's start: set these headers (name, value pairs), and the codes they got. */
  const char *set_name, *set_value, *refused_name;
  roomchat_result set_code, refused_code;
  char refused_message[256];
  int destroyed;
} recorder;

static void keep(recorder *r, char *into, size_t size, const char *text) {
  size_t len;
  if (!text) {
    into[0] = '\0';
    return;
  }
  snprintf(into, size, "%s", text);
  len = strlen(text);
  if (r->seen_len + len + 2 < sizeof r->seen) {
    memcpy(r->seen + r->seen_len, text, len);
    r->seen_len += len;
    r->seen[r->seen_len++] = '\n';
    r->seen[r->seen_len] = '\0';
  }
}

static void record(void *user_data, const roomchat_observation *o, roomchat_attempt_headers *headers) {
  recorder *r = (recorder *)user_data;
  report *rep;
  size_t i;
  if (r->count >= MAX_REPORTS) return;
  rep = &r->reports[r->count++];
  CHECK(o->struct_size == sizeof(roomchat_observation));
  CHECK(ROOMCHAT_HAS_FIELD(o, roomchat_observation, event_count));
  rep->kind = o->kind;
  rep->attempt = o->attempt;
  rep->resend_count = o->resend_count;
  rep->error_kind = o->error_kind;
  rep->status = o->status;
  rep->server_port = o->server_port;
  rep->call_id = o->call_id;
  rep->client_id = o->client_id;
  rep->call_start = o->call_start_unix_ns;
  rep->start = o->start_unix_ns;
  rep->end = o->end_unix_ns;
  rep->duration = o->duration_ns;
  rep->rate_limit_wait = o->rate_limit_wait_ns;
  rep->retry_wait = o->retry_wait_ns;
  rep->has_headers = headers != NULL;
  rep->propagate = o->propagate_trace_context;
  keep(r, rep->operation, sizeof rep->operation, o->operation);
  keep(r, rep->method, sizeof rep->method, o->method);
  keep(r, rep->url_template, sizeof rep->url_template, o->url_template);
  keep(r, rep->url_full, sizeof rep->url_full, o->url_full);
  keep(r, rep->server_address, sizeof rep->server_address, o->server_address);
  keep(r, rep->error_type, sizeof rep->error_type, o->error_type);
  keep(r, rep->retry_reason, sizeof rep->retry_reason, o->retry_reason);
  {
    char scratch[64];
    keep(r, scratch, sizeof scratch, o->url_scheme);
    keep(r, scratch, sizeof scratch, o->protocol_version);
  }
  rep->event_count = o->event_count;
  CHECK((o->event_count == 0) == (o->events == NULL));
  for (i = 0; i < o->event_count; i++) {
    const roomchat_call_event *e = o->events[i];
    char scratch[TEXT];
    CHECK(e->struct_size == sizeof(roomchat_call_event));
    if (i >= 4) continue;
    rep->event_kind[i] = e->kind;
    rep->event_wait[i] = e->wait_ns;
    rep->event_status[i] = e->status;
    keep(r, rep->event_name[i], sizeof rep->event_name[i], e->name);
    keep(r, rep->event_reason[i], sizeof rep->event_reason[i], e->retry_reason);
    keep(r, scratch, sizeof scratch, e->error_type);
    keep(r, scratch, sizeof scratch, e->error_message);
  }
  if (headers) {
    if (r->set_name) r->set_code = roomchat_attempt_headers_set(headers, r->set_name, r->set_value, NULL);
    if (r->refused_name) {
      roomchat_error *err = NULL;
      r->refused_code = roomchat_attempt_headers_set(headers, r->refused_name, "1", &err);
      snprintf(r->refused_message, sizeof r->refused_message, "%s", err ? roomchat_error_message(err) : "");
      roomchat_error_free(err);
    }
  }
}

static void destroyed(void *user_data) { ((recorder *)user_data)->destroyed++; }

/* ---- helpers ------------------------------------------------------------------------ */

static roomchat_client_options *options_for(recorder *r) {
  roomchat_client_options *options = NULL;
  CHECK(roomchat_client_options_new(emu.private_key, &options, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_client_options_set_base_url(options, emu.base_url);
  roomchat_client_options_set_public_key(options, emu.public_key);
  if (r) CHECK(roomchat_client_options_set_observer_with_destroy(options, record, r, destroyed) == ROOMCHAT_RESULT_OK);
  return options;
}

static roomchat_client *client_from(roomchat_client_options *options) {
  roomchat_client *client = NULL;
  roomchat_error *err = NULL;
  CHECK(roomchat_client_new(options, &client, &err) == ROOMCHAT_RESULT_OK);
  if (err) fprintf(stderr, "  client: %s\n", roomchat_error_message(err));
  roomchat_error_free(err);
  roomchat_client_options_free(options);
  return client;
}

static int list_users(roomchat_client *client) {
  roomchat_user_page *page = NULL;
  roomchat_result r = roomchat_client_list_users(client, 5, 0, &page, NULL);
  roomchat_user_page_free(page);
  return r;
}

static void add_fault(const char *body) { CHECK(http_request(&emu, "POST", "/_emulator/faults", body, NULL) == 200); }
static void clear_journal(void) { CHECK(http_request(&emu, "DELETE", "/_emulator/journal", NULL, NULL) == 200); }

static int journal_count(const char *needle) {
  char *journal = NULL;
  int count;
  CHECK(http_request(&emu, "GET", "/_emulator/journal", NULL, &journal) == 200);
  count = journal ? count_occurrences(journal, needle) : -1;
  free(journal);
  return count;
}

static int same(const char *a, const char *b) { return strcmp(a, b) == 0; }

static uint64_t now_unix_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- the tests ---------------------------------------------------------------------- */

/* One call that succeeds: attempt start, attempt end, call end, with the call's fields. */
static void test_a_call_that_succeeds(void) {
  static recorder r;
  uint64_t before = now_unix_ns(), after;
  roomchat_client *client = client_from(options_for(&r));
  const report *start = &r.reports[0], *end = &r.reports[1], *call = &r.reports[2];
  CHECK(list_users(client) == ROOMCHAT_RESULT_OK);
  after = now_unix_ns();
  CHECK(r.count == 3);
  CHECK(start->kind == ROOMCHAT_OBSERVATION_KIND_ATTEMPT_START && start->attempt == 1 && start->resend_count == 0);
  CHECK(start->has_headers && start->propagate && start->status == 0 && start->end == 0);
  CHECK(end->kind == ROOMCHAT_OBSERVATION_KIND_ATTEMPT_END && end->attempt == 1 && !end->has_headers);
  CHECK(end->status == 200 && end->error_kind == ROOMCHAT_RESULT_OK && end->error_type[0] == '\0');
  CHECK(end->retry_reason[0] == '\0' && end->event_count == 0);
  CHECK(call->kind == ROOMCHAT_OBSERVATION_KIND_CALL_END && call->attempt == 1 && call->status == 200);
  CHECK(call->error_kind == ROOMCHAT_RESULT_OK && call->rate_limit_wait == 0 && call->retry_wait == 0);
  for (int i = 0; i < 3; i++) {
    const report *rep = &r.reports[i];
    CHECK(same(rep->operation, "list_users") && same(rep->method, "GET"));
    CHECK(same(rep->url_template, "/consumer/api/v2/users"));
    CHECK(strstr(rep->url_full, "/consumer/api/v2/users?") != NULL && strstr(rep->url_full, "auth=REDACTED") != NULL);
    CHECK(same(rep->server_address, "127.0.0.1") && rep->server_port == emu.port);
    CHECK(rep->call_id == start->call_id && rep->client_id == start->client_id && rep->call_id > 0);
    CHECK(rep->call_start >= before && rep->call_start <= after);
  }
  /* The times: the attempt within the call, the durations measured. */
  CHECK(start->start >= start->call_start && end->start == start->start && end->end >= end->start);
  CHECK(end->duration > 0 && end->duration <= end->end - start->call_start + 1000000);
  CHECK(call->start == call->call_start && call->end >= end->end && call->end <= after);
  CHECK(call->duration >= end->duration);
  /* Another call: another id. */
  CHECK(list_users(client) == ROOMCHAT_RESULT_OK);
  CHECK(r.count == 6 && r.reports[3].call_id != start->call_id);
  /* The server as the reports name it, known before any call (a binding counts a call in flight from its dispatch). */
  {
    char *address = NULL;
    uint16_t port = 0;
    CHECK(roomchat_client_server(client, &address, &port) == ROOMCHAT_RESULT_OK);
    CHECK(address != NULL && same(address, start->server_address) && port == start->server_port);
    roomchat_string_free(address);
    CHECK(roomchat_client_server(NULL, &address, &port) == ROOMCHAT_RESULT_INVALID_ARGUMENT);
    CHECK(roomchat_client_server(client, NULL, &port) == ROOMCHAT_RESULT_INVALID_ARGUMENT);
    CHECK(roomchat_client_server(client, &address, NULL) == ROOMCHAT_RESULT_INVALID_ARGUMENT);
  }
  roomchat_client_free(client);
  CHECK(r.destroyed == 1);
}

/* A 429 then a 200: two attempts, the second resent once, the retry told at the first's end. */
static void test_a_429_then_a_200(void) {
  static recorder r;
  roomchat_client *client = client_from(options_for(&r));
  const report *first_end = &r.reports[1], *second = &r.reports[2], *second_end = &r.reports[3],
               *call = &r.reports[4];
  clear_journal();
  add_fault("{\"method\": \"GET\", \"path\": \"/consumer/api/v2/users\", \"times\": 1, \"action\": {\"kind\": "
            "\"respond\", \"status\": 429, \"headers\": {\"Retry-After\": \"0\"}, \"body\": "
            "\"{\\\"message\\\": \\\"slow down\\\"}\"}}");
  CHECK(list_users(client) == ROOMCHAT_RESULT_OK);
  CHECK(journal_count("\"path\":\"/consumer/api/v2/users\"") == 2);
  CHECK(r.count == 5);
  CHECK(r.reports[0].kind == ROOMCHAT_OBSERVATION_KIND_ATTEMPT_START && r.reports[0].attempt == 1);
  CHECK(first_end->kind == ROOMCHAT_OBSERVATION_KIND_ATTEMPT_END && first_end->status == 429);
  CHECK(first_end->error_kind == ROOMCHAT_RESULT_RATE_LIMITED && same(first_end->error_type, "rate_limited"));
  CHECK(same(first_end->retry_reason, "429") && first_end->event_count == 1);
  CHECK(first_end->event_kind[0] == ROOMCHAT_CALL_EVENT_KIND_RETRY && same(first_end->event_name[0], "roomchat.retry"));
  CHECK(same(first_end->event_reason[0], "429") && first_end->event_status[0] == 429);
  CHECK(second->kind == ROOMCHAT_OBSERVATION_KIND_ATTEMPT_START && second->attempt == 2 && second->resend_count == 1);
  CHECK(second_end->status == 200 && second_end->resend_count == 1 && second_end->error_kind == ROOMCHAT_RESULT_OK);
  CHECK(call->kind == ROOMCHAT_OBSERVATION_KIND_CALL_END && call->attempt == 2 && call->resend_count == 1);
  CHECK(call->status == 200 && call->error_kind == ROOMCHAT_RESULT_OK && call->error_type[0] == '\0');
  CHECK(call->retry_wait == first_end->event_wait[0]);
  roomchat_client_free(client);
  CHECK(r.destroyed == 1);
}

/* An error: its kind and status, at the attempt's end and the call's. */
static void test_an_error(void) {
  static recorder r;
  roomchat_client *client = client_from(options_for(&r));
  roomchat_room *room = NULL;
  CHECK(roomchat_client_get_chat_room(client, "no-such-room", &room, NULL) == ROOMCHAT_RESULT_NOT_FOUND);
  CHECK(r.count == 3);
  CHECK(same(r.reports[0].operation, "get_chat_room"));
  CHECK(same(r.reports[0].url_template, "/consumer/api/v1/chatroom/{roomId}"));
  CHECK(strstr(r.reports[0].url_full, "/consumer/api/v1/chatroom/no-such-room") != NULL);
  CHECK(r.reports[1].status == 404 && r.reports[1].error_kind == ROOMCHAT_RESULT_NOT_FOUND);
  CHECK(same(r.reports[1].error_type, "not_found") && r.reports[1].retry_reason[0] == '\0');
  CHECK(r.reports[2].kind == ROOMCHAT_OBSERVATION_KIND_CALL_END && r.reports[2].status == 404);
  CHECK(r.reports[2].error_kind == ROOMCHAT_RESULT_NOT_FOUND && same(r.reports[2].error_type, "not_found"));
  CHECK(same(r.reports[2].error_type, roomchat_result_name(ROOMCHAT_RESULT_NOT_FOUND)));
  roomchat_client_free(client);
}

/* A call that waits for the rate budget: the wait in the call's end and in an event at its attempt's start. */
static void test_a_rate_limit_wait(void) {
  static recorder r;
  roomchat_client_options *options = options_for(&r);
  roomchat_client *client;
  const report *waited, *call;
  /* One request per 300 ms, waiting for a slot. */
  CHECK(roomchat_client_options_set_rate_limit(options, 1, 300, false, 5000) == ROOMCHAT_RESULT_OK);
  client = client_from(options);
  CHECK(list_users(client) == ROOMCHAT_RESULT_OK);
  CHECK(list_users(client) == ROOMCHAT_RESULT_OK);
  CHECK(r.count == 6);
  waited = &r.reports[3];
  call = &r.reports[5];
  CHECK(waited->kind == ROOMCHAT_OBSERVATION_KIND_ATTEMPT_START && waited->event_count >= 1);
  CHECK(waited->event_kind[0] == ROOMCHAT_CALL_EVENT_KIND_RATE_LIMIT_WAIT);
  CHECK(same(waited->event_name[0], "roomchat.rate_limit.wait") && waited->event_wait[0] > 100000000u);
  CHECK(call->kind == ROOMCHAT_OBSERVATION_KIND_CALL_END && call->rate_limit_wait >= waited->event_wait[0]);
  CHECK(call->rate_limit_wait > 100000000u && call->duration >= call->rate_limit_wait);
  printf("  a call waited %.0f ms for the rate budget\n", call->rate_limit_wait / 1e6);
  roomchat_client_free(client);
  /* Back to the default budget for the key (it is shared by the clients of a key). */
  roomchat_client_free(client_from(options_for(NULL)));
}

/* Headers from the client and from an attempt's start, as the emulator saw them; the
 * observer's wins over the client's of the same name; refused ones. */
static void test_headers(void) {
  static recorder r;
  roomchat_client_options *options = options_for(&r);
  roomchat_client *client = NULL;
  roomchat_error *err = NULL;
  CHECK(roomchat_client_options_add_header(options, "X-Team", "payments") == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_client_options_add_header(options, "x-attempt", "from the client") == ROOMCHAT_RESULT_OK);
  r.set_name = "x-attempt";
  r.set_value = "from the observer";
  r.refused_name = "Content-Length";
  client = client_from(options);
  clear_journal();
  CHECK(list_users(client) == ROOMCHAT_RESULT_OK);
  CHECK(r.set_code == ROOMCHAT_RESULT_OK);
  CHECK(journal_count("[\"x-team\",\"payments\"]") == 1);
  CHECK(journal_count("[\"x-attempt\",\"from the observer\"]") == 1);
  CHECK(journal_count("from the client") == 0);
  /* Refused at the attempt: a typed error with the reason, nothing sent for it. */
  CHECK(r.refused_code == ROOMCHAT_RESULT_VALIDATION && strstr(r.refused_message, "content-length") != NULL);
  CHECK(journal_count("[\"content-length\",\"1\"]") == 0);
  CHECK(roomchat_attempt_headers_set(NULL, "x-a", "b", NULL) == ROOMCHAT_RESULT_INVALID_ARGUMENT);
  roomchat_client_free(client);
  client = NULL;

  /* Refused on the client: a reserved name, CR LF in a value, a name that is no token, non-ASCII, NULL. */
  options = options_for(NULL);
  CHECK(roomchat_client_options_add_header(options, "Host", "evil.example") == ROOMCHAT_RESULT_VALIDATION);
  CHECK(roomchat_client_options_add_header(options, "x-ok", "fine") == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_client_new(options, &client, &err) == ROOMCHAT_RESULT_INVALID_ARGUMENT);
  CHECK(err != NULL && strstr(roomchat_error_message(err), "host") != NULL && client == NULL);
  if (err) printf("  a refused header: %s\n", roomchat_error_message(err));
  roomchat_error_free(err);
  err = NULL;
  roomchat_client_options_free(options);
  options = options_for(NULL);
  CHECK(roomchat_client_options_add_header(options, "x-bad", "a\r\nHost: evil") == ROOMCHAT_RESULT_VALIDATION);
  CHECK(roomchat_client_options_add_header(options, "bad name", "v") == ROOMCHAT_RESULT_VALIDATION);
  CHECK(roomchat_client_options_add_header(options, "x-bad", "caf\xc3\xa9") == ROOMCHAT_RESULT_VALIDATION);
  CHECK(roomchat_client_options_add_header(options, NULL, "v") == ROOMCHAT_RESULT_INVALID_ARGUMENT);
  CHECK(roomchat_client_options_add_header(NULL, "x-a", "v") == ROOMCHAT_RESULT_INVALID_ARGUMENT);
  CHECK(roomchat_client_new(options, &client, NULL) == ROOMCHAT_RESULT_INVALID_ARGUMENT && client == NULL);
  roomchat_client_options_free(options);
}

/* Trace context: sent from the client's headers and the observer's, or not at all when turned off. */
static void test_trace_context_switch(void) {
  static recorder on, off;
  const char *client_tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
  const char *attempt_tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  roomchat_client_options *options = options_for(&on);
  roomchat_client *client;
  CHECK(roomchat_client_options_add_header(options, "traceparent", client_tp) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_client_options_add_header(options, "baggage", "tenant=acme") == ROOMCHAT_RESULT_OK);
  on.set_name = "traceparent";
  on.set_value = attempt_tp;
  client = client_from(options);
  clear_journal();
  CHECK(list_users(client) == ROOMCHAT_RESULT_OK);
  CHECK(journal_count("[\"traceparent\",\"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\"]") == 1);
  CHECK(journal_count("[\"baggage\",\"tenant=acme\"]") == 1 && journal_count(client_tp) == 0);
  roomchat_client_free(client);

  options = options_for(&off);
  CHECK(roomchat_client_options_add_header(options, "traceparent", client_tp) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_client_options_add_header(options, "baggage", "tenant=acme") == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_client_options_add_header(options, "x-team", "payments") == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_client_options_set_propagate_trace_context(options, false) == ROOMCHAT_RESULT_OK);
  off.set_name = "traceparent";
  off.set_value = attempt_tp;
  client = client_from(options);
  clear_journal();
  CHECK(list_users(client) == ROOMCHAT_RESULT_OK);
  CHECK(off.count == 3 && off.reports[0].propagate == 0 && off.set_code == ROOMCHAT_RESULT_OK);
  CHECK(journal_count("\"traceparent\"") == 0 && journal_count("\"baggage\"") == 0);
  CHECK(journal_count("[\"x-team\",\"payments\"]") == 1);
  roomchat_client_free(client);
  CHECK(roomchat_client_options_set_propagate_trace_context(NULL, false) == ROOMCHAT_RESULT_INVALID_ARGUMENT);
}

/* The destroy notifier: exactly once, when the last holder goes (an iterator outliving its
 * client); at once for a callback the options do not keep; on replacement. */
static void test_destroy_notifier(void) {
  static recorder a, b, c;
  roomchat_client_options *options = options_for(&a);
  roomchat_client *client = NULL;
  roomchat_users_iter *iter = NULL;
  roomchat_user *user = NULL;
  CHECK(roomchat_client_new(options, &client, NULL) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_client_users_iter(client, 5, &iter, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_client_options_free(options);
  roomchat_client_free(client);
  CHECK(a.destroyed == 0);
  {
    roomchat_result next = roomchat_users_iter_next(iter, &user, NULL);
    CHECK(next == ROOMCHAT_RESULT_OK || next == ROOMCHAT_RESULT_ITERATION_DONE);
  }
  CHECK(a.count >= 3 && same(a.reports[0].operation, "list_users"));
  roomchat_user_free(user);
  roomchat_users_iter_free(iter);
  CHECK(a.destroyed == 1);

  /* Replaced: the first's notifier runs in the replacing call; the second's when the options go. */
  options = options_for(&b);
  CHECK(roomchat_client_options_set_observer_with_destroy(options, record, &c, destroyed) == ROOMCHAT_RESULT_OK);
  CHECK(b.destroyed == 1 && c.destroyed == 0);
  /* NULL turns it off; the replaced one's notifier runs, and NULL's own at once. */
  CHECK(roomchat_client_options_set_observer_with_destroy(options, NULL, &b, destroyed) == ROOMCHAT_RESULT_OK);
  CHECK(c.destroyed == 1 && b.destroyed == 2);
  client = client_from(options);
  CHECK(list_users(client) == ROOMCHAT_RESULT_OK && b.count == 0 && c.count == 0);
  roomchat_client_free(client);
  /* NULL options: the notifier runs before the call returns. */
  CHECK(roomchat_client_options_set_observer_with_destroy(NULL, record, &c, destroyed) ==
        ROOMCHAT_RESULT_INVALID_ARGUMENT);
  CHECK(c.destroyed == 2 && b.destroyed == 2 && a.destroyed == 1);
}

/* Percent-encodes `text` as a URL query encodes it (every byte but unreserved ones). */
static void url_encode(const char *text, char *out, size_t size) {
  size_t used = 0;
  for (; *text && used + 4 < size; text++) {
    unsigned char ch = (unsigned char)*text;
    if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || strchr("-._~", ch))
      out[used++] = (char)ch;
    else
      used += (size_t)snprintf(out + used, size - used, "%%%02X", ch);
  }
  out[used] = '\0';
}

/* No key, access token or password in any string the callback receives, in any form. */
static void test_no_secret(const char *emulator_binary) {
  static recorder r;
  emulator odd;
  const char *args[] = {"--private-key", PRIVATE_KEY, "--public-key", PUBLIC_KEY, NULL};
  roomchat_client_options *options = NULL;
  roomchat_client *client = NULL;
  roomchat_created_user *jon = NULL;
  roomchat_token_user *token_user = NULL;
  char query[512], redis_url[256], encoded[512], *body = NULL, *fault;
  const char *secrets[5];
  uint16_t status = 0;
  int i, degraded = 0;
  CHECK(emulator_start(&odd, emulator_binary, args));
  CHECK(strcmp(odd.private_key, PRIVATE_KEY) == 0);
  CHECK(roomchat_client_options_new(PRIVATE_KEY, &options, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_client_options_set_base_url(options, odd.base_url);
  roomchat_client_options_set_public_key(options, PUBLIC_KEY);
  roomchat_client_options_set_observer_with_destroy(options, record, &r, destroyed);
  roomchat_client_options_set_retries(options, 2, false);
  /* A proxy with a password (loopback is never proxied), and a shared budget whose Redis
   * is not there, its password odd too: the client falls back, and says so in an event. */
  roomchat_client_options_set_proxy(options, "http://me:" PROXY_PASSWORD "@10.255.255.1:3128");
  snprintf(redis_url, sizeof redis_url, "redis://:%s@127.0.0.1:1/0", REDIS_PASSWORD);
  roomchat_client_options_set_rate_limit_redis(options, redis_url);
  client = client_from(options);
  CHECK(client != NULL);
  CHECK(roomchat_client_create_user(client, "jon", ROOMCHAT_ROLE_REGULAR, NULL, NULL, &jon, NULL) ==
        ROOMCHAT_RESULT_OK);
  CHECK(jon != NULL);
  if (!jon) {
    roomchat_client_free(client);
    CHECK(emulator_stop(&odd));
    return;
  }
  CHECK(roomchat_client_validate_access_token(client, roomchat_created_user_access_token(jon), &token_user, NULL) ==
        ROOMCHAT_RESULT_OK);
  roomchat_token_user_free(token_user);
  /* The token in a query string. */
  snprintf(query, sizeof query, "[[\"accessToken\", \"%s\"]]", roomchat_created_user_access_token(jon));
  roomchat_client_raw_request(client, "GET", "/consumer/api/v1/user/accessToken/validate", query, NULL,
                              ROOMCHAT_RAW_AUTH_PUBLIC_KEY, &status, &body, NULL);
  roomchat_string_free(body);
  /* The service's error texts naming the secrets. */
  fault = (char *)malloc(2048);
  snprintf(fault, 2048,
           "{\"method\": \"GET\", \"path\": \"/consumer/api/v2/users\", \"times\": 1, \"action\": {\"kind\": "
           "\"respond\", \"status\": 500, \"body\": \"{\\\"message\\\": \\\"bad key %s / %s / %s\\\"}\"}}",
           PRIVATE_KEY, PUBLIC_KEY, roomchat_created_user_access_token(jon));
  CHECK(http_request(&odd, "POST", "/_emulator/faults", fault, NULL) == 200);
  free(fault);
  CHECK(list_users(client) == ROOMCHAT_RESULT_OK);
  roomchat_client_free(client);
  CHECK(emulator_stop(&odd));

  for (i = 0; i < r.count; i++)
    for (size_t e = 0; e < r.reports[i].event_count && e < 4; e++)
      degraded += r.reports[i].event_kind[e] == ROOMCHAT_CALL_EVENT_KIND_BUDGET_DEGRADED;
  CHECK(degraded >= 1);
  CHECK(strstr(r.seen, "REDACTED") != NULL && strstr(r.seen, "accessToken=REDACTED") != NULL);
  secrets[0] = PRIVATE_KEY;
  secrets[1] = PUBLIC_KEY;
  secrets[2] = roomchat_created_user_access_token(jon);
  secrets[3] = PROXY_PASSWORD;
  secrets[4] = REDIS_PASSWORD;
  for (i = 0; i < 5; i++) {
    url_encode(secrets[i], encoded, sizeof encoded);
    CHECK(strstr(r.seen, secrets[i]) == NULL);
    CHECK(strstr(r.seen, encoded) == NULL);
    if (strstr(r.seen, secrets[i]) || strstr(r.seen, encoded)) fprintf(stderr, "  secret %d seen in:\n%s", i, r.seen);
  }
  CHECK(r.destroyed == 1);
  roomchat_created_user_free(jon);
}

/* The guide's example, as printed: a traceparent per attempt, one line per attempt and per call. */
static void test_guide_example(const char *example) {
  int out[2], status = 0;
  pid_t pid;
  char output[4096], key_env[300], url_env[300];
  size_t used = 0;
  ssize_t n;
  char *tp;
  clear_journal();
  add_fault("{\"method\": \"GET\", \"path\": \"/consumer/api/v2/users\", \"times\": 1, \"action\": {\"kind\": "
            "\"respond\", \"status\": 429, \"headers\": {\"Retry-After\": \"0\"}}}");
  CHECK(pipe(out) == 0);
  snprintf(key_env, sizeof key_env, "ROOMCHAT_PRIVATE_KEY=%s", emu.private_key);
  snprintf(url_env, sizeof url_env, "ROOMCHAT_BASE_URL=%s", emu.base_url);
  pid = fork();
  if (pid == 0) {
    char *env[] = {key_env, url_env, NULL};
    char *argv[] = {(char *)example, NULL};
    dup2(out[1], 1);
    close(out[0]);
    execve(example, argv, env);
    _exit(127);
  }
  close(out[1]);
  while (used < sizeof output - 1 && ((n = read(out[0], output + used, sizeof output - 1 - used)) > 0 || errno == EINTR))
    if (n > 0) used += (size_t)n;
  output[used] = '\0';
  close(out[0]);
  CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  printf("  the guide's example printed:\n%s", output);
  CHECK(strstr(output, "attempt 1: GET /consumer/api/v2/users -> 429 rate_limited in ") != NULL);
  CHECK(strstr(output, ", retried for 429\n") != NULL);
  CHECK(strstr(output, "attempt 2: GET /consumer/api/v2/users -> 200 in ") != NULL);
  CHECK(strstr(output, "call roomchat list_users: 2 attempt(s), ok, ") != NULL);
  CHECK(strstr(output, " users\n") != NULL);
  /* Each attempt carried the traceparent it printed: one trace, two spans. */
  CHECK(journal_count("[\"x-team\",\"payments\"]") == 2);
  tp = strstr(output, "traceparent 00-");
  CHECK(tp != NULL);
  while (tp) {
    char needle[80];
    snprintf(needle, sizeof needle, "[\"traceparent\",\"%.55s\"]", tp + strlen("traceparent "));
    CHECK(journal_count(needle) == 1);
    tp = strstr(tp + 1, "traceparent 00-");
  }
}

int main(int argc, char **argv) {
  const char *args[] = {"--rate-limit", "100000/60s", NULL};
  struct timespec started, ended;
  if (argc < 3 || !emulator_start(&emu, argv[1], args)) {
    fprintf(stderr, "usage: %s <roomchat-emulator> <readme_observability>\n", argv[0]);
    return 2;
  }
  clock_gettime(CLOCK_MONOTONIC, &started);
  test_a_call_that_succeeds();
  test_a_429_then_a_200();
  test_an_error();
  test_headers();
  test_trace_context_switch();
  test_destroy_notifier();
  test_a_rate_limit_wait();
  test_guide_example(argv[2]);
  test_no_secret(argv[1]);
  CHECK(emulator_stop(&emu));
  clock_gettime(CLOCK_MONOTONIC, &ended);
  printf("observer: the tests took %.2f s\n",
         (double)(ended.tv_sec - started.tv_sec) + (double)(ended.tv_nsec - started.tv_nsec) / 1e9);
  printf("observer: %d passed, %d failed\n", harness_passed, harness_failed);
  return harness_failed == 0 ? 0 : 1;
}
