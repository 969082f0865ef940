/*
 * The rate budget shared through Redis, from C: a real redis-server (with a
 * password) on a free loopback port, two processes counting in one budget, the
 * state naming the backend, Redis killed under ROOMCHAT_REDIS_POLICY_FAIL_CLOSED
 * (a typed error, quickly, without the password in it), a bad policy value
 * refused, and a password in every form the redis crate parses shown in no
 * error and no output; given a Redis Cluster's and a Sentinel set-up's URLs
 * (run.sh starts them with tests/redis/topology.sh), one call through each and
 * their malformed forms refused at build. Prints "redis: N passed, M failed".
 *
 * Usage: test_redis <path to roomchat-emulator> [path to redis-server [cluster URL sentinel URL]]
 */
#include <fcntl.h>
#include <time.h>

#include "roomchat.h"
#include "harness.h"

#define PASSWORD "c-test-redis-password-31"

#include "redis_server.h"

/* A client of `emu` whose budget is in Redis at `redis_url`; Redis timeouts of `timeout_ms`. */
static roomchat_client *shared_client_waiting(const emulator *emu, const char *redis_url, uint32_t policy,
                                              uint32_t timeout_ms) {
  roomchat_client_options *options = NULL;
  roomchat_client *client = NULL;
  roomchat_error *err = NULL;
  roomchat_client_options_new(emu->private_key, &options, NULL);
  roomchat_client_options_set_base_url(options, emu->base_url);
  roomchat_client_options_set_retries(options, 0, false);
  roomchat_client_options_set_rate_limit(options, 100, 60000, true, 0);
  roomchat_client_options_set_rate_limit_redis(options, redis_url);
  roomchat_client_options_set_redis_policy(options, policy, 0);
  roomchat_client_options_set_redis_timeouts(options, timeout_ms, timeout_ms, 300);
  if (roomchat_client_new(options, &client, &err) != ROOMCHAT_RESULT_OK) {
    fprintf(stderr, "client: %s\n", roomchat_error_message(err));
  }
  roomchat_error_free(err);
  roomchat_client_options_free(options);
  return client;
}

static roomchat_client *shared_client(const emulator *emu, const char *redis_url, uint32_t policy) {
  return shared_client_waiting(emu, redis_url, policy, 200);
}

static roomchat_result list_one(roomchat_client *client, roomchat_error **err) {
  roomchat_user_page *page = NULL;
  roomchat_result r = roomchat_client_list_users(client, 1, 0, &page, err);
  roomchat_user_page_free(page);
  return r;
}

/* Whether any string of `err` contains `secret`. */
static int error_shows(const roomchat_error *err, const char *secret) {
  const char *texts[4];
  int i;
  texts[0] = roomchat_error_message(err);
  texts[1] = roomchat_error_event_id(err);
  texts[2] = roomchat_error_method(err);
  texts[3] = roomchat_error_path(err);
  for (i = 0; i < 4; i++)
    if (texts[i] && strstr(texts[i], secret)) return 1;
  return 0;
}

#define SECRET "c-test-redis-secret-19"

/* Issue 19, defect 2: a Redis password in any form the redis crate parses (user
 * info; `pass=` in a unix-socket URL; and `password=`, which a reader would take
 * for one) appears in no error the C API returns, whether the client fails at
 * build or fails closed at a call, nor in anything written to stderr. */
