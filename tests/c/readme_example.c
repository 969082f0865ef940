#include <stdio.h>
#include <stdlib.h>
#include <roomchat.h>

int main(void) {
  const char *base_url = getenv("ROOMCHAT_BASE_URL");
  const char *key = getenv("ROOMCHAT_PRIVATE_KEY");
  roomchat_client_options *options = NULL;
  roomchat_client *client = NULL;
  roomchat_user_page *page = NULL;
  roomchat_error *err = NULL;

  roomchat_client_options_new(key ? key : "sk_test_emulator_private_key_0001", &options, NULL);
  roomchat_client_options_set_base_url(options, base_url ? base_url : "http://127.0.0.1:8080");
  if (roomchat_client_new(options, &client, &err) != ROOMCHAT_RESULT_OK) goto fail;

  if (roomchat_client_list_users(client, 50, 0, &page, &err) != ROOMCHAT_RESULT_OK) goto fail;
  printf("%llu users\n", (unsigned long long)roomchat_user_page_total(page));
  for (size_t i = 0; i < roomchat_user_page_len(page); i++) {
    const roomchat_user *user = roomchat_user_page_get(page, i);
    printf("  %s\n", roomchat_user_username(user) ? roomchat_user_username(user) : "?");
  }

fail:
  if (err) fprintf(stderr, "%s: %s\n", roomchat_result_name(roomchat_error_code(err)), roomchat_error_message(err));
  roomchat_error_free(err);
  roomchat_user_page_free(page);
  roomchat_client_free(client);
  roomchat_client_options_free(options);
  return err ? 1 : 0;
}
