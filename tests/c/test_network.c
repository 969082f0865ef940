/*
 * The C ABI across the test network (issue 20, items 4-5): a service host in a
 * network namespace (scripts/testnet.sh: the emulator over TLS at 10.77.0.2
 * behind a relay delaying each direction ~12 ms, tinyproxy with basic auth on
 * 127.0.0.1). Checks, over real sockets:
 * - the proxy option goes through tinyproxy (its log gains a CONNECT line);
 * - HTTPS_PROXY from the environment is used, NO_PROXY by CIDR range bypasses it;
 * - a wrong proxy password shows neither that password nor the key;
 * - a POST whose answer comes after the timeout is a timeout, sent once.
 * Then a short bench: cold start (new client + one call) against libcurl.
 * ROOMCHAT_C_NETWORK_PART=tests or =bench runs one of the two parts.
 *
 * Run through `bash scripts/testnet.sh run -- bash tests/c/network.sh`; without
 * ROOMCHAT_NET_BASE_URL it says it is skipped and exits 0.
 */
#include <time.h>

#include "harness.h"
#include "roomchat.h"

#define BENCH_RUNS 15

static const char *base_url;    /* through the delaying relay */
static const char *private_key;
static const char *proxy_url;   /* http://roomchat:<password>@127.0.0.1:<port> */
static const char *proxy_password;
static const char *proxy_log;
static emulator admin;          /* the admin API, direct over TLS (harness.h's https_request) */

static const char *const proxy_vars[] = {"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy",
                                         "ALL_PROXY",  "all_proxy",  "NO_PROXY",    "no_proxy"};

static void clear_proxy_env(void) {
  size_t i;
  for (i = 0; i < sizeof proxy_vars / sizeof proxy_vars[0]; i++) unsetenv(proxy_vars[i]);
}

