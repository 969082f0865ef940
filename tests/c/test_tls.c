/*
 * The C ABI over TLS (issue 20): trust options and certificate failures, each
 * against a real emulator serving HTTPS (`roomchat-emulator --tls`) over real
 * sockets. Three emulators, each with a CA of its own: one well-formed, one
 * whose certificate has expired, one whose certificate names only `localhost`.
 * Clients keep the default retries, so a retried certificate failure would show
 * in the emulator's count of failed handshakes.
 *
 * usage: test_tls <path to roomchat-emulator>
 */
#include <time.h>

#include "harness.h"
#include "roomchat.h"

static emulator emu;      /* --tls: localhost, 127.0.0.1, ::1 */
static emulator expired;  /* --tls --tls-expired */
static emulator mismatch; /* --tls --tls-name localhost */

static void sleep_ms(long ms) {
  struct timespec pause;
  pause.tv_sec = ms / 1000;
  pause.tv_nsec = (ms % 1000) * 1000000L;
  nanosleep(&pause, NULL);
}

/* A client of `base_url` with the key of `e`, trusting `ca_pem` (unless NULL)
 * beside `roots`; retries and everything else left at their defaults. Returns
 * the result of roomchat_client_new. */
static roomchat_result new_client(const emulator *e, const char *base_url, const char *ca_pem, uint32_t roots,
                                  roomchat_client **client) {
  roomchat_client_options *options = NULL;
  roomchat_error *err = NULL;
  roomchat_result r;
  *client = NULL;
  CHECK(roomchat_client_options_new(e->private_key, &options, NULL) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_client_options_set_base_url(options, base_url) == ROOMCHAT_RESULT_OK);
  if (ca_pem) CHECK(roomchat_client_options_set_ca_pem(options, ca_pem) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_client_options_set_tls_roots(options, roots) == ROOMCHAT_RESULT_OK);
  r = roomchat_client_new(options, client, &err);
  if (r != ROOMCHAT_RESULT_OK)
    fprintf(stderr, "  client of %s: %s: %s\n", base_url, roomchat_result_name(r), roomchat_error_message(err));
  roomchat_error_free(err);
  roomchat_client_options_free(options);
  return r;
}

/* GET /_emulator/connections of `e`: the count named `key`, or -1. */
static long long connection_count(const emulator *e, const char *key) {
  char *stats = NULL;
  long long value = -1;
  if (http_request(e, "GET", "/_emulator/connections", NULL, &stats) == 200) value = json_number_field(stats, key);
  free(stats);
  return value;
}

/* tls_failed of `e` once it has settled: the counts can lag a moment behind a
 * client that has given up, so wait for `at_least`, then a little longer for
 * any retry's handshake to be counted too. */
static long long settled_tls_failed(const emulator *e, long long at_least) {
  int waited;
  for (waited = 0; waited < 3000 && connection_count(e, "tls_failed") < at_least; waited += 50) sleep_ms(50);
  sleep_ms(300);
  return connection_count(e, "tls_failed");
}

/* Everything a C caller can print of `err` holds no key, and the library wrote
 * nothing holding one to stdout or stderr (`output`, captured). */
static void check_no_key(const roomchat_error *err, const char *output) {
  const char *keys[2];
  const char *shown[5];
  size_t i, j;
  keys[0] = emu.private_key;
  keys[1] = emu.public_key;
  shown[0] = roomchat_error_message(err);
  shown[1] = roomchat_error_path(err);
  shown[2] = roomchat_error_method(err);
  shown[3] = roomchat_error_event_id(err);
  shown[4] = output;
  for (i = 0; i < 2; i++)
    for (j = 0; j < 5; j++) CHECK(shown[j] == NULL || strstr(shown[j], keys[i]) == NULL);
}

/* Captures what is written to stdout and stderr (fds 1 and 2) between
 * capture_start and capture_end, which returns it (malloc'd). */
typedef struct capture {
  FILE *file;
  int saved_out, saved_err;
} capture;

static void capture_start(capture *c) {
  fflush(stdout);
  fflush(stderr);
  c->file = tmpfile();
  c->saved_out = dup(1);
  c->saved_err = dup(2);
  dup2(fileno(c->file), 1);
  dup2(fileno(c->file), 2);
}

