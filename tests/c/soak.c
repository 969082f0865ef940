/*
 * Soak through the C API: many list-users calls on one roomchat_client shared
 * by a few threads, printing this process's resident memory and open file
 * descriptors every 100,000 calls, and a verdict: flat within 5% from the
 * first report on. Run by scripts/soak.sh.
 *
 * Usage: soak <base_url> <private_key> [calls (1000000)] [threads (4)]
 */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "roomchat.h"

#define MAX_REPORTS 1000

static roomchat_client *client;
static long calls, report_every;
static long done;
static long reports_rss[MAX_REPORTS];
static int reports_fds[MAX_REPORTS];
static int report_count;
static int failures;
static struct timespec started;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static long rss_kib(void) {
  char line[256];
  long kib = 0;
  FILE *status = fopen("/proc/self/status", "r");
  if (!status) return 0;
  while (fgets(line, sizeof line, status)) {
    if (strncmp(line, "VmRSS:", 6) == 0) kib = strtol(line + 6, NULL, 10);
  }
  fclose(status);
  return kib;
}

static int open_fds(void) {
  int count = 0;
  DIR *dir = opendir("/proc/self/fd");
  if (!dir) return 0;
  while (readdir(dir)) count++;
  closedir(dir);
  return count - 3; /* ".", ".." and the directory's own descriptor */
}

static double seconds_since(const struct timespec *t) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)(now.tv_sec - t->tv_sec) + (double)(now.tv_nsec - t->tv_nsec) / 1e9;
}

static void *worker(void *unused) {
  (void)unused;
  for (;;) {
    roomchat_user_page *page = NULL;
    long n;
    pthread_mutex_lock(&lock);
    n = ++done;
    pthread_mutex_unlock(&lock);
    if (n > calls) break;
    if (roomchat_client_list_users(client, 50, 0, &page, NULL) != ROOMCHAT_RESULT_OK ||
        roomchat_user_page_len(page) == 0) {
      pthread_mutex_lock(&lock);
      failures++;
      pthread_mutex_unlock(&lock);
    }
    roomchat_user_page_free(page);
    if (n % report_every == 0) {
      long rss = rss_kib();
      int fds = open_fds();
      pthread_mutex_lock(&lock);
      printf("C API: %9ld calls, RSS %7.2f MiB, %d open fds, %.0f calls/s\n", n, (double)rss / 1024.0, fds,
             (double)n / seconds_since(&started));
      fflush(stdout);
      if (report_count < MAX_REPORTS) {
        reports_rss[report_count] = rss;
        reports_fds[report_count] = fds;
        report_count++;
      }
      pthread_mutex_unlock(&lock);
    }
  }
  return NULL;
}

int main(int argc, char **argv) {
  roomchat_client_options *options = NULL;
  pthread_t threads[64];
  int thread_count, i, fds_steady = 1;
  long min = 0, max = 0;
  double spread;
  if (argc < 3) {
    fprintf(stderr, "usage: %s <base_url> <private_key> [calls] [threads]\n", argv[0]);
    return 2;
  }
  calls = argc > 3 ? atol(argv[3]) : 1000000;
  thread_count = argc > 4 ? atoi(argv[4]) : 4;
  if (thread_count < 1 || thread_count > 64) thread_count = 4;
  report_every = calls < 100000 ? (calls > 0 ? calls : 1) : 100000;
  roomchat_client_options_new(argv[2], &options, NULL);
  roomchat_client_options_set_base_url(options, argv[1]);
  /* No throttling; a 100 ms window keeps the budget's log of starts small (it
   * holds one window's starts, so with no effective limit it follows the rate). */
  roomchat_client_options_set_rate_limit(options, 4294967295u, 100, false, 60000);
  if (roomchat_client_new(options, &client, NULL) != ROOMCHAT_RESULT_OK) return 2;
  roomchat_client_options_free(options);
  clock_gettime(CLOCK_MONOTONIC, &started);
  for (i = 0; i < thread_count; i++) pthread_create(&threads[i], NULL, worker, NULL);
  for (i = 0; i < thread_count; i++) pthread_join(threads[i], NULL);
  roomchat_client_free(client);
  for (i = 0; i < report_count; i++) {
    if (i == 0 || reports_rss[i] < min) min = reports_rss[i];
    if (reports_rss[i] > max) max = reports_rss[i];
    if (reports_fds[i] != reports_fds[0]) fds_steady = 0;
  }
  spread = min > 0 ? ((double)max / (double)min - 1.0) * 100.0 : 0.0;
  printf("C API: RSS %.2f..%.2f MiB over %d reports (%.1f%% spread, goal <= 5%%); open fds %s; %d failed calls; %s\n",
         (double)min / 1024.0, (double)max / 1024.0, report_count, spread, fds_steady ? "steady" : "CHANGING", failures,
         spread <= 5.0 && fds_steady && failures == 0 ? "flat" : "GROWING");
  return failures == 0 ? 0 : 1;
}
