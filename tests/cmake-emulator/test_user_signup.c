/* A test of your own code against the emulator, run by CTest through
 * roomchat_add_emulator_test: the emulator's addresses and keys are in the
 * environment. Its admin API (ROOMCHAT_ADMIN_URL: seeding, faults, the
 * request journal) is plain HTTP and JSON; this test reaches it with the raw
 * requests of a second client, whose key the admin API ignores. */
#include <roomchat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond)                                                   \
  do {                                                                \
    if (!(cond)) {                                                    \
      fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond); \
      exit(1);                                                        \
    }                                                                 \
  } while (0)

/* Your code: makes `username` a moderator of `room`; copies the new user's id to `id`. */
static int sign_up(const roomchat_client *client, const char *username, const char *room, char *id, size_t size) {
  roomchat_created_user *user = NULL;
  roomchat_error *err = NULL;
  if (roomchat_client_create_user(client, username, ROOMCHAT_ROLE_MODERATOR_OF_ROOM, room, NULL, &user, &err) !=
      ROOMCHAT_RESULT_OK) {
    fprintf(stderr, "sign_up: %s\n", roomchat_error_message(err));
    roomchat_error_free(err);
    return -1;
  }
  snprintf(id, size, "%s", roomchat_created_user_user_id(user));
  roomchat_created_user_free(user);
  return 0;
}

/* A client of the emulator from the environment; `key` NULL for ROOMCHAT_PRIVATE_KEY. */
static roomchat_client *emulator_client(const char *key) {
  roomchat_client_options *options = NULL;
  roomchat_client *client = NULL;
  CHECK(getenv("ROOMCHAT_BASE_URL") && getenv("ROOMCHAT_PRIVATE_KEY"));
  CHECK(roomchat_client_options_new(key ? key : getenv("ROOMCHAT_PRIVATE_KEY"), &options, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_client_options_set_base_url(options, getenv("ROOMCHAT_BASE_URL"));
  CHECK(roomchat_client_new(options, &client, NULL) == ROOMCHAT_RESULT_OK);
  roomchat_client_options_free(options);
  return client;
}

/* One admin call (`path` under /_emulator); returns the answer's JSON text (free it). */
static char *admin(const roomchat_client *admin_client, const char *method, const char *path, const char *body) {
  char route[256];
  uint16_t status = 0;
  char *answer = NULL;
  roomchat_error *err = NULL;
  snprintf(route, sizeof route, "/_emulator%s", path);
  if (roomchat_client_raw_request(admin_client, method, route, NULL, body, ROOMCHAT_RAW_AUTH_NONE, &status, &answer,
                                  &err) != ROOMCHAT_RESULT_OK) {
    fprintf(stderr, "admin %s %s: %s\n", method, path, roomchat_error_message(err));
    exit(1);
  }
  return answer;
}

static size_t count(const char *text, const char *what) {
  size_t n = 0;
  for (const char *at = strstr(text, what); at; at = strstr(at + 1, what)) n++;
  return n;
}

int main(void) {
  roomchat_client *client = emulator_client(NULL);
  roomchat_client *admin_client = emulator_client("admin");
  char id[64];

  roomchat_string_free(admin(admin_client, "POST", "/users/seed", "{\"count\": 3}"));
  roomchat_string_free(admin(admin_client, "POST", "/faults",
                             "{\"path\": \"/consumer/api/v1/user\", \"times\": 1, \"action\": {\"kind\": \"respond\","
                             " \"status\": 429, \"body\": \"{\\\"message\\\":\\\"Too many requests\\\"}\","
                             " \"headers\": {\"Retry-After\": \"1\"}}}"));

  CHECK(sign_up(client, "ann", "support", id, sizeof id) == 0);

  /* The journal: the POST answered 429, then sent again and answered 200; the key never shows. */
  char *journal = admin(admin_client, "GET", "/journal", NULL);
  CHECK(count(journal, "\"method\":\"POST\"") == 2);
  const char *refused = strstr(journal, "\"status\":429");
  CHECK(refused != NULL && strstr(refused, "\"status\":200") != NULL);
  CHECK(strstr(journal, getenv("ROOMCHAT_PRIVATE_KEY")) == NULL);
  /* Each entry's request headers, as [name, value] pairs: names in lower case, credentials REDACTED. */
  CHECK(strstr(journal, "[\"user-agent\",\"roomchat-c/") != NULL);
  roomchat_string_free(journal);

  char *users = admin(admin_client, "GET", "/users", NULL);
  CHECK(count(users, "\"userId\"") == 4 && strstr(users, id) != NULL);
  roomchat_string_free(users);

  roomchat_client_free(admin_client);
  roomchat_client_free(client);
  puts("user signup: ok");
  return 0;
}