static void sleep_ms(long ms) {
  struct timespec pause;
  pause.tv_sec = ms / 1000;
  pause.tv_nsec = (ms % 1000) * 1000000L;
  nanosleep(&pause, NULL);
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* CONNECT lines for the service host in tinyproxy's log so far. */
static int tunnels(void) {
  char *log = read_whole_file(proxy_log);
  int count = 0;
  char *line, *end;
  if (!log) return 0;
  for (line = log; *line; line = end + 1) {
    end = strchr(line, '\n');
    if (!end) end = line + strlen(line);
    if (end > line) {
      char saved = *end;
      *end = '\0';
      if (strstr(line, "CONNECT") && strstr(line, "10.77.0.2")) count++;
      *end = saved;
    }
    if (!*end) break;
  }
  free(log);
  return count;
}

/* A client of the service trusting the test CA. `proxy`: PROXY_FROM_ENV leaves
 * the option unset (the environment decides), else the option's value (NULL:
 * no proxy at all). `timeout_ms` 0 keeps the default; `retries` < 0 too. */
static const char PROXY_FROM_ENV[] = "(from the environment)";
static roomchat_client *new_client(const char *proxy, uint64_t timeout_ms, int retries) {
  roomchat_client_options *options = NULL;
  roomchat_client *client = NULL;
  roomchat_error *err = NULL;
  roomchat_result r;
  CHECK(roomchat_client_options_new(private_key, &options, NULL) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_client_options_set_base_url(options, base_url) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_client_options_set_ca_pem(options, admin.ca_pem) == ROOMCHAT_RESULT_OK);
  if (proxy != PROXY_FROM_ENV) CHECK(roomchat_client_options_set_proxy(options, proxy) == ROOMCHAT_RESULT_OK);
  if (timeout_ms) CHECK(roomchat_client_options_set_timeouts(options, 0, timeout_ms) == ROOMCHAT_RESULT_OK);
  if (retries >= 0) CHECK(roomchat_client_options_set_retries(options, (uint32_t)retries, false) == ROOMCHAT_RESULT_OK);
  r = roomchat_client_new(options, &client, &err);
  CHECK(r == ROOMCHAT_RESULT_OK);
  if (r != ROOMCHAT_RESULT_OK) fprintf(stderr, "  client: %s: %s\n", roomchat_result_name(r), roomchat_error_message(err));
  roomchat_error_free(err);
  roomchat_client_options_free(options);
  return client;
}

/* One list-users call that must answer with the 5 seeded users; `what` names it in a failure. */
static void expect_list_users(roomchat_client *client, const char *what) {
  roomchat_user_page *page = NULL;
  roomchat_error *err = NULL;
  roomchat_result r = client ? roomchat_client_list_users(client, 0, 0, &page, &err) : ROOMCHAT_RESULT_INVALID_ARGUMENT;
  CHECK(r == ROOMCHAT_RESULT_OK);
  if (r != ROOMCHAT_RESULT_OK)
    fprintf(stderr, "  %s: %s: %s\n", what, roomchat_result_name(r), err ? roomchat_error_message(err) : "");
  CHECK(page != NULL && roomchat_user_page_total(page) == 5);
  roomchat_user_page_free(page);
  roomchat_error_free(err);
}

static void test_proxy_option(void) {
  int before = tunnels();
  roomchat_client *client = new_client(proxy_url, 0, -1);
  expect_list_users(client, "through the proxy option");
  CHECK(tunnels() > before);
  if (tunnels() <= before) fprintf(stderr, "  the proxy option: no CONNECT in %s\n", proxy_log);
  roomchat_client_free(client);

  /* NULL: no proxy, even with HTTPS_PROXY set */
  setenv("HTTPS_PROXY", proxy_url, 1);
  before = tunnels();
  client = new_client(NULL, 0, -1);
  expect_list_users(client, "proxy option NULL");
  CHECK(tunnels() == before);
  roomchat_client_free(client);
  clear_proxy_env();
}

static void test_proxy_environment(void) {
  roomchat_client *client;
  int before;

  setenv("HTTPS_PROXY", proxy_url, 1);
  before = tunnels();
  client = new_client(PROXY_FROM_ENV, 0, -1);
  expect_list_users(client, "HTTPS_PROXY");
  CHECK(tunnels() > before);
  if (tunnels() <= before) fprintf(stderr, "  HTTPS_PROXY was not used\n");
  roomchat_client_free(client);

  setenv("NO_PROXY", "10.77.0.0/16", 1);
  before = tunnels();
  client = new_client(PROXY_FROM_ENV, 0, -1);
  expect_list_users(client, "HTTPS_PROXY with NO_PROXY=10.77.0.0/16");
  CHECK(tunnels() == before);
  if (tunnels() != before) fprintf(stderr, "  NO_PROXY=10.77.0.0/16 was not honoured\n");
  roomchat_client_free(client);
  clear_proxy_env();
}

/* Refused by tinyproxy (407): an error whose every field is free of the wrong
 * password, the right one and the private key. */
static void test_wrong_proxy_password(void) {
  static const char wrong_password[] = "wrong-password-9";
  char wrong[1024];
  const char *at = strstr(proxy_url, proxy_password);
  roomchat_client *client;
  roomchat_user_page *page = NULL;
  roomchat_error *err = NULL;
  roomchat_result r;
  const char *shown[4];
  size_t i;

  CHECK(at != NULL);
  if (!at) return;
  snprintf(wrong, sizeof wrong, "%.*s%s%s", (int)(at - proxy_url), proxy_url, wrong_password,
           at + strlen(proxy_password));
  client = new_client(wrong, 0, 0);
  r = client ? roomchat_client_list_users(client, 0, 0, &page, &err) : ROOMCHAT_RESULT_OK;
  CHECK(r != ROOMCHAT_RESULT_OK);
  CHECK(page == NULL);
  CHECK(err != NULL);
  if (err) {
    shown[0] = roomchat_error_message(err);
    shown[1] = roomchat_error_path(err);
    shown[2] = roomchat_error_method(err);
    shown[3] = roomchat_error_event_id(err);
    for (i = 0; i < 4; i++) {
      CHECK(shown[i] == NULL || strstr(shown[i], wrong_password) == NULL);
      CHECK(shown[i] == NULL || strstr(shown[i], proxy_password) == NULL);
      CHECK(shown[i] == NULL || strstr(shown[i], private_key) == NULL);
    }
    printf("c network: a wrong proxy password: %s: %s\n", roomchat_result_name(r), roomchat_error_message(err));
  }
  roomchat_error_free(err);
  roomchat_user_page_free(page);
  roomchat_client_free(client);
}

/* The answer to a POST delayed past the timeout: a timeout, and the POST was
 * sent once (never retried: it could create the user twice). */
static void test_lost_post_answer_sent_once(void) {
  roomchat_client *client;
  roomchat_created_user *user = NULL;
  roomchat_error *err = NULL;
  roomchat_result r;
  char *journal = NULL;

  CHECK(https_request(&admin, "DELETE", "/_emulator/journal", NULL, NULL) == 200);
  CHECK(https_request(&admin, "POST", "/_emulator/faults",
                      "{\"method\":\"POST\",\"path\":\"/consumer/api/v1/user\",\"times\":1,"
                      "\"action\":{\"kind\":\"delay\",\"ms\":1500}}",
                      NULL) == 200);
  client = new_client(NULL, 800, -1); /* the default retries */
  r = client ? roomchat_client_create_user(client, "lost-answer", ROOMCHAT_ROLE_REGULAR, NULL, NULL, &user, &err)
             : ROOMCHAT_RESULT_OK;
  CHECK(r == ROOMCHAT_RESULT_TIMEOUT);
  if (r != ROOMCHAT_RESULT_TIMEOUT)
    fprintf(stderr, "  delayed POST: %s: %s\n", roomchat_result_name(r), err ? roomchat_error_message(err) : "");
  CHECK(user == NULL);
  CHECK(err != NULL && roomchat_error_code(err) == ROOMCHAT_RESULT_TIMEOUT);
  roomchat_error_free(err);
  roomchat_created_user_free(user);
  roomchat_client_free(client);
  /* a retry would arrive within a timeout or two: wait past it */
  sleep_ms(1000);
  CHECK(https_request(&admin, "GET", "/_emulator/journal", NULL, &journal) == 200);
  CHECK(journal != NULL &&
        count_occurrences(journal, "\"method\":\"POST\",\"path\":\"/consumer/api/v1/user\"") == 1);
  if (journal && count_occurrences(journal, "\"method\":\"POST\",\"path\":\"/consumer/api/v1/user\"") != 1)
    fprintf(stderr, "  journal: %s\n", journal);
  free(journal);
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *values, size_t n) {
  qsort(values, n, sizeof *values, compare_doubles);
  return values[n / 2];
}

/* One GET of a one-user page with a new libcurl easy handle: 1 on a 200. */
static int curl_cold_call(const char *url) {
  harness_buffer body = {NULL, 0};
  long status = -1;
  CURL *curl = curl_easy_init();
  if (!curl) return 0;
  curl_easy_setopt(curl, CURLOPT_URL, url);
  curl_easy_setopt(curl, CURLOPT_CAINFO, admin.ca_file);
  curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, 30L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, harness_collect);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
  if (curl_easy_perform(curl) != CURLE_OK || curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status) != CURLE_OK)
    status = -1;
  curl_easy_cleanup(curl);
  status = status == 200 && body.data && strstr(body.data, "\"data\":[") != NULL;
  free(body.data);
  return (int)status;
}

