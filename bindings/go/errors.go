package roomchat

/*
#include "capi.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Kind says what went wrong, as every roomchat package names it. Compare an
// error with errors.Is against the sentinel of its kind (ErrRateLimited, …),
// or read (*Error).Kind.
type Kind int

// The kinds. The numbers are the C ABI's roomchat_result codes.
const (
	KindMissingAuth         Kind = 1
	KindInvalidAuth         Kind = 2
	KindInvalidRequest      Kind = 3
	KindUserNotFound        Kind = 4
	KindPlanUpgradeRequired Kind = 5
	KindRateLimited         Kind = 6
	KindServerError         Kind = 7
	KindUnexpectedStatus    Kind = 8
	KindTimeout             Kind = 9
	KindConnection          Kind = 10
	KindDecode              Kind = 11
	KindResponseTooLarge    Kind = 12
	KindValidation          Kind = 13
	KindConfiguration       Kind = 14
	KindCancelled           Kind = 15
	KindBudgetUnavailable   Kind = 16
	KindTLS                 Kind = 17
	KindNotFound            Kind = 18
	// KindInvalidArgument: a value the C boundary refused (a string with a NUL byte).
	KindInvalidArgument Kind = 100
	// KindInternal: a bug inside the library, caught at the boundary.
	KindInternal Kind = 101
	// KindUnknown: a kind newer than this package.
	KindUnknown Kind = 103
)

var kindNames = map[Kind]string{
	KindMissingAuth:         "missing_auth",
	KindInvalidAuth:         "invalid_auth",
	KindInvalidRequest:      "invalid_request",
	KindUserNotFound:        "user_not_found",
	KindPlanUpgradeRequired: "plan_upgrade_required",
	KindRateLimited:         "rate_limited",
	KindServerError:         "server_error",
	KindUnexpectedStatus:    "unexpected_status",
	KindTimeout:             "timeout",
	KindConnection:          "connection",
	KindDecode:              "decode",
	KindResponseTooLarge:    "response_too_large",
	KindValidation:          "validation",
	KindConfiguration:       "configuration",
	KindCancelled:           "cancelled",
	KindBudgetUnavailable:   "budget_unavailable",
	KindTLS:                 "tls",
	KindNotFound:            "not_found",
	KindInvalidArgument:     "invalid_argument",
	KindInternal:            "internal",
	KindUnknown:             "unknown",
}

// String is the kind's name as every roomchat package spells it (`rate_limited`).
func (k Kind) String() string {
	if name, ok := kindNames[k]; ok {
		return name
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// One sentinel per kind: errors.Is(err, roomchat.ErrRateLimited).
var (
	ErrMissingAuth         = &Error{Kind: KindMissingAuth, sentinel: true}
	ErrInvalidAuth         = &Error{Kind: KindInvalidAuth, sentinel: true}
	ErrInvalidRequest      = &Error{Kind: KindInvalidRequest, sentinel: true}
	ErrUserNotFound        = &Error{Kind: KindUserNotFound, sentinel: true}
	ErrPlanUpgradeRequired = &Error{Kind: KindPlanUpgradeRequired, sentinel: true}
	ErrRateLimited         = &Error{Kind: KindRateLimited, sentinel: true}
	ErrServerError         = &Error{Kind: KindServerError, sentinel: true}
	ErrUnexpectedStatus    = &Error{Kind: KindUnexpectedStatus, sentinel: true}
	ErrTimeout             = &Error{Kind: KindTimeout, sentinel: true}
	ErrConnection          = &Error{Kind: KindConnection, sentinel: true}
	ErrDecode              = &Error{Kind: KindDecode, sentinel: true}
	ErrResponseTooLarge    = &Error{Kind: KindResponseTooLarge, sentinel: true}
	ErrValidation          = &Error{Kind: KindValidation, sentinel: true}
	ErrConfiguration       = &Error{Kind: KindConfiguration, sentinel: true}
	ErrCancelled           = &Error{Kind: KindCancelled, sentinel: true}
	ErrBudgetUnavailable   = &Error{Kind: KindBudgetUnavailable, sentinel: true}
	ErrTLS                 = &Error{Kind: KindTLS, sentinel: true}
	ErrNotFound            = &Error{Kind: KindNotFound, sentinel: true}
	ErrInvalidArgument     = &Error{Kind: KindInvalidArgument, sentinel: true}
	ErrInternal            = &Error{Kind: KindInternal, sentinel: true}
)

// Error is every error of this package. No key, access token or password is
// ever in it: the library shows them as REDACTED.
type Error struct {
	// Kind says what went wrong.
	Kind Kind
	// Message says it in words (the library's message).
	Message string
	// Status is the answer's HTTP status, 0 when no answer came.
	Status int
	// ServiceMessage is the service's `message` field, when its answer had one.
	ServiceMessage string
	// ServiceError is the service's `error` detail, when its answer had one
	// (a validation object's messages joined by "; ").
	ServiceError string
	// ServiceErrorMessage is the service's `errorMessage` text, when its answer had one.
	ServiceErrorMessage string
	// RetryAfter is how long the service asked to wait (a 429), 0 when it did not say.
	RetryAfter time.Duration
	// EventID is the service's event id of a 5xx, for its support.
	EventID string
	// Method and Path are the request's, when one was made.
	Method, Path string
	// OutcomeUnknown is true when the call was cancelled with a request on the
	// wire: a create or a post may have happened (it was not sent again); look
	// it up before sending it again.
	OutcomeUnknown bool

	// cause is the context's error when the call ended because its ctx did.
	cause    error
	sentinel bool
}

// Error is the message, prefixed with the kind.
func (e *Error) Error() string {
	if e.sentinel {
		return "roomchat: " + e.Kind.String()
	}
	if e.Message == "" {
		return "roomchat: " + e.Kind.String()
	}
	return "roomchat: " + e.Kind.String() + ": " + e.Message
}

// Is matches the sentinel of the error's kind, and, for a call its ctx ended,
// context.Canceled or context.DeadlineExceeded.
func (e *Error) Is(target error) bool {
	if t, ok := target.(*Error); ok && t.sentinel {
		return t.Kind == e.Kind
	}
	return false
}

// Unwrap gives the context's error of a call its ctx ended (so that
// errors.Is(err, context.Canceled) holds), nil otherwise.
func (e *Error) Unwrap() error { return e.cause }

// takeError reads and frees the library's error object.
func takeError(code C.roomchat_result, err *C.struct_roomchat_error) *Error {
	e := &Error{Kind: Kind(code)}
	if _, known := kindNames[e.Kind]; !known {
		e.Kind = KindUnknown
	}
	if err == nil {
		e.Message = goString(C.roomchat_result_name(C.uint32_t(code)))
		return e
	}
	defer C.roomchat_error_free(err)
	e.Message = goString(C.roomchat_error_message(err))
	e.Status = int(C.roomchat_error_status(err))
	e.ServiceMessage = goString(C.roomchat_error_service_message(err))
	e.ServiceError = goString(C.roomchat_error_service_error(err))
	e.ServiceErrorMessage = goString(C.roomchat_error_service_error_message(err))
	if ms := int64(C.roomchat_error_retry_after_ms(err)); ms >= 0 {
		e.RetryAfter = time.Duration(ms) * time.Millisecond
	}
	e.EventID = goString(C.roomchat_error_event_id(err))
	e.Method = goString(C.roomchat_error_method(err))
	e.Path = goString(C.roomchat_error_path(err))
	if C.roomchat_error_remedy(err) == C.ROOMCHAT_REMEDY_ALLOW_INSECURE_HTTP {
		// The library names C's setter; a Go program sets it this way.
		e.Message = strings.ReplaceAll(e.Message, "roomchat_client_options_set_allow_insecure_http(options, true)", "roomchat.WithAllowInsecureHTTP(true)")
	}
	// A cancel with a request on the wire: it may have reached the service.
	e.OutcomeUnknown = e.Kind == KindCancelled && !bool(C.roomchat_error_never_sent(err))
	return e
}

// fromContext makes a cancelled call's error say why its ctx ended.
func fromContext(ctx context.Context, err error) error {
	if err == nil {
		// Before errors.As: its target escapes, an allocation a call.
		return nil
	}
	var e *Error
	if !errors.As(err, &e) || e.Kind != KindCancelled {
		return err
	}
	if cause := ctx.Err(); cause != nil {
		e.cause = cause
		if errors.Is(cause, context.DeadlineExceeded) {
			e.Message = "the context's deadline passed: " + e.Message
		}
	}
	return e
}
