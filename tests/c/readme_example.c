#include <stdio.h>
#include <stdlib.h>
#include <roomchat.h>

int main(void) {
  const char *base_url = getenv("ROOMCHAT_BASE_URL");
  const char *key = getenv("ROOMCHAT_PRIVATE_KEY");
  const char *public_key = getenv("ROOMCHAT_PUBLIC_KEY");
  roomchat_client_options *options = NULL;
  roomchat_client *client = NULL;
  roomchat_user_page *page = NULL;
  roomchat_created_user *eve = NULL;
  roomchat_token_user *record = NULL;
  roomchat_error *err = NULL;

  roomchat_client_options_new(key ? key : "sk_test_emulator_private_key_0001", &options, NULL);
  roomchat_client_options_set_base_url(options, base_url ? base_url : "http://127.0.0.1:8080");
  /* Validating access tokens takes the public key. */
  roomchat_client_options_set_public_key(options, public_key ? public_key : "pk_test_emulator_public_key_0001");
  if (roomchat_client_new(options, &client, &err) != ROOMCHAT_RESULT_OK) goto fail;

  if (roomchat_client_list_users(client, 50, 0, &page, &err) != ROOMCHAT_RESULT_OK) goto fail;
  printf("%llu users\n", (unsigned long long)roomchat_user_page_total(page));
  for (size_t i = 0; i < roomchat_user_page_len(page); i++) {
    const roomchat_user *user = roomchat_user_page_get(page, i);
    printf("  %s\n", roomchat_user_username(user) ? roomchat_user_username(user) : "?");
  }

  /* A user's lifecycle: create, validate the token, deactivate, reactivate, invalidate the token. */
  if (roomchat_client_create_user(client, "eve", ROOMCHAT_ROLE_REGULAR, NULL, NULL, &eve, &err) != ROOMCHAT_RESULT_OK)
    goto fail;
  if (roomchat_client_validate_access_token(client, roomchat_created_user_access_token(eve), &record, &err) !=
      ROOMCHAT_RESULT_OK)
    goto fail;
  printf("eve (%s) holds a token issued at %lld\n", roomchat_token_user_id(record),
         (long long)roomchat_token_user_iat(record));
  roomchat_token_user_free(record);
  record = NULL;
  if (roomchat_client_deactivate_user(client, ROOMCHAT_USER_IDENTIFIER_USER_ID, roomchat_created_user_user_id(eve),
                                      &err) != ROOMCHAT_RESULT_OK ||
      roomchat_client_reactivate_user(client, ROOMCHAT_USER_IDENTIFIER_USER_ID, roomchat_created_user_user_id(eve),
                                      &err) != ROOMCHAT_RESULT_OK ||
      roomchat_client_invalidate_access_token(client, roomchat_created_user_access_token(eve), &err) !=
          ROOMCHAT_RESULT_OK)
    goto fail;
  if (roomchat_client_validate_access_token(client, roomchat_created_user_access_token(eve), &record, &err) ==
      ROOMCHAT_RESULT_INVALID_REQUEST) {
    printf("after invalidation: %s\n", roomchat_error_message(err)); /* "invalid accessToken" */
    roomchat_error_free(err);
    err = NULL;
  }

fail:
  if (err) fprintf(stderr, "%s: %s\n", roomchat_result_name(roomchat_error_code(err)), roomchat_error_message(err));
  roomchat_error_free(err);
  roomchat_token_user_free(record);
  roomchat_created_user_free(eve);
  roomchat_user_page_free(page);
  roomchat_client_free(client);
  roomchat_client_options_free(options);
  return err ? 1 : 0;
}