static void test_password_never_shown(const emulator *emu) {
  struct {
    const char *format; /* %d: a loopback port nothing listens on */
    int builds;         /* 0: the URL itself is refused at build */
  } forms[] = {
      {"redis://:" SECRET "@127.0.0.1:%d/0", 1},
      {"redis://user:" SECRET "@127.0.0.1:%d/0", 1},
      {"rediss://:" SECRET "@127.0.0.1:%d/0", 1},
      {"valkey://user:" SECRET "@127.0.0.1:%d", 1},
      {"redis+unix:///tmp/roomchat-nonexistent-%d.sock?pass=" SECRET, 1},
      {"redis+unix:///tmp/roomchat-nonexistent-%d.sock?password=" SECRET, 1},
      {"redis+unix:///tmp/roomchat-nonexistent-%d.sock?db=1&user=u&pass=" SECRET, 1},
      {"unix:///tmp/roomchat-nonexistent-%d.sock?pass=" SECRET, 1},
      {"unix:///tmp/roomchat-nonexistent-%d.sock?password=" SECRET, 1},
      {"valkey+unix:///tmp/roomchat-nonexistent-%d.sock?pass=" SECRET, 1},
      {"redis://:" SECRET "@0.0.0.0:%d/0", 0},                             /* a wildcard address */
      {"redis+unix:///tmp/roomchat-nonexistent-%d.sock?db=x&pass=" SECRET, 0}, /* a bad db */
  };
  int results[sizeof forms / sizeof forms[0]][3]; /* build, first call, second call */
  int shown[sizeof forms / sizeof forms[0]];
  size_t n = sizeof forms / sizeof forms[0], i;
  int dead_port = free_port(), saved_stderr, leaked_to_stderr;
  char url[256], captured[8192];
  FILE *capture = tmpfile();
  size_t captured_len;

  /* Everything the library might write to stderr during these calls is kept and scanned. */
  fflush(stderr);
  saved_stderr = dup(2);
  dup2(fileno(capture), 2);
  for (i = 0; i < n; i++) {
    roomchat_client_options *options = NULL;
    roomchat_client *client = NULL;
    roomchat_error *err = NULL;
    snprintf(url, sizeof url, forms[i].format, dead_port);
    roomchat_client_options_new(emu->private_key, &options, NULL);
    roomchat_client_options_set_base_url(options, emu->base_url);
    roomchat_client_options_set_retries(options, 0, false);
    roomchat_client_options_set_rate_limit(options, 100, 60000, true, 0);
    roomchat_client_options_set_rate_limit_redis(options, url);
    roomchat_client_options_set_redis_policy(options, ROOMCHAT_REDIS_POLICY_FAIL_CLOSED, 0);
    roomchat_client_options_set_redis_timeouts(options, 200, 200, 300);
    results[i][0] = roomchat_client_new(options, &client, &err);
    shown[i] = err && error_shows(err, SECRET);
    roomchat_error_free(err);
    roomchat_client_options_free(options);
    results[i][1] = results[i][2] = -1;
    if (client) {
      /* the first call fails to connect; the second finds the breaker open */
      err = NULL;
      results[i][1] = list_one(client, &err);
      shown[i] |= err && error_shows(err, SECRET);
      roomchat_error_free(err);
      err = NULL;
      results[i][2] = list_one(client, &err);
      shown[i] |= err && error_shows(err, SECRET);
      roomchat_error_free(err);
      roomchat_client_free(client);
    }
  }
  fflush(stderr);
  dup2(saved_stderr, 2);
  close(saved_stderr);
  rewind(capture);
  captured_len = fread(captured, 1, sizeof captured - 1, capture);
  captured[captured_len] = '\0';
  fclose(capture);
  leaked_to_stderr = strstr(captured, SECRET) != NULL;
  if (captured_len) fprintf(stderr, "stderr during the calls:\n%s\n", captured);

  for (i = 0; i < n; i++) {
    int ok = !shown[i] && (forms[i].builds ? results[i][0] == ROOMCHAT_RESULT_OK &&
                                                 results[i][1] == ROOMCHAT_RESULT_BUDGET_UNAVAILABLE &&
                                                 results[i][2] == ROOMCHAT_RESULT_BUDGET_UNAVAILABLE
                                           : results[i][0] == ROOMCHAT_RESULT_CONFIGURATION);
    CHECK(ok);
    if (!ok)
      fprintf(stderr, "  form %d (%.*s...): build %s, calls %s, %s; password %s\n", (int)i,
              (int)(strstr(forms[i].format, SECRET) ? strstr(forms[i].format, SECRET) - forms[i].format : 12),
              forms[i].format,
              roomchat_result_name((uint32_t)results[i][0]),
              results[i][1] < 0 ? "-" : roomchat_result_name((uint32_t)results[i][1]),
              results[i][2] < 0 ? "-" : roomchat_result_name((uint32_t)results[i][2]),
              shown[i] ? "SHOWN in an error" : "not shown");
  }
  CHECK(!leaked_to_stderr);
}

