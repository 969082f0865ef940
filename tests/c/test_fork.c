/*
 * Fork safety through the C API: 6 threads call one client in a loop while
 * the main thread forks 60 times, 20 ms apart; each child makes 5 calls on
 * the inherited client and 1 on a new one, and must exit 0 within 20 s (a
 * child that hangs is killed and counted as a failure). An alarm ends the
 * whole test if the parent itself hangs. Prints "fork: N passed, M failed".
 *
 * Usage: test_fork <path to roomchat-emulator>
 */
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "roomchat.h"
#include "harness.h"

#define FORKS 60
#define THREADS 6
#define CHILD_DEADLINE_MS 20000

static roomchat_client *shared_client;
static volatile int stop_calling;
static long parent_calls;
static long parent_failures;
static pthread_mutex_t counts = PTHREAD_MUTEX_INITIALIZER;

static int list_two(roomchat_client *client) {
  roomchat_user_page *page = NULL;
  roomchat_result r = roomchat_client_list_users(client, 2, 0, &page, NULL);
  int ok = r == ROOMCHAT_RESULT_OK && roomchat_user_page_len(page) == 2;
  roomchat_user_page_free(page);
  return ok;
}

static void *caller(void *unused) {
  (void)unused;
  while (!stop_calling) {
    int ok = list_two(shared_client);
    pthread_mutex_lock(&counts);
    parent_calls++;
    if (!ok) parent_failures++;
    pthread_mutex_unlock(&counts);
  }
  return NULL;
}

static roomchat_client *new_client(const emulator *emu) {
  roomchat_client_options *options = NULL;
  roomchat_client *client = NULL;
  if (roomchat_client_options_new(emu->private_key, &options, NULL) != ROOMCHAT_RESULT_OK) return NULL;
  roomchat_client_options_set_base_url(options, emu->base_url);
  roomchat_client_options_set_rate_limit(options, 1000000, 60000, false, 60000);
  roomchat_client_new(options, &client, NULL);
  roomchat_client_options_free(options);
  return client;
}

static long now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* The child: never returns. */
static void child(const emulator *emu) {
  int i, code = 0;
  roomchat_client *fresh;
  for (i = 0; i < 5 && code == 0; i++) {
    if (!list_two(shared_client)) code = 3;
  }
  fresh = new_client(emu);
  if (code == 0 && (!fresh || !list_two(fresh))) code = 4;
  _exit(code);
}

/* Waits for `pid` up to the deadline; kills it if it hangs. Its exit code, or -1 if it hung or died. */
static int wait_for(pid_t pid) {
  long deadline = now_ms() + CHILD_DEADLINE_MS;
  int status = 0;
  for (;;) {
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (done < 0 && errno != EINTR) return -1;
    if (now_ms() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    usleep(2000);
  }
}

int main(int argc, char **argv) {
  emulator emu;
  const char *args[] = {"--port", "0", "--rate-limit", "1000000/60s", "--seed-users", "10", NULL};
  pthread_t threads[THREADS];
  int i;
  if (argc < 2) {
    fprintf(stderr, "usage: %s <roomchat-emulator>\n", argv[0]);
    return 2;
  }
  /* The parent hanging (a deadlock) fails the run instead of hanging CI. */
  alarm(240);
  if (!emulator_start(&emu, argv[1], args)) return 2;
  shared_client = new_client(&emu);
  if (!shared_client) return 2;
  for (i = 0; i < THREADS; i++) pthread_create(&threads[i], NULL, caller, NULL);
  usleep(100000);

  for (i = 0; i < FORKS; i++) {
    pid_t pid;
    int code;
    usleep(20000);
    pid = fork();
    CHECK(pid >= 0);
    if (pid < 0) continue;
    if (pid == 0) child(&emu);
    code = wait_for(pid);
    if (code != 0) fprintf(stderr, "fork %d: child %s %d\n", i, code < 0 ? "hung or died" : "exited", code);
    CHECK(code == 0);
  }
  stop_calling = 1;
  for (i = 0; i < THREADS; i++) pthread_join(threads[i], NULL);
  if (parent_failures != 0) fprintf(stderr, "%ld of the parent's calls failed\n", parent_failures);
  CHECK(parent_failures == 0);
  printf("fork: %d forks while %d threads called (%ld calls in the parent)\n", FORKS, THREADS, parent_calls);
  roomchat_client_free(shared_client);
  CHECK(emulator_stop(&emu));
  printf("fork: %d passed, %d failed\n", harness_passed, harness_failed);
  return harness_failed == 0 ? 0 : 1;
}
