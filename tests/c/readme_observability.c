#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <roomchat.h>

/* Ids for W3C trace context: one trace per call, one span per attempt. A real
 * application takes them from its tracer; these are made from the call's id
 * and start time (the same in each of its reports) so that no state is kept. */
static uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15u;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
  return x ^ (x >> 31);
}

static void make_traceparent(const roomchat_observation *o, char out[56]) {
  uint64_t seed = mix(o->call_id ^ o->call_start_unix_ns);
  snprintf(out, 56, "00-%016" PRIx64 "%016" PRIx64 "-%016" PRIx64 "-01", seed, mix(seed + 1),
           mix(seed + 1 + o->attempt));
}

/* Called at each attempt's start and end and at each call's end. */
static void observe(void *user_data, const roomchat_observation *o, roomchat_attempt_headers *headers) {
  char traceparent[56];
  (void)user_data;
  make_traceparent(o, traceparent);
  switch (o->kind) {
    case ROOMCHAT_OBSERVATION_KIND_ATTEMPT_START:
      if (o->propagate_trace_context) roomchat_attempt_headers_set(headers, "traceparent", traceparent, NULL);
      break;
    case ROOMCHAT_OBSERVATION_KIND_ATTEMPT_END:
      printf("attempt %u: %s %s -> %u%s%s in %.1f ms, traceparent %s%s%s\n", o->attempt, o->method,
             o->url_template ? o->url_template : o->url_full, o->status, o->error_type ? " " : "",
             o->error_type ? o->error_type : "", o->duration_ns / 1e6, traceparent,
             o->retry_reason ? ", retried for " : "", o->retry_reason ? o->retry_reason : "");
      break;
    case ROOMCHAT_OBSERVATION_KIND_CALL_END:
      printf("call roomchat %s: %u attempt(s), %s, %.1f ms (%.1f ms waiting for the rate limit, %.1f ms before "
             "retries)\n",
             o->operation, o->attempt, o->error_type ? o->error_type : "ok", o->duration_ns / 1e6,
             o->rate_limit_wait_ns / 1e6, o->retry_wait_ns / 1e6);
      break;
  }
}

int main(void) {
  const char *base_url = getenv("ROOMCHAT_BASE_URL");
  const char *key = getenv("ROOMCHAT_PRIVATE_KEY");
  roomchat_client_options *options = NULL;
  roomchat_client *client = NULL;
  roomchat_user_page *page = NULL;
  roomchat_error *err = NULL;

  roomchat_client_options_new(key ? key : "sk_test_emulator_private_key_0001", &options, NULL);
  roomchat_client_options_set_base_url(options, base_url ? base_url : "http://127.0.0.1:8080");
  roomchat_client_options_set_observer(options, observe, NULL);
  /* On every request of the client; a header the library refuses is an error. */
  if (roomchat_client_options_add_header(options, "x-team", "payments") != ROOMCHAT_RESULT_OK) return 1;
  if (roomchat_client_new(options, &client, &err) != ROOMCHAT_RESULT_OK) goto fail;

  if (roomchat_client_list_users(client, 50, 0, &page, &err) != ROOMCHAT_RESULT_OK) goto fail;
  printf("%" PRIu64 " users\n", (uint64_t)roomchat_user_page_total(page));

fail:
  if (err) fprintf(stderr, "%s: %s\n", roomchat_result_name(roomchat_error_code(err)), roomchat_error_message(err));
  roomchat_error_free(err);
  roomchat_user_page_free(page);
  roomchat_client_free(client);
  roomchat_client_options_free(options);
  return err ? 1 : 0;
}