/* Cold start, alternating sides: a new roomchat client + one list-users call
 * (limit 1) against a new libcurl easy handle + the same GET. Printed, not asserted. */
static void bench_cold_start(void) {
  double ours[BENCH_RUNS], curls[BENCH_RUNS];
  char url[2048];
  int i, ours_ok = 0, curls_ok = 0;
  snprintf(url, sizeof url, "%s/consumer/api/v2/users?auth=%s&limit=1", base_url, private_key);
  for (i = 0; i < BENCH_RUNS; i++) {
    roomchat_client_options *options = NULL;
    roomchat_client *client = NULL;
    roomchat_user_page *page = NULL;
    double started = now_ms();
    if (roomchat_client_options_new(private_key, &options, NULL) == ROOMCHAT_RESULT_OK &&
        roomchat_client_options_set_base_url(options, base_url) == ROOMCHAT_RESULT_OK &&
        roomchat_client_options_set_ca_pem(options, admin.ca_pem) == ROOMCHAT_RESULT_OK &&
        roomchat_client_options_set_proxy(options, NULL) == ROOMCHAT_RESULT_OK &&
        roomchat_client_new(options, &client, NULL) == ROOMCHAT_RESULT_OK &&
        roomchat_client_list_users(client, 1, 0, &page, NULL) == ROOMCHAT_RESULT_OK)
      ours_ok++;
    roomchat_user_page_free(page);
    roomchat_client_free(client);
    roomchat_client_options_free(options);
    ours[i] = now_ms() - started;

    started = now_ms();
    curls_ok += curl_cold_call(url);
    curls[i] = now_ms() - started;
  }
  CHECK(ours_ok == BENCH_RUNS);
  CHECK(curls_ok == BENCH_RUNS);
  printf("c network: cold start median of %d: roomchat %.1f ms, libcurl %.1f ms\n", BENCH_RUNS,
         median(ours, BENCH_RUNS), median(curls, BENCH_RUNS));
}