static char *capture_end(capture *c) {
  char *text;
  long size;
  fflush(stdout);
  fflush(stderr);
  dup2(c->saved_out, 1);
  dup2(c->saved_err, 2);
  close(c->saved_out);
  close(c->saved_err);
  size = (long)lseek(fileno(c->file), 0, SEEK_END);
  if (size < 0) size = 0;
  text = (char *)calloc((size_t)size + 1, 1);
  if (size > 0 && lseek(fileno(c->file), 0, SEEK_SET) == 0 && read(fileno(c->file), text, (size_t)size) < 0)
    text[0] = '\0';
  fclose(c->file);
  return text;
}

/* A failed call's error: the TLS code and name, no HTTP status, a message
 * containing `reason`; no key anywhere. Frees it. */
static void expect_tls_error(roomchat_result got, roomchat_error **errp, const char *reason, const char *output) {
  roomchat_error *err = *errp;
  *errp = NULL;
  CHECK(got == ROOMCHAT_RESULT_TLS);
  CHECK(err != NULL);
  if (!err) return;
  if (got != ROOMCHAT_RESULT_TLS || !strstr(roomchat_error_message(err), reason))
    fprintf(stderr, "  wanted tls with \"%s\", got %s: %s\n", reason, roomchat_result_name(got),
            roomchat_error_message(err));
  CHECK(roomchat_error_code(err) == ROOMCHAT_RESULT_TLS);
  CHECK(strcmp(roomchat_result_name(roomchat_error_code(err)), "tls") == 0);
  CHECK(roomchat_error_status(err) == 0);
  CHECK(strstr(roomchat_error_message(err), reason) != NULL);
  check_no_key(err, output);
  roomchat_error_free(err);
}

/* A client given the emulator's CA gets real answers over https. */
static void test_ca_option_gives_real_answers(void) {
  roomchat_client *client = NULL;
  roomchat_created_user *user = NULL;
  roomchat_user_page *page = NULL;
  roomchat_error *err = NULL;
  char *journal = NULL;
  roomchat_room_list *rooms = NULL;

  CHECK(strncmp(emu.base_url, "https://127.0.0.1:", 18) == 0);
  CHECK(http_request(&emu, "DELETE", "/_emulator/connections", NULL, NULL) == 200);
  CHECK(new_client(&emu, emu.base_url, emu.ca_pem, ROOMCHAT_TLS_ROOTS_WEBPKI, &client) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_client_create_user(client, "tls-ann", ROOMCHAT_ROLE_MODERATOR_OF_ROOM, "tls-room", NULL, &user,
                                    &err) == ROOMCHAT_RESULT_OK);
  if (err) fprintf(stderr, "  create over https: %s\n", roomchat_error_message(err));
  roomchat_error_free(err);
  err = NULL;
  CHECK(roomchat_client_list_users(client, 0, 0, &page, &err) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_user_page_total(page) == 1);
  CHECK(page != NULL && strcmp(roomchat_user_username(roomchat_user_page_get(page, 0)), "tls-ann") == 0);
  CHECK(roomchat_client_list_chat_rooms_typed(client, &rooms, &err) == ROOMCHAT_RESULT_OK);
  CHECK(rooms != NULL && roomchat_room_list_len(rooms) == 0);
  /* the emulator saw the requests, over handshakes that all succeeded */
  CHECK(http_request(&emu, "GET", "/_emulator/journal", NULL, &journal) == 200);
  CHECK(count_occurrences(journal, "\"method\":\"POST\",\"path\":\"/consumer/api/v1/user\"") == 1);
  CHECK(count_occurrences(journal, "\"path\":\"/consumer/api/v2/users\"") == 1);
  CHECK(count_occurrences(journal, "\"path\":\"/consumer/api/v1/chatrooms\"") == 1);
  free(journal);
  CHECK(connection_count(&emu, "tls_handshakes") >= 2); /* the client's and the admin calls' */
  CHECK(connection_count(&emu, "tls_failed") == 0);
  roomchat_room_list_free(rooms);
  roomchat_user_page_free(page);
  roomchat_created_user_free(user);
  roomchat_client_free(client);
}

/* Without the CA: the TLS code, the message names the unknown issuer, no key in
 * any output, and one failed handshake per call: never retried (default
 * retries). A POST is not sent either. */
