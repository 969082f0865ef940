/* Writes every message of a room to `out`, a page at a time, oldest first (the
   emulator's order). An error never ends the iteration (the next call fetches the
   same page again): each is reported and freed, and after 3 in a row the export
   stops. Returns 0 when the whole history was written, else -1; `*resume_skip`
   is then where a later export starts (its params' `skip`). */
static int export_transcript(const roomchat_client *client, const char *room_id, FILE *out,
                             uint64_t *resume_skip) {
  roomchat_room_messages_iter *history = NULL;
  roomchat_chat_message *message = NULL;
  roomchat_error *err = NULL;
  roomchat_result rc;
  int failures = 0;
  if (roomchat_client_iter_room_messages(client, room_id, NULL, &history, &err) != ROOMCHAT_RESULT_OK) {
    fprintf(stderr, "export: %s\n", roomchat_error_message(err));
    roomchat_error_free(err);
    return -1;
  }
  while ((rc = roomchat_room_messages_iter_next(history, &message, &err)) != ROOMCHAT_RESULT_ITERATION_DONE) {
    if (rc != ROOMCHAT_RESULT_OK) {
      fprintf(stderr, "export: %s: %s\n", roomchat_result_name(rc), roomchat_error_message(err));
      roomchat_error_free(err);
      err = NULL;
      if (++failures == 3) break;
      continue;
    }
    failures = 0;
    const roomchat_chat_message_author *author = roomchat_chat_message_user(message);
    const char *name = author ? roomchat_chat_message_author_username(author) : NULL;
    const char *text = roomchat_chat_message_message(message);
    fprintf(out, "%s: %s\n", name ? name : "?", text ? text : "");
    roomchat_chat_message_free(message);
    message = NULL;
  }
  *resume_skip = roomchat_room_messages_iter_next_skip(history);
  roomchat_room_messages_iter_free(history);
  return rc == ROOMCHAT_RESULT_ITERATION_DONE ? 0 : -1;
}
