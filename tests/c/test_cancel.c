/*
 * The cancel token (roomchat_cancel_token, roomchat_call_options_set_cancel_token):
 * a call cancelled before it starts, with its request on the wire, while it waits
 * for the rate-limit budget and while it waits before a retry, from another thread
 * and from several at once; a create cancelled on the wire is never sent again, and
 * its error says its outcome is unknown (not one cancelled before it was sent, nor
 * a listing); an iterator of a cancellable view; a view of a view with another token.
 * Against the emulator binary, under valgrind (tests/c/run.sh). Each cancel is
 * made when the state it aims at is seen (the emulator's journal, the client's
 * log line), never after a guessed sleep.
 *
 * usage: test_cancel <path to roomchat-emulator>
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "harness.h"
#include "roomchat.h"

static emulator emu;

#define USERS_PATH "/consumer/api/v2/users"
#define CREATE_USER_PATH "/consumer/api/v1/user"

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1000.0 + (double)t.tv_nsec / 1e6;
}

static void pause_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

static void add_fault(const char *spec) { CHECK(http_request(&emu, "POST", "/_emulator/faults", spec, NULL) == 200); }

static void clear_faults(void) { CHECK(http_request(&emu, "DELETE", "/_emulator/faults", NULL, NULL) == 200); }

static void clear_journal(void) { CHECK(http_request(&emu, "DELETE", "/_emulator/journal", NULL, NULL) == 200); }

/* How many requests of `method` to `path` the journal holds (a request is journalled on arrival). */
static int arrivals(const char *method, const char *path) {
  char *journal = NULL, needle[256];
  int count;
  if (http_request(&emu, "GET", "/_emulator/journal", NULL, &journal) != 200) return -1;
  snprintf(needle, sizeof needle, "\"method\":\"%s\",\"path\":\"%s\"", method, path);
  count = journal ? count_occurrences(journal, needle) : -1;
  free(journal);
  return count;
}

/* The client's warning lines seen so far: a retry's and a budget wait's, set by the log callback. */
static atomic_int retry_lines, budget_wait_lines;

static void on_line(void *user_data, roomchat_log_level level, const char *line) {
  (void)user_data;
  if (level != ROOMCHAT_LOG_LEVEL_WARNING) return;
  if (strncmp(line, "retrying ", 9) == 0) atomic_fetch_add(&retry_lines, 1);
  if (strncmp(line, "waiting ", 8) == 0) atomic_fetch_add(&budget_wait_lines, 1);
}

/* A client of `key` with `retries` retries and a budget of `per_minute` calls (every
   client of a key in the process shares one budget). */