int main(void) {
  const char *admin_url = getenv("ROOMCHAT_NET_ADMIN_URL");
  const char *ca_file = getenv("ROOMCHAT_NET_CA_FILE");
  const char *suffix = "/_emulator";
  const char *part;
  size_t base_len;

  base_url = getenv("ROOMCHAT_NET_BASE_URL");
  if (!base_url) {
    printf("c-network: no test network (run through scripts/testnet.sh): skipped\n");
    return 0;
  }
  private_key = getenv("ROOMCHAT_NET_PRIVATE_KEY");
  proxy_url = getenv("ROOMCHAT_NET_PROXY");
  proxy_password = getenv("ROOMCHAT_NET_PROXY_PASSWORD");
  proxy_log = getenv("ROOMCHAT_NET_PROXY_LOG");
  if (!admin_url || !ca_file || !private_key || !proxy_url || !proxy_password || !proxy_log) {
    fprintf(stderr, "test_network: ROOMCHAT_NET_* variables missing (run through scripts/testnet.sh)\n");
    printf("c-network: 0 passed, 1 failed\n");
    return 1;
  }
  /* The harness's https_request appends "/_emulator/..." to base_url. */
  base_len = strlen(admin_url);
  if (base_len > strlen(suffix) && strcmp(admin_url + base_len - strlen(suffix), suffix) == 0)
    base_len -= strlen(suffix);
  memset(&admin, 0, sizeof admin);
  snprintf(admin.base_url, sizeof admin.base_url, "%.*s", (int)base_len, admin_url);
  snprintf(admin.ca_file, sizeof admin.ca_file, "%s", ca_file);
  admin.tls = 1;
  admin.ca_pem = read_whole_file(ca_file);
  if (!admin.ca_pem) {
    fprintf(stderr, "test_network: cannot read %s\n", ca_file);
    printf("c-network: 0 passed, 1 failed\n");
    return 1;
  }
  curl_global_init(CURL_GLOBAL_DEFAULT);
  clear_proxy_env();
  CHECK(https_request(&admin, "POST", "/_emulator/reset", NULL, NULL) == 200);
  CHECK(https_request(&admin, "POST", "/_emulator/users/seed", "{\"count\":5}", NULL) == 200);

  /* ROOMCHAT_C_NETWORK_PART: "tests" or "bench" runs that part only (the test
   * command runs the bench last, on a machine with nothing else running). */
  part = getenv("ROOMCHAT_C_NETWORK_PART");
  if (!part || strcmp(part, "bench") != 0) {
    test_proxy_option();
    test_proxy_environment();
    test_wrong_proxy_password();
    test_lost_post_answer_sent_once();
  }
  if (!part || strcmp(part, "tests") != 0) bench_cold_start();

  curl_global_cleanup();
  free(admin.ca_pem);
  printf("c-network: %d passed, %d failed\n", harness_passed, harness_failed);
  return harness_failed == 0 ? 0 : 1;
}
