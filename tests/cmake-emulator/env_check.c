/* What roomchat_add_emulator_test gives a test: checks the environment it runs
 * in and the emulator behind it. usage: env_check USERS [tls|hold]
 *   USERS  the users the emulator holds (its --seed-users)
 *   tls    it serves HTTPS: ROOMCHAT_CA_FILE names its CA, which the client trusts
 *   hold   keeps the emulator busy a while (tests run side by side overlap)
 * Appends the base URL to $SEEN_FILE when set. */
#include <roomchat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(cond)                                                   \
  do {                                                                \
    if (!(cond)) {                                                    \
      fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond); \
      return 1;                                                       \
    }                                                                 \
  } while (0)

static char *read_file(const char *path) {
  FILE *file = fopen(path, "rb");
  if (!file) return NULL;
  char *text = calloc(1, 65536);
  size_t n = fread(text, 1, 65535, file);
  fclose(file);
  text[n] = 0;
  return text;
}

int main(int argc, char **argv) {
  const char *names[] = {"ROOMCHAT_BASE_URL", "ROOMCHAT_CHAT_URL", "ROOMCHAT_PRIVATE_KEY", "ROOMCHAT_PUBLIC_KEY",
                         "ROOMCHAT_ADMIN_URL"};
  CHECK(argc >= 2);
  const char *mode = argc > 2 ? argv[2] : "";
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    const char *value = getenv(names[i]);
    if (!value || !*value) {
      fprintf(stderr, "%s is not set\n", names[i]);
      return 1;
    }
  }
  const char *base = getenv("ROOMCHAT_BASE_URL");
  char expected[512];
  snprintf(expected, sizeof expected, "%s/chat", base);
  CHECK(strcmp(getenv("ROOMCHAT_CHAT_URL"), expected) == 0);
  snprintf(expected, sizeof expected, "%s/_emulator", base);
  CHECK(strcmp(getenv("ROOMCHAT_ADMIN_URL"), expected) == 0);

  roomchat_client_options *options = NULL;
  roomchat_client *client = NULL;
  roomchat_user_page *page = NULL;
  roomchat_error *err = NULL;
  CHECK(roomchat_client_options_new(getenv("ROOMCHAT_PRIVATE_KEY"), &options, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_client_options_set_base_url(options, base);
  if (strcmp(mode, "tls") == 0) {
    CHECK(strncmp(base, "https://", 8) == 0 && getenv("ROOMCHAT_CA_FILE") != NULL);
    char *pem = read_file(getenv("ROOMCHAT_CA_FILE"));
    CHECK(pem != NULL && strstr(pem, "BEGIN CERTIFICATE") != NULL);
    roomchat_client_options_set_ca_pem(options, pem);
    free(pem);
  } else {
    CHECK(strncmp(base, "http://127.0.0.1:", 17) == 0 && getenv("ROOMCHAT_CA_FILE") == NULL);
  }
  CHECK(roomchat_client_new(options, &client, &err) == ROOMCHAT_RESULT_OK);
  if (roomchat_client_list_users(client, 50, 0, &page, &err) != ROOMCHAT_RESULT_OK) {
    fprintf(stderr, "list users: %s\n", roomchat_error_message(err));
    return 1;
  }
  CHECK(roomchat_user_page_total(page) == strtoull(argv[1], NULL, 10));
  if (strcmp(mode, "webinar") == 0) {
    roomchat_message_page *messages = NULL;
    if (roomchat_client_room_messages(client, "webinar", NULL, &messages, &err) != ROOMCHAT_RESULT_OK) {
      fprintf(stderr, "room messages: %s\n", roomchat_error_message(err));
      return 1;
    }
    CHECK(roomchat_message_page_total_records(messages) == 250);
    roomchat_message_page_free(messages);
  }
  if (strcmp(mode, "hold") == 0) {
    struct timespec wait = {0, 300 * 1000 * 1000};
    nanosleep(&wait, NULL);
  }
  const char *seen = getenv("SEEN_FILE");
  if (seen) {
    FILE *file = fopen(seen, "a");
    CHECK(file != NULL);
    fprintf(file, "%s\n", base);
    fclose(file);
  }
  roomchat_user_page_free(page);
  roomchat_client_free(client);
  roomchat_client_options_free(options);
  printf("%s: %s users\n", base, argv[1]);
  return 0;
}