static roomchat_client *make_client_of(const char *key, uint32_t retries, uint32_t per_minute) {
  roomchat_client_options *options = NULL;
  roomchat_client *client = NULL;
  CHECK(roomchat_client_options_new(key, &options, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_client_options_set_base_url(options, emu.base_url);
  if (emu.ca_pem) roomchat_client_options_set_ca_pem(options, emu.ca_pem);
  roomchat_client_options_set_public_key(options, emu.public_key);
  roomchat_client_options_set_retries(options, retries, false);
  roomchat_client_options_set_rate_limit(options, per_minute, 60000, false, 120000);
  CHECK(roomchat_client_options_set_log_callback(options, on_line, NULL, ROOMCHAT_LOG_LEVEL_WARNING) ==
        ROOMCHAT_RESULT_OK);
  CHECK(roomchat_client_new(options, &client, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_client_options_free(options);
  return client;
}

static roomchat_client *make_client(uint32_t retries, uint32_t per_minute) {
  return make_client_of(emu.private_key, retries, per_minute);
}

/* A view of `client` whose calls `token` cancels. */
static roomchat_client *cancellable(const roomchat_client *client, const roomchat_cancel_token *token) {
  roomchat_call_options *options = NULL;
  roomchat_client *view = NULL;
  CHECK(roomchat_call_options_new(&options) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_call_options_set_cancel_token(options, token) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_client_with_options(client, options, &view, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_call_options_free(options);
  return view;
}

/* The canceller: waits for `reached()` (the state the test aims at), then cancels and notes when. */
typedef struct {
  roomchat_cancel_token *token;
  int (*reached)(void);
  double cancelled_at;
  int saw_state;
} canceller;

static void *cancel_when_reached(void *arg) {
  canceller *c = arg;
  const double give_up = now_ms() + 60000;
  while (!(c->saw_state = c->reached()) && now_ms() < give_up) pause_ms(5);
  c->cancelled_at = now_ms();
  roomchat_cancel_token_cancel(c->token);
  return NULL;
}

static int users_request_arrived(void) { return arrivals("GET", USERS_PATH) >= 1; }
static int create_arrived(void) { return arrivals("POST", CREATE_USER_PATH) >= 1; }
static int retry_logged(void) { return atomic_load(&retry_lines) >= 1; }
static int budget_wait_logged(void) { return atomic_load(&budget_wait_lines) >= 1; }

/* Runs `list_users` on a view cancelled when `reached()`; checks CANCELLED and returns the latency. */
static double cancelled_list_users(roomchat_client *client, int (*reached)(void), const char *what) {
  roomchat_cancel_token *token = NULL;
  roomchat_client *view;
  roomchat_user_page *page = NULL;
  roomchat_error *err = NULL;
  canceller c = {NULL, reached, 0, 0};
  pthread_t thread;
  double returned, latency;
  CHECK(roomchat_cancel_token_new(&token) == ROOMCHAT_RESULT_OK);
  c.token = token;
  view = cancellable(client, token);
  CHECK(pthread_create(&thread, NULL, cancel_when_reached, &c) == 0);
  CHECK(roomchat_client_list_users(view, 0, 0, &page, &err) == ROOMCHAT_RESULT_CANCELLED);
  returned = now_ms();
  pthread_join(thread, NULL);
  CHECK(c.saw_state);
  CHECK(page == NULL);
  CHECK(err != NULL && roomchat_error_code(err) == ROOMCHAT_RESULT_CANCELLED);
  CHECK(err != NULL && strstr(roomchat_error_message(err), "cancelled") != NULL);
  /* A list is sent again freely: its message claims no unknown outcome. */
  CHECK(err != NULL && strstr(roomchat_error_message(err), "outcome is unknown") == NULL);
  CHECK(roomchat_cancel_token_is_cancelled(token));
  latency = returned - c.cancelled_at;
  /* Prompt: the figure is printed; the bound only tells "cancelled" from "ran its course" (8 s). */
  printf("cancel: %s: returned %.1f ms after the cancel\n", what, latency);
  CHECK(latency < 5000);
  roomchat_error_free(err);
  roomchat_client_free(view);
  roomchat_cancel_token_free(token);
  return latency;
}

static void test_cancelled_before_the_call(void) {
  roomchat_client *client = make_client(2, 100000), *view;
  roomchat_cancel_token *token = NULL;
  roomchat_user_page *page = NULL;
  roomchat_error *err = NULL;
  clear_journal();
  CHECK(roomchat_cancel_token_new(&token) == ROOMCHAT_RESULT_OK);
  CHECK(!roomchat_cancel_token_is_cancelled(token));
  view = cancellable(client, token);
  roomchat_cancel_token_cancel(token);
  roomchat_cancel_token_cancel(token); /* again: nothing more */
  CHECK(roomchat_client_list_users(view, 0, 0, &page, &err) == ROOMCHAT_RESULT_CANCELLED);
  CHECK(page == NULL);
  CHECK(arrivals("GET", USERS_PATH) == 0); /* nothing was sent */
  roomchat_error_free(err);
  /* The client itself carries no token: its calls go on. */
  CHECK(roomchat_client_list_users(client, 0, 0, &page, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_user_page_free(page);
  roomchat_client_free(view);
  roomchat_cancel_token_free(token);
  roomchat_client_free(client);
}

static void test_cancelled_on_the_wire(void) {
  roomchat_client *client = make_client(2, 100000);
  clear_journal();
  add_fault("{\"method\": \"GET\", \"path\": \"" USERS_PATH "\", \"action\": {\"kind\": \"delay\", \"ms\": 8000}}");
  cancelled_list_users(client, users_request_arrived, "a request on the wire");
  CHECK(arrivals("GET", USERS_PATH) == 1); /* and not sent again */
  clear_faults();
  roomchat_client_free(client);
}

static void test_cancelled_in_a_retry_wait(void) {
  roomchat_client *client = make_client(3, 100000);
  clear_journal();
  atomic_store(&retry_lines, 0);
  /* A 503 with a long Retry-After: the client sleeps before its retry. */
  add_fault("{\"method\": \"GET\", \"path\": \"" USERS_PATH "\", \"action\": {\"kind\": \"respond\", \"status\": 503, "
            "\"headers\": {\"Retry-After\": \"30\"}}}");
  cancelled_list_users(client, retry_logged, "a wait before a retry");
  CHECK(arrivals("GET", USERS_PATH) == 1); /* the retry never went */
  clear_faults();
  roomchat_client_free(client);
}

static void test_cancelled_in_a_budget_wait(void) {
  /* One call a minute, for a key of its own (whose calls the emulator refuses, 401):
     the first takes the budget, the second waits for it. */
  roomchat_client *client = make_client_of("sk_c_cancel_budget", 0, 1);
  roomchat_user_page *page = NULL;
  clear_journal();
  atomic_store(&budget_wait_lines, 0);
  CHECK(roomchat_client_list_users(client, 0, 0, &page, NULL) == ROOMCHAT_RESULT_INVALID_AUTH);
  CHECK(arrivals("GET", USERS_PATH) == 1);
  cancelled_list_users(client, budget_wait_logged, "a wait for the rate-limit budget");
  CHECK(arrivals("GET", USERS_PATH) == 1);
  roomchat_client_free(client);
}

/* A create cancelled with its request on the wire: cancelled, never sent again, though retries are on. */
static void test_create_cancelled_on_the_wire(void) {
  roomchat_client *client = make_client(3, 100000), *view;
  roomchat_cancel_token *token = NULL;
  roomchat_created_user *created = NULL;
  roomchat_error *err = NULL;
  canceller c = {NULL, create_arrived, 0, 0};
  pthread_t thread;
  clear_journal();
  add_fault("{\"method\": \"POST\", \"path\": \"" CREATE_USER_PATH "\", \"action\": {\"kind\": \"delay\", \"ms\": 8000}}");
  CHECK(roomchat_cancel_token_new(&token) == ROOMCHAT_RESULT_OK);
  c.token = token;
  view = cancellable(client, token);
  CHECK(pthread_create(&thread, NULL, cancel_when_reached, &c) == 0);
  CHECK(roomchat_client_create_user(view, "cancelled-create", ROOMCHAT_ROLE_REGULAR, NULL, NULL, &created, &err) ==
        ROOMCHAT_RESULT_CANCELLED);
  pthread_join(thread, NULL);
  CHECK(c.saw_state);
  CHECK(created == NULL);
  CHECK(err != NULL && roomchat_error_code(err) == ROOMCHAT_RESULT_CANCELLED);
  /* The guide's promise: the caller is told the create may have happened. */
  CHECK(err != NULL && strstr(roomchat_error_message(err), "outcome is unknown") != NULL);
  if (err) printf("cancel: a create on the wire: %s\n", roomchat_error_message(err));
  CHECK(arrivals("POST", CREATE_USER_PATH) == 1); /* sent once, never again */
  roomchat_error_free(err);
  clear_faults();
  roomchat_client_free(view);
  roomchat_cancel_token_free(token);
  roomchat_client_free(client);
}

/* A create cancelled before it is sent: nothing reached the service, and the message says no more. */
static void test_create_cancelled_before_it_is_sent(void) {
  roomchat_client *client = make_client(3, 100000), *view;
  roomchat_cancel_token *token = NULL;
  roomchat_created_user *created = NULL;
  roomchat_error *err = NULL;
  clear_journal();
  CHECK(roomchat_cancel_token_new(&token) == ROOMCHAT_RESULT_OK);
  view = cancellable(client, token);
  roomchat_cancel_token_cancel(token);
  CHECK(roomchat_client_create_user(view, "never-sent", ROOMCHAT_ROLE_REGULAR, NULL, NULL, &created, &err) ==
        ROOMCHAT_RESULT_CANCELLED);
  CHECK(err != NULL && strstr(roomchat_error_message(err), "outcome is unknown") == NULL);
  CHECK(arrivals("POST", CREATE_USER_PATH) == 0);
  roomchat_error_free(err);
  roomchat_client_free(view);
  roomchat_cancel_token_free(token);
  roomchat_client_free(client);
}

/* An iterator made from a cancellable view carries the token: a cancelled step
   returns CANCELLED (never ITERATION_DONE), and nothing is sent. */
static void test_iterator_of_a_cancellable_view(void) {
  roomchat_client *client = make_client(2, 100000), *view;
  roomchat_cancel_token *token = NULL;
  roomchat_users_iter *iter = NULL;
  roomchat_user *user = NULL;
  roomchat_error *err = NULL;
  roomchat_created_user *created = NULL;
  roomchat_result step;
  int i;
  /* Three users, a page of one each: the step after the cancel has a page to fetch. */
  for (i = 0; i < 3; i++) {
    char name[32];
    snprintf(name, sizeof name, "iter-user-%d", i);
    CHECK(roomchat_client_create_user(client, name, ROOMCHAT_ROLE_REGULAR, NULL, NULL, &created, NULL) ==
          ROOMCHAT_RESULT_OK);
    roomchat_created_user_free(created);
    created = NULL;
  }
  CHECK(roomchat_cancel_token_new(&token) == ROOMCHAT_RESULT_OK);
  view = cancellable(client, token);
  CHECK(roomchat_client_users_iter(view, 1, &iter, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_client_free(view); /* the iterator keeps its own reference */
  CHECK(roomchat_users_iter_next(iter, &user, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_user_free(user);
  user = NULL;
  clear_journal();
  roomchat_cancel_token_cancel(token);
  step = roomchat_users_iter_next(iter, &user, &err);
  if (step != ROOMCHAT_RESULT_CANCELLED) fprintf(stderr, "  the step after the cancel: %s\n", roomchat_result_name(step));
  CHECK(step == ROOMCHAT_RESULT_CANCELLED);
  CHECK(user == NULL && err != NULL);
  CHECK(arrivals("GET", USERS_PATH) == 0);
  roomchat_error_free(err);
  roomchat_users_iter_free(iter);
  roomchat_cancel_token_free(token);
  roomchat_client_free(client);
}

/* A view of a cancellable view, made with options carrying another token: its calls
   carry that token instead (the guide says so). */
static void test_view_of_a_view_with_another_token(void) {
  roomchat_client *client = make_client(2, 100000), *first, *second, *third = NULL;
  roomchat_cancel_token *one = NULL, *two = NULL;
  roomchat_call_options *plain = NULL;
  roomchat_user_page *page = NULL;
  CHECK(roomchat_cancel_token_new(&one) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_cancel_token_new(&two) == ROOMCHAT_RESULT_OK);
  first = cancellable(client, one);
  second = cancellable(first, two);
  /* Options without a token keep the first view's. */
  CHECK(roomchat_call_options_new(&plain) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_client_with_options(first, plain, &third, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_call_options_free(plain);
  roomchat_cancel_token_cancel(one);
  CHECK(roomchat_client_list_users(first, 0, 0, &page, NULL) == ROOMCHAT_RESULT_CANCELLED);
  CHECK(roomchat_client_list_users(third, 0, 0, &page, NULL) == ROOMCHAT_RESULT_CANCELLED);
  roomchat_client_free(third);
  CHECK(roomchat_client_list_users(second, 0, 0, &page, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_user_page_free(page);
  page = NULL;
  roomchat_cancel_token_cancel(two);
  CHECK(roomchat_client_list_users(second, 0, 0, &page, NULL) == ROOMCHAT_RESULT_CANCELLED);
  roomchat_client_free(second);
  roomchat_client_free(first);
  roomchat_cancel_token_free(one);
  roomchat_cancel_token_free(two);
  roomchat_client_free(client);
}

/* Several threads' calls on one token, cancelled from another: each returns CANCELLED. */
#define CALLERS 6

typedef struct {
  roomchat_client *view;
  roomchat_result result;
} caller;

static void *call_list_users(void *arg) {
  caller *c = arg;
  roomchat_user_page *page = NULL;
  c->result = roomchat_client_list_users(c->view, 0, 0, &page, NULL);
  roomchat_user_page_free(page);
  return NULL;
}

static int all_callers_arrived(void) { return arrivals("GET", USERS_PATH) >= CALLERS; }

static void test_one_token_many_threads(void) {
  roomchat_client *client = make_client(2, 100000);
  roomchat_cancel_token *token = NULL;
  caller callers[CALLERS];
  pthread_t threads[CALLERS], cancel_thread;
  canceller c = {NULL, all_callers_arrived, 0, 0};
  int i;
  clear_journal();
  /* Every caller's request is held (a fault applies once unless given `times`). */
  add_fault("{\"method\": \"GET\", \"path\": \"" USERS_PATH "\", \"times\": 100, \"action\": {\"kind\": \"delay\", "
            "\"ms\": 8000}}");
  CHECK(roomchat_cancel_token_new(&token) == ROOMCHAT_RESULT_OK);
  c.token = token;
  for (i = 0; i < CALLERS; i++) {
    /* Half share one view, half have a view each: the token is what they share. */
    callers[i].view = (i % 2 == 0 || i == 1) ? cancellable(client, token) : NULL;
    callers[i].result = ROOMCHAT_RESULT_OK;
  }
  for (i = 0; i < CALLERS; i++) {
    if (!callers[i].view) callers[i].view = cancellable(client, token);
    CHECK(pthread_create(&threads[i], NULL, call_list_users, &callers[i]) == 0);
  }
  CHECK(pthread_create(&cancel_thread, NULL, cancel_when_reached, &c) == 0);
  for (i = 0; i < CALLERS; i++) pthread_join(threads[i], NULL);
  pthread_join(cancel_thread, NULL);
  CHECK(c.saw_state);
  for (i = 0; i < CALLERS; i++) {
    CHECK(callers[i].result == ROOMCHAT_RESULT_CANCELLED);
    if (callers[i].result != ROOMCHAT_RESULT_CANCELLED) fprintf(stderr, "  caller %d: %s\n", i, roomchat_result_name(callers[i].result));
    roomchat_client_free(callers[i].view);
  }
  clear_faults();
  roomchat_cancel_token_free(token);
  roomchat_client_free(client);
}

/* The handle may go before the options and views, which keep their own reference. */
static void test_ownership_and_null(void) {
  roomchat_client *client = make_client(2, 100000), *view = NULL;
  roomchat_call_options *options = NULL;
  roomchat_cancel_token *token = NULL;
  roomchat_user_page *page = NULL;
  CHECK(roomchat_cancel_token_new(NULL) == ROOMCHAT_RESULT_INVALID_ARGUMENT);
  roomchat_cancel_token_cancel(NULL);
  CHECK(!roomchat_cancel_token_is_cancelled(NULL));
  roomchat_cancel_token_free(NULL);
  CHECK(roomchat_call_options_set_cancel_token(NULL, NULL) == ROOMCHAT_RESULT_INVALID_ARGUMENT);

  CHECK(roomchat_cancel_token_new(&token) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_call_options_new(&options) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_call_options_set_cancel_token(options, token) == ROOMCHAT_RESULT_OK);
  roomchat_cancel_token_cancel(token);
  roomchat_cancel_token_free(token); /* the options keep the token, cancelled */
  CHECK(roomchat_client_with_options(client, options, &view, NULL) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_client_list_users(view, 0, 0, &page, NULL) == ROOMCHAT_RESULT_CANCELLED);
  roomchat_client_free(view);
  view = NULL;
  /* NULL takes the token off the options: their next view's calls go on. */
  CHECK(roomchat_call_options_set_cancel_token(options, NULL) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_client_with_options(client, options, &view, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_call_options_free(options);
  CHECK(roomchat_client_list_users(view, 0, 0, &page, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_user_page_free(page);
  roomchat_client_free(view);
  roomchat_client_free(client);
}

int main(int argc, char **argv) {
  const int over_tls = harness_test_tls();
  const char *args[] = {over_tls ? "--tls" : NULL, NULL};
  if (argc < 2 || !emulator_start(&emu, argv[1], args)) {
    fprintf(stderr, "usage: %s <roomchat-emulator>\n", argv[0]);
    return 2;
  }
  test_cancelled_before_the_call();
  test_cancelled_on_the_wire();
  test_cancelled_in_a_retry_wait();
  test_cancelled_in_a_budget_wait();
  test_create_cancelled_on_the_wire();
  test_create_cancelled_before_it_is_sent();
  test_iterator_of_a_cancellable_view();
  test_view_of_a_view_with_another_token();
  test_one_token_many_threads();
  test_ownership_and_null();
  CHECK(emulator_stop(&emu));
  printf("cancel: %d passed, %d failed\n", harness_passed, harness_failed);
  return harness_failed == 0 ? 0 : 1;
}