static void test_without_the_ca_unknown_issuer_once(void) {
  roomchat_client *client = NULL;
  roomchat_user_page *page = NULL;
  roomchat_created_user *user = NULL;
  roomchat_error *err = NULL;
  char *output, *journal = NULL;
  capture c;
  roomchat_result r;

  CHECK(http_request(&emu, "DELETE", "/_emulator/journal", NULL, NULL) == 200);
  CHECK(http_request(&emu, "DELETE", "/_emulator/connections", NULL, NULL) == 200);
  CHECK(new_client(&emu, emu.base_url, NULL, ROOMCHAT_TLS_ROOTS_WEBPKI, &client) == ROOMCHAT_RESULT_OK);
  capture_start(&c);
  r = roomchat_client_list_users(client, 0, 0, &page, &err);
  output = capture_end(&c);
  expect_tls_error(r, &err, "its issuer is unknown", output);
  free(output);
  CHECK(page == NULL);
  CHECK(settled_tls_failed(&emu, 1) == 1);
  if (connection_count(&emu, "tls_failed") != 1)
    fprintf(stderr, "  tls_failed after one GET: %lld\n", connection_count(&emu, "tls_failed"));

  capture_start(&c);
  r = roomchat_client_create_user(client, "never", ROOMCHAT_ROLE_REGULAR, NULL, NULL, &user, &err);
  output = capture_end(&c);
  expect_tls_error(r, &err, "its issuer is unknown", output);
  free(output);
  CHECK(user == NULL);
  CHECK(settled_tls_failed(&emu, 2) == 2);
  /* nothing reached the REST API */
  CHECK(http_request(&emu, "GET", "/_emulator/journal", NULL, &journal) == 200);
  CHECK(journal != NULL && count_occurrences(journal, "\"path\":\"/consumer/") == 0);
  free(journal);
  roomchat_client_free(client);

  /* another CA than the one that signed the certificate: the same */
  CHECK(new_client(&emu, emu.base_url, expired.ca_pem, ROOMCHAT_TLS_ROOTS_WEBPKI, &client) == ROOMCHAT_RESULT_OK);
  expect_tls_error(roomchat_client_list_users(client, 0, 0, &page, &err), &err, "its issuer is unknown", NULL);
  roomchat_client_free(client);
  /* the OS's store does not hold the emulator's CA either */
  unsetenv("SSL_CERT_FILE");
  CHECK(new_client(&emu, emu.base_url, NULL, ROOMCHAT_TLS_ROOTS_SYSTEM, &client) == ROOMCHAT_RESULT_OK);
  expect_tls_error(roomchat_client_list_users(client, 0, 0, &page, &err), &err, "its issuer is unknown", NULL);
  roomchat_client_free(client);
}

/* An expired server certificate, its CA trusted: the TLS code, "expired". */
static void test_expired_certificate(void) {
  roomchat_client *client = NULL;
  roomchat_user_page *page = NULL;
  roomchat_error *err = NULL;
  char *output;
  capture c;
  roomchat_result r;
  CHECK(new_client(&expired, expired.base_url, expired.ca_pem, ROOMCHAT_TLS_ROOTS_WEBPKI, &client) ==
        ROOMCHAT_RESULT_OK);
  capture_start(&c);
  r = roomchat_client_list_users(client, 0, 0, &page, &err);
  output = capture_end(&c);
  expect_tls_error(r, &err, "it has expired", output);
  free(output);
  CHECK(page == NULL);
  roomchat_client_free(client);
}

/* A certificate for `localhost` only, the client connecting to 127.0.0.1: the
 * TLS code, "name mismatch"; the same CA and port by the name it holds work. */
static void test_name_mismatch(void) {
  roomchat_client *client = NULL;
  roomchat_user_page *page = NULL;
  roomchat_error *err = NULL;
  char by_name[128];
  char *output;
  capture c;
  roomchat_result r;
  CHECK(strncmp(mismatch.base_url, "https://127.0.0.1:", 18) == 0);
  CHECK(new_client(&mismatch, mismatch.base_url, mismatch.ca_pem, ROOMCHAT_TLS_ROOTS_WEBPKI, &client) ==
        ROOMCHAT_RESULT_OK);
  capture_start(&c);
  r = roomchat_client_list_users(client, 0, 0, &page, &err);
  output = capture_end(&c);
  expect_tls_error(r, &err, "(a name mismatch)", output);
  free(output);
  roomchat_client_free(client);

  snprintf(by_name, sizeof by_name, "https://localhost:%d", mismatch.port);
  CHECK(new_client(&mismatch, by_name, mismatch.ca_pem, ROOMCHAT_TLS_ROOTS_WEBPKI, &client) == ROOMCHAT_RESULT_OK);
  CHECK(roomchat_client_list_users(client, 0, 0, &page, &err) == ROOMCHAT_RESULT_OK);
  if (err) fprintf(stderr, "  %s: %s\n", by_name, roomchat_error_message(err));
  roomchat_error_free(err);
  roomchat_user_page_free(page);
  roomchat_client_free(client);
}

