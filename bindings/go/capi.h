// The C side of the Go package: shims over include/roomchat.h that cgo calls.
// The calls carry a key of the Go call (its per-call state) in a thread-local
// that the observer and log trampolines read: the library reports a call's
// observations on the thread making it (roomchat.h, roomchat_observer_callback),
// which is the thread of this cgo call.
#ifndef ROOMCHAT_GO_CAPI_H
#define ROOMCHAT_GO_CAPI_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "roomchat.h"

roomchat_result rcgo_set_observer(struct roomchat_client_options *options, uintptr_t client_key);
roomchat_result rcgo_set_log(struct roomchat_client_options *options, uintptr_t client_key, uint32_t lowest_level);
roomchat_result rcgo_call(const struct roomchat_client *client, uintptr_t call_key, int observe, const char *operation,
                          const char *params_json, char **result_json_out,
                          struct roomchat_response_meta **meta_out, struct roomchat_error **err_out);
roomchat_result rcgo_pages_next(struct roomchat_operation_pages *pages, uintptr_t call_key, int observe,
                                const struct roomchat_cancel_token *cancel, char **page_json_out,
                                struct roomchat_error **err_out);
roomchat_result rcgo_users_next(struct roomchat_users_iter *iter, uintptr_t call_key, int observe,
                                const struct roomchat_cancel_token *cancel, struct roomchat_user **user_out,
                                struct roomchat_error **err_out);
const struct roomchat_call_event *rcgo_event(const struct roomchat_observation *observation, size_t index);
#endif