/* Issue 31: a call through a Redis Cluster and one through Sentinel count in Redis
 * (not degraded); the malformed forms of their URLs are refused at build with
 * ROOMCHAT_RESULT_CONFIGURATION. */
static void test_topologies(const emulator *emu, const char *cluster_url, const char *sentinel_url) {
  const char *urls[2];
  const char *bad[] = {
      "redis+cluster://",                                   /* no seeds */
      "redis+cluster:///tmp/roomchat-cluster.sock",         /* a unix socket */
      "redis+cluster://127.0.0.1:7000/3",                   /* a database other than 0 */
      "redis+sentinel://127.0.0.1:1",                       /* no service name */
      "rediss+sentinel://127.0.0.1:26379/?sentinel_password=x", /* an empty service name */
  };
  size_t i;
  urls[0] = cluster_url;
  urls[1] = sentinel_url;
  for (i = 0; i < 2; i++) {
    /* Timeouts of 2 s: the servers share a loaded machine with the rest of the run. */
    roomchat_client *client = shared_client_waiting(emu, urls[i], ROOMCHAT_REDIS_POLICY_FAIL_CLOSED, 2000);
    roomchat_rate_limit_state state;
    roomchat_error *err = NULL;
    roomchat_result r;
    CHECK(client != NULL);
    if (!client) continue;
    r = list_one(client, &err);
    CHECK(r == ROOMCHAT_RESULT_OK);
    if (r != ROOMCHAT_RESULT_OK)
      fprintf(stderr, "  through the %s: %s\n", i == 0 ? "cluster" : "sentinels", roomchat_error_message(err));
    roomchat_error_free(err);
    CHECK(roomchat_client_rate_limit_state(client, &state) == ROOMCHAT_RESULT_OK);
    CHECK(state.backend == ROOMCHAT_BUDGET_BACKEND_REDIS);
    CHECK(!state.degraded);
    roomchat_client_free(client);
  }
  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    roomchat_client_options *options = NULL;
    roomchat_client *none = NULL;
    roomchat_error *err = NULL;
    roomchat_result r;
    roomchat_client_options_new(emu->private_key, &options, NULL);
    roomchat_client_options_set_base_url(options, emu->base_url);
    roomchat_client_options_set_rate_limit_redis(options, bad[i]);
    r = roomchat_client_new(options, &none, &err);
    CHECK(r == ROOMCHAT_RESULT_CONFIGURATION && none == NULL);
    if (r != ROOMCHAT_RESULT_CONFIGURATION) fprintf(stderr, "  %s: %s\n", bad[i], roomchat_result_name(r));
    roomchat_client_free(none);
    roomchat_error_free(err);
    roomchat_client_options_free(options);
  }
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  emulator emu;
  const char *args[] = {"--port", "0", "--rate-limit", "100000/60s", "--seed-users", "3", NULL};
  const char *redis_binary = argc > 2 ? argv[2] : "redis-server";
  char url[256];
  int port, i, status = 0;
  roomchat_client *client;
  roomchat_rate_limit_state state;
  roomchat_error *err = NULL;
  pid_t child;
  if (argc < 2) {
    fprintf(stderr, "usage: %s <roomchat-emulator> [redis-server]\n", argv[0]);
    return 2;
  }
  alarm(120);
  if (!emulator_start(&emu, argv[1], args)) return 2;
  test_password_never_shown(&emu);
  if (argc > 4) test_topologies(&emu, argv[3], argv[4]);
  port = free_port();
  CHECK(redis_start(redis_binary, port, PASSWORD));
  snprintf(url, sizeof url, "redis://:%s@127.0.0.1:%d/0", PASSWORD, port);

  /* Two processes, one budget: the parent's 3 starts and the child's 2 count in one window. */
  client = shared_client(&emu, url, ROOMCHAT_REDIS_POLICY_FAIL_CLOSED);
  CHECK(client != NULL);
  for (i = 0; i < 3; i++) CHECK(list_one(client, NULL) == ROOMCHAT_RESULT_OK);
  child = fork();
  if (child == 0) {
    int ok = list_one(client, NULL) == ROOMCHAT_RESULT_OK;
    roomchat_client *own = shared_client(&emu, url, ROOMCHAT_REDIS_POLICY_FAIL_CLOSED);
    ok = ok && own && list_one(own, NULL) == ROOMCHAT_RESULT_OK;
    _exit(ok ? 0 : 1);
  }
  CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  /* The state does no I/O: it shows what the parent's last round trip learned,
     so one more call brings in the child's 2 starts (and its own). */
  CHECK(list_one(client, NULL) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_client_rate_limit_state(client, &state) == ROOMCHAT_RESULT_OK);
  CHECK(state.backend == ROOMCHAT_BUDGET_BACKEND_REDIS);
  CHECK(!state.degraded);
  CHECK(state.used == 6);
  CHECK(state.limit == 98);

  /* Redis killed: fail closed, quickly, with a typed error and no password in it. */
  redis_kill();
  {
    double started = now_s();
    roomchat_result r = list_one(client, &err);
    CHECK(now_s() - started < 1.0);
    CHECK(r == ROOMCHAT_RESULT_BUDGET_UNAVAILABLE);
    CHECK(err != NULL && roomchat_error_code(err) == ROOMCHAT_RESULT_BUDGET_UNAVAILABLE);
    CHECK(err != NULL && strstr(roomchat_error_message(err), PASSWORD) == NULL);
    CHECK(err != NULL && strstr(roomchat_error_message(err), emu.private_key) == NULL);
    CHECK(strcmp(roomchat_result_name(ROOMCHAT_RESULT_BUDGET_UNAVAILABLE), "budget_unavailable") == 0);
    roomchat_error_free(err);
    err = NULL;
  }
  CHECK(roomchat_client_rate_limit_state(client, &state) == ROOMCHAT_RESULT_OK);
  CHECK(state.degraded);
  roomchat_client_free(client);

  /* A policy value outside roomchat_redis_policy is refused, not undefined behaviour. */
  {
    roomchat_client_options *options = NULL;
    roomchat_client *none = NULL;
    roomchat_client_options_new(emu.private_key, &options, NULL);
    roomchat_client_options_set_base_url(options, emu.base_url);
    CHECK(roomchat_client_options_set_redis_policy(options, 0, 0) == ROOMCHAT_RESULT_OK);
    CHECK(roomchat_client_new(options, &none, &err) == ROOMCHAT_RESULT_INVALID_ARGUMENT); /* no URL yet */
    roomchat_error_free(err);
    err = NULL;
    roomchat_client_options_free(options);
    roomchat_client_options_new(emu.private_key, &options, NULL);
    roomchat_client_options_set_base_url(options, emu.base_url);
    roomchat_client_options_set_rate_limit_redis(options, url);
    roomchat_client_options_set_redis_policy(options, 7, 0);
    CHECK(roomchat_client_new(options, &none, &err) == ROOMCHAT_RESULT_INVALID_ARGUMENT);
    CHECK(none == NULL);
    roomchat_error_free(err);
    roomchat_client_options_free(options);
  }

  CHECK(emulator_stop(&emu));
  printf("redis: %d passed, %d failed\n", harness_passed, harness_failed);
  return harness_failed == 0 ? 0 : 1;
}
