package roomchat

/*
#include "capi.h"
*/
import "C"

import (
	"context"
	"time"
)

// CallOption changes one call's settings (the client's apply elsewhere):
// give them after a method's arguments.
type CallOption func(*callSettings)

type callSettings struct {
	timeout, connectTimeout, maxRetryWait time.Duration
	maxRetries                            int
	setMaxRetries                         bool
}

// WithCallTimeout sets the overall timeout of each attempt of this call.
func WithCallTimeout(d time.Duration) CallOption {
	return func(s *callSettings) { s.timeout = d }
}

// WithCallConnectTimeout sets the connect timeout of this call.
func WithCallConnectTimeout(d time.Duration) CallOption {
	return func(s *callSettings) { s.connectTimeout = d }
}

// WithCallMaxRetries sets the retries after this call's first attempt (0: one attempt).
func WithCallMaxRetries(n int) CallOption {
	return func(s *callSettings) { s.maxRetries, s.setMaxRetries = n, true }
}

// WithCallMaxRetryWait sets the longest wait this call sleeps before a retry.
func WithCallMaxRetryWait(d time.Duration) CallOption {
	return func(s *callSettings) { s.maxRetryWait = d }
}

// callView is a call's view of the client: its options and its ctx's cancel
// token. Without either, the call uses the client itself (view nil).
type callView struct {
	view  *C.struct_roomchat_client
	token *C.struct_roomchat_cancel_token
	stop  func() bool
	done  chan struct{}
}

func durationMs(d time.Duration) C.uint64_t {
	if d <= 0 {
		// 0 is refused by the library: a clear configuration error.
		return 0
	}
	ms := d.Milliseconds()
	if ms == 0 {
		ms = 1
	}
	return C.uint64_t(ms)
}

// noView is the view of a call with neither options nor a ctx that can end:
// the client itself. Shared by those calls and never written, so that they
// allocate none.
var noView callView

// newCallView makes a call's view; with tokenOnly (an iterator's step, whose
// iterator keeps the view it was made from) only the ctx's cancel token.
func newCallView(ctx context.Context, ptr *C.struct_roomchat_client, opts []CallOption, tokenOnly bool) (*callView, error) {
	cancellable := ctx.Done() != nil
	if len(opts) == 0 && !cancellable {
		return &noView, nil
	}
	cv := &callView{}
	if tokenOnly {
		if err := check(C.roomchat_cancel_token_new(&cv.token), nil); err != nil {
			return nil, err
		}
		cv.cancelOn(ctx)
		return cv, nil
	}
	var s callSettings
	for _, opt := range opts {
		opt(&s)
	}
	var options *C.struct_roomchat_call_options
	if err := check(C.roomchat_call_options_new(&options), nil); err != nil {
		return nil, err
	}
	defer C.roomchat_call_options_free(options)
	if s.timeout != 0 {
		C.roomchat_call_options_set_timeout_ms(options, durationMs(s.timeout))
	}
	if s.connectTimeout != 0 {
		C.roomchat_call_options_set_connect_timeout_ms(options, durationMs(s.connectTimeout))
	}
	if s.setMaxRetries {
		if s.maxRetries < 0 {
			return nil, &Error{Kind: KindConfiguration, Message: "WithCallMaxRetries: retries must not be negative"}
		}
		C.roomchat_call_options_set_max_retries(options, C.uint32_t(min(s.maxRetries, 1<<31)))
	}
	if s.maxRetryWait < 0 {
		return nil, &Error{Kind: KindConfiguration, Message: "WithCallMaxRetryWait: the wait must not be negative"}
	}
	if s.maxRetryWait != 0 {
		C.roomchat_call_options_set_max_retry_wait_ms(options, durationMs(s.maxRetryWait))
	}
	if cancellable {
		if err := check(C.roomchat_cancel_token_new(&cv.token), nil); err != nil {
			return nil, err
		}
		C.roomchat_call_options_set_cancel_token(options, cv.token)
	}
	var cErr *C.struct_roomchat_error
	if err := check(C.roomchat_client_with_options(ptr, options, &cv.view, &cErr), cErr); err != nil {
		cv.free()
		return nil, err
	}
	if cancellable {
		cv.cancelOn(ctx)
	}
	return cv, nil
}

// cancelOn cancels the view's token when ctx ends.
func (cv *callView) cancelOn(ctx context.Context) {
	token := cv.token
	cv.done = make(chan struct{})
	done := cv.done
	cv.stop = context.AfterFunc(ctx, func() {
		C.roomchat_cancel_token_cancel(token)
		close(done)
	})
}

// free ends the call's view; the cancel token is freed only once the ctx's
// callback can no longer use it.
func (cv *callView) free() {
	if cv.stop != nil && !cv.stop() {
		<-cv.done
	}
	if cv.view != nil {
		C.roomchat_client_free(cv.view)
	}
	if cv.token != nil {
		C.roomchat_cancel_token_free(cv.token)
	}
}