/* SSL_CERT_FILE naming the CA file, set before the client is made, is trusted
 * without the option, with the bundled roots and with the OS's store; one that
 * cannot be read is a configuration error (naming the variable with the bundled
 * roots). */
static void test_ssl_cert_file(void) {
  roomchat_client *client = NULL;
  roomchat_user_page *page = NULL;
  roomchat_error *err = NULL;
  roomchat_client_options *options = NULL;

  setenv("SSL_CERT_FILE", emu.ca_file, 1);
  CHECK(new_client(&emu, emu.base_url, NULL, ROOMCHAT_TLS_ROOTS_WEBPKI, &client) == ROOMCHAT_RESULT_OK);
  CHECK(client != NULL && roomchat_client_list_users(client, 0, 0, &page, &err) == ROOMCHAT_RESULT_OK);
  if (err) fprintf(stderr, "  SSL_CERT_FILE, webpki roots: %s\n", roomchat_error_message(err));
  roomchat_error_free(err);
  err = NULL;
  CHECK(roomchat_user_page_total(page) == 1);
  roomchat_user_page_free(page);
  page = NULL;
  roomchat_client_free(client);

  CHECK(new_client(&emu, emu.base_url, NULL, ROOMCHAT_TLS_ROOTS_SYSTEM, &client) == ROOMCHAT_RESULT_OK);
  CHECK(client != NULL && roomchat_client_list_users(client, 0, 0, &page, &err) == ROOMCHAT_RESULT_OK);
  if (err) fprintf(stderr, "  SSL_CERT_FILE, system roots: %s\n", roomchat_error_message(err));
  roomchat_error_free(err);
  err = NULL;
  roomchat_user_page_free(page);
  page = NULL;
  roomchat_client_free(client);

  setenv("SSL_CERT_FILE", "/nonexistent/roomchat-ca.pem", 1);
  CHECK(roomchat_client_options_new(emu.private_key, &options, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_client_options_set_base_url(options, emu.base_url);
  client = NULL;
  CHECK(roomchat_client_new(options, &client, &err) == ROOMCHAT_RESULT_CONFIGURATION);
  CHECK(client == NULL && err != NULL && strstr(roomchat_error_message(err), "SSL_CERT_FILE") != NULL);
  roomchat_error_free(err);
  err = NULL;
  /* ... and with the OS's store, which it replaces (SSL_CERT_DIR is unset):
   * no certificate at all */
  roomchat_client_options_set_tls_roots(options, ROOMCHAT_TLS_ROOTS_SYSTEM);
  CHECK(roomchat_client_new(options, &client, &err) == ROOMCHAT_RESULT_CONFIGURATION);
  CHECK(client == NULL && err != NULL && strstr(roomchat_error_message(err), "trust store") != NULL);
  if (err && !strstr(roomchat_error_message(err), "trust store")) fprintf(stderr, "  %s\n", roomchat_error_message(err));
  roomchat_error_free(err);
  roomchat_client_options_free(options);
  unsetenv("SSL_CERT_FILE");
}

/* The CA PEM in the forms a C caller has it: a bundle of several certificates
 * (with a comment line, as distributions' bundles have), in either order;
 * CRLF line ends; and only the last call of the setter counts. */
static void test_ca_pem_forms(void) {
  roomchat_client_options *options = NULL;
  roomchat_client *client = NULL;
  roomchat_user_page *page = NULL;
  roomchat_error *err = NULL;
  size_t bundle_size = strlen(emu.ca_pem) + strlen(expired.ca_pem) + 64;
  char *bundle = (char *)malloc(bundle_size);
  char *crlf = (char *)malloc(2 * strlen(emu.ca_pem) + 1);
  const char *from;
  char *to;
  int order;

  for (order = 0; order < 2; order++) {
    snprintf(bundle, bundle_size, "# roomchat test bundle\n%s%s", order ? emu.ca_pem : expired.ca_pem,
             order ? expired.ca_pem : emu.ca_pem);
    CHECK(new_client(&emu, emu.base_url, bundle, ROOMCHAT_TLS_ROOTS_WEBPKI, &client) == ROOMCHAT_RESULT_OK);
    CHECK(client != NULL && roomchat_client_list_users(client, 0, 0, &page, &err) == ROOMCHAT_RESULT_OK);
    if (err) fprintf(stderr, "  bundle (order %d): %s\n", order, roomchat_error_message(err));
    roomchat_error_free(err);
    err = NULL;
    roomchat_user_page_free(page);
    page = NULL;
    roomchat_client_free(client);
    client = NULL;
  }

  for (from = emu.ca_pem, to = crlf; *from; from++) {
    if (*from == '\n') *to++ = '\r';
    *to++ = *from;
  }
  *to = '\0';
  CHECK(new_client(&emu, emu.base_url, crlf, ROOMCHAT_TLS_ROOTS_WEBPKI, &client) == ROOMCHAT_RESULT_OK);
  CHECK(client != NULL && roomchat_client_list_users(client, 0, 0, &page, &err) == ROOMCHAT_RESULT_OK);
  if (err) fprintf(stderr, "  CRLF PEM: %s\n", roomchat_error_message(err));
  roomchat_error_free(err);
  err = NULL;
  roomchat_user_page_free(page);
  page = NULL;
  roomchat_client_free(client);
  client = NULL;

  /* the wrong CA, then the right one: trusted */
  CHECK(roomchat_client_options_new(emu.private_key, &options, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_client_options_set_base_url(options, emu.base_url);
  roomchat_client_options_set_ca_pem(options, expired.ca_pem);
  roomchat_client_options_set_ca_pem(options, emu.ca_pem);
  CHECK(roomchat_client_new(options, &client, NULL) == ROOMCHAT_RESULT_OK);
  CHECK(client != NULL && roomchat_client_list_users(client, 0, 0, &page, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_user_page_free(page);
  page = NULL;
  roomchat_client_free(client);
  client = NULL;
  /* the right CA, then the wrong one: the right one is replaced */
  roomchat_client_options_set_ca_pem(options, expired.ca_pem);
  CHECK(roomchat_client_new(options, &client, NULL) == ROOMCHAT_RESULT_OK);
  expect_tls_error(roomchat_client_list_users(client, 0, 0, &page, &err), &err, "its issuer is unknown", NULL);
  roomchat_client_free(client);
  roomchat_client_options_free(options);
  free(crlf);
  free(bundle);
}

int main(int argc, char **argv) {
  const char *plain[] = {"--tls", NULL};
  const char *expired_args[] = {"--tls", "--tls-expired", NULL};
  const char *mismatch_args[] = {"--tls", "--tls-name", "localhost", NULL};
  if (argc < 2 || !emulator_start(&emu, argv[1], plain) || !emulator_start(&expired, argv[1], expired_args) ||
      !emulator_start(&mismatch, argv[1], mismatch_args)) {
    fprintf(stderr, "usage: %s <roomchat-emulator>\n", argv[0]);
    return 2;
  }
  CHECK(emu.tls && expired.tls && mismatch.tls);
  CHECK(strcmp(emu.ca_pem, expired.ca_pem) != 0 && strcmp(emu.ca_pem, mismatch.ca_pem) != 0);
  /* The trust the tests set up is the only one: no CA file or directory from
   * the machine's environment. */
  unsetenv("SSL_CERT_FILE");
  unsetenv("SSL_CERT_DIR");
  test_ca_option_gives_real_answers();
  test_without_the_ca_unknown_issuer_once();
  test_expired_certificate();
  test_name_mismatch();
  test_ssl_cert_file();
  test_ca_pem_forms();
  CHECK(emulator_stop(&mismatch));
  CHECK(emulator_stop(&expired));
  CHECK(emulator_stop(&emu));
  printf("tls: %d passed, %d failed\n", harness_passed, harness_failed);
  return harness_failed == 0 ? 0 : 1;
}
