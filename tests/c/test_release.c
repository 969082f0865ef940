/*
 * Nothing is kept once everything is freed (issue 37, item 6): clients on ten
 * Redis URLs (ten databases of a real redis-server) and clients counting in
 * this process, each making a call, then all freed. Run under valgrind with
 * its defaults (`--leak-check=full`: "possibly lost" counts as an error), as a
 * C program that frees all it got must be clean. Prints "release: N passed, M failed".
 *
 * Usage: test_release <path to roomchat-emulator> <path to redis-server>
 */
#include <fcntl.h>

#include "roomchat.h"
#include "harness.h"

#include "redis_server.h"

/* A client of `emu`, its budget in Redis at `redis_url` (NULL: in this process). */
static roomchat_client *make_client(const emulator *emu, const char *redis_url) {
  roomchat_client_options *options = NULL;
  roomchat_client *client = NULL;
  roomchat_error *err = NULL;
  roomchat_client_options_new(emu->private_key, &options, NULL);
  roomchat_client_options_set_base_url(options, emu->base_url);
  if (redis_url) {
    roomchat_client_options_set_rate_limit_redis(options, redis_url);
    roomchat_client_options_set_redis_policy(options, ROOMCHAT_REDIS_POLICY_FAIL_CLOSED, 0);
    roomchat_client_options_set_redis_timeouts(options, 2000, 2000, 300);
  }
  if (roomchat_client_new(options, &client, &err) != ROOMCHAT_RESULT_OK) {
    fprintf(stderr, "client: %s\n", roomchat_error_message(err));
  }
  roomchat_error_free(err);
  roomchat_client_options_free(options);
  return client;
}

static int list_one(roomchat_client *client) {
  roomchat_user_page *page = NULL;
  roomchat_error *err = NULL;
  roomchat_result r = roomchat_client_list_users(client, 1, 0, &page, &err);
  if (r != ROOMCHAT_RESULT_OK) fprintf(stderr, "list_users: %s\n", roomchat_error_message(err));
  roomchat_error_free(err);
  roomchat_user_page_free(page);
  return r == ROOMCHAT_RESULT_OK;
}

int main(int argc, char **argv) {
  emulator emu;
  const char *args[] = {"--port", "0", "--rate-limit", "100000/60s", "--seed-users", "1", NULL};
  roomchat_client *clients[30];
  roomchat_rate_limit_state state;
  char url[128];
  int port, i;
  if (argc < 3) {
    fprintf(stderr, "usage: %s <roomchat-emulator> <redis-server>\n", argv[0]);
    return 2;
  }
  alarm(300);
  if (!emulator_start(&emu, argv[1], args)) return 2;
  port = free_port();
  CHECK(redis_start(argv[2], port, NULL));
  for (i = 0; i < 30; i++) {
    snprintf(url, sizeof url, "redis://127.0.0.1:%d/%d", port, i % 10);
    clients[i] = make_client(&emu, i < 20 ? url : NULL);
    CHECK(clients[i] != NULL);
    if (!clients[i]) continue;
    CHECK(list_one(clients[i]));
    CHECK(roomchat_client_rate_limit_state(clients[i], &state) == ROOMCHAT_RESULT_OK);
    CHECK(state.backend == (i < 20 ? ROOMCHAT_BUDGET_BACKEND_REDIS : ROOMCHAT_BUDGET_BACKEND_LOCAL));
  }
  for (i = 0; i < 30; i++) roomchat_client_free(clients[i]);
  redis_kill();
  emulator_stop(&emu);
  printf("release: %d passed, %d failed\n", harness_passed, harness_failed);
  return harness_failed ? 1 : 0;
}
