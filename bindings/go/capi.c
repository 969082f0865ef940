#include "capi.h"

// The Go call this thread is making (0: none), for the trampolines below, and
// whether its observer reports are wanted (0: nobody listens, so a report does
// not cross into Go: a cgo callback needs a P of the runtime, which a thread
// back from the network waits for when other goroutines hold them). A call
// made from inside a callback (a log handler's) nests: it puts back the outer
// call's key and flag when it returns.
static __thread uintptr_t rcgo_current_call;
static __thread int rcgo_observing;

// Exported by observe.go.
extern void rcgoObserve(uintptr_t client_key, uintptr_t call_key, struct roomchat_observation *observation,
                        struct roomchat_attempt_headers *headers);
extern void rcgoLog(uintptr_t client_key, uintptr_t call_key, uint32_t level, char *line);
extern void rcgoRelease(uintptr_t client_key);

static void rcgo_observer(void *user_data, const struct roomchat_observation *observation,
                          struct roomchat_attempt_headers *headers) {
  if (!rcgo_observing) return;
  rcgoObserve((uintptr_t)user_data, rcgo_current_call, (struct roomchat_observation *)observation, headers);
}

static void rcgo_log(void *user_data, roomchat_log_level level, const char *line) {
  rcgoLog((uintptr_t)user_data, rcgo_current_call, (uint32_t)level, (char *)line);
}

static void rcgo_release(void *user_data) { rcgoRelease((uintptr_t)user_data); }

roomchat_result rcgo_set_observer(struct roomchat_client_options *options, uintptr_t client_key) {
  return roomchat_client_options_set_observer_with_destroy(options, rcgo_observer, (void *)client_key, rcgo_release);
}

roomchat_result rcgo_set_log(struct roomchat_client_options *options, uintptr_t client_key,
                             uint32_t lowest_level) {
  return roomchat_client_options_set_log_callback(options, rcgo_log, (void *)client_key, lowest_level);
}

roomchat_result rcgo_call(const struct roomchat_client *client, uintptr_t call_key, int observe, const char *operation,
                          const char *params_json, char **result_json_out,
                          struct roomchat_response_meta **meta_out, struct roomchat_error **err_out) {
  uintptr_t outer = rcgo_current_call;  // a call made from a callback of another
  int outer_observing = rcgo_observing;
  rcgo_current_call = call_key;
  rcgo_observing = observe;
  roomchat_result result =
      roomchat_client_call_operation(client, operation, params_json, result_json_out, meta_out, err_out);
  rcgo_current_call = outer;
  rcgo_observing = outer_observing;
  return result;
}

roomchat_result rcgo_pages_next(struct roomchat_operation_pages *pages, uintptr_t call_key, int observe,
                                const struct roomchat_cancel_token *cancel, char **page_json_out,
                                struct roomchat_error **err_out) {
  uintptr_t outer = rcgo_current_call;  // a call made from a callback of another
  int outer_observing = rcgo_observing;
  rcgo_current_call = call_key;
  rcgo_observing = observe;
  roomchat_result result = roomchat_operation_pages_next(pages, cancel, page_json_out, err_out);
  rcgo_current_call = outer;
  rcgo_observing = outer_observing;
  return result;
}

roomchat_result rcgo_users_next(struct roomchat_users_iter *iter, uintptr_t call_key, int observe,
                                const struct roomchat_cancel_token *cancel, struct roomchat_user **user_out,
                                struct roomchat_error **err_out) {
  uintptr_t outer = rcgo_current_call;  // a call made from a callback of another
  int outer_observing = rcgo_observing;
  rcgo_current_call = call_key;
  rcgo_observing = observe;
  roomchat_result result = roomchat_users_iter_next_cancellable(iter, cancel, user_out, err_out);
  rcgo_current_call = outer;
  rcgo_observing = outer_observing;
  return result;
}

const struct roomchat_call_event *rcgo_event(const struct roomchat_observation *observation, size_t index) {
  if (observation == NULL || index >= observation->event_count) return NULL;
  return observation->events[index];
}
