package roomchat

/*
#include "capi.h"
*/
import "C"

import (
	"context"
	"log/slog"
	"runtime/cgo"
	"sync"
	"time"
	"unsafe"
)

// observationKind is which report of a call an observation is.
type observationKind int

const (
	attemptStart observationKind = C.ROOMCHAT_OBSERVATION_KIND_ATTEMPT_START
	attemptEnd   observationKind = C.ROOMCHAT_OBSERVATION_KIND_ATTEMPT_END
	callEnd      observationKind = C.ROOMCHAT_OBSERVATION_KIND_CALL_END
)

// eventKind is what a call event reports.
type eventKind int

const (
	eventRateLimitWait  eventKind = C.ROOMCHAT_CALL_EVENT_KIND_RATE_LIMIT_WAIT
	eventBudgetDegraded eventKind = C.ROOMCHAT_CALL_EVENT_KIND_BUDGET_DEGRADED
	eventRetry          eventKind = C.ROOMCHAT_CALL_EVENT_KIND_RETRY
)

// observation is core's report of a call (roomchat_observation), copied:
// an attempt's start or end, or the call's end. Its strings hold no secret.
type observation struct {
	Kind            observationKind
	Attempt         int
	CallID          uint64
	ClientID        uint64
	Operation       string
	Method          string
	URLTemplate     string // "" for a raw request to an undeclared path
	URLFull         string
	URLScheme       string
	ServerAddress   string
	ServerPort      int
	ProtocolVersion string
	Status          int
	ResendCount     int
	CallStart       time.Time
	Start, End      time.Time
	Duration        time.Duration
	RateLimitWait   time.Duration
	RetryWait       time.Duration
	ErrorKind       Kind // 0 when it succeeded
	ErrorType       string
	RetryReason     string
	Propagate       bool
	Events          []callEvent
}

// callEvent is what happened since the previous report (roomchat_call_event).
type callEvent struct {
	Kind         eventKind
	Attempt      int
	Name         string
	At           time.Time
	Wait         time.Duration
	RetryReason  string
	Status       int
	ErrorKind    Kind
	ErrorType    string
	ErrorMessage string
}

// attemptHeaders sets headers on the attempt whose start is reported; valid
// only during the report.
type attemptHeaders struct {
	ptr *C.struct_roomchat_attempt_headers
}

// Set puts name: value on the attempt (trace context, from the propagator).
func (h attemptHeaders) Set(name, value string) error {
	if h.ptr == nil {
		return nil
	}
	cn, err := cString("header name", name)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(cn))
	cv, err := cString("header value", value)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(cv))
	var cErr *C.struct_roomchat_error
	return check(C.roomchat_attempt_headers_set(h.ptr, cn, cv, &cErr), cErr)
}

func unixNs(ns C.uint64_t) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, int64(ns))
}

// recurring holds one Go copy of each string that recurs report after report
// (an operation's name, its method and URL template, the scheme, the server's
// address, the protocol, an error's type, a retry's reason): a report reads
// them without copying them again, which took 12 of the 33 allocations of a
// call (issue 52, item 7). Bounded: past maxRecurring strings, new ones are
// copied each time.
var recurring struct {
	sync.RWMutex
	strings map[string]string
}

const maxRecurring = 1024

// recurringString is goString for a string of the few that recur.
func recurringString(s *C.char) string {
	if s == nil {
		return ""
	}
	text := unsafe.Slice((*byte)(unsafe.Pointer(s)), C.strlen(s))
	recurring.RLock()
	known, ok := recurring.strings[string(text)] // a lookup copies nothing
	recurring.RUnlock()
	if ok {
		return known
	}
	copied := string(text)
	recurring.Lock()
	if recurring.strings == nil {
		recurring.strings = make(map[string]string)
	}
	if len(recurring.strings) < maxRecurring {
		recurring.strings[copied] = copied
	}
	recurring.Unlock()
	return copied
}

func readObservation(o *C.struct_roomchat_observation) *observation {
	obs := &observation{
		Kind:            observationKind(o.kind),
		Attempt:         int(o.attempt),
		CallID:          uint64(o.call_id),
		ClientID:        uint64(o.client_id),
		Operation:       recurringString(o.operation),
		Method:          recurringString(o.method),
		URLTemplate:     recurringString(o.url_template),
		URLFull:         goString(o.url_full),
		URLScheme:       recurringString(o.url_scheme),
		ServerAddress:   recurringString(o.server_address),
		ServerPort:      int(o.server_port),
		ProtocolVersion: recurringString(o.protocol_version),
		Status:          int(o.status),
		ResendCount:     int(o.resend_count),
		CallStart:       unixNs(o.call_start_unix_ns),
		Start:           unixNs(o.start_unix_ns),
		End:             unixNs(o.end_unix_ns),
		Duration:        time.Duration(o.duration_ns),
		RateLimitWait:   time.Duration(o.rate_limit_wait_ns),
		RetryWait:       time.Duration(o.retry_wait_ns),
		ErrorKind:       Kind(o.error_kind),
		ErrorType:       recurringString(o.error_type),
		RetryReason:     recurringString(o.retry_reason),
		Propagate:       bool(o.propagate_trace_context),
	}
	for i := C.size_t(0); i < o.event_count; i++ {
		e := C.rcgo_event(o, i)
		if e == nil {
			continue
		}
		obs.Events = append(obs.Events, callEvent{
			Kind:         eventKind(e.kind),
			Attempt:      int(e.attempt),
			Name:         recurringString(e.name),
			At:           unixNs(e.at_unix_ns),
			Wait:         time.Duration(e.wait_ns),
			RetryReason:  recurringString(e.retry_reason),
			Status:       int(e.status),
			ErrorKind:    Kind(e.error_kind),
			ErrorType:    recurringString(e.error_type),
			ErrorMessage: goString(e.error_message),
		})
	}
	return obs
}

//export rcgoObserve
func rcgoObserve(clientKey C.uintptr_t, callKey C.uintptr_t, o *C.struct_roomchat_observation, headers *C.struct_roomchat_attempt_headers) {
	// Nothing may unwind into the library: a panic of a telemetry hook (an
	// exporter, a propagator) costs its report only.
	defer func() { _ = recover() }()
	sh, ok := cgo.Handle(clientKey).Value().(*shared)
	if !ok || sh.telemetry == nil {
		return
	}
	cs := lookupCall(callKey)
	if cs == nil {
		return
	}
	sh.telemetry.observe(cs, readObservation(o), attemptHeaders{ptr: headers})
}

//export rcgoLog
func rcgoLog(clientKey C.uintptr_t, callKey C.uintptr_t, level C.uint32_t, line *C.char) {
	defer func() { _ = recover() }()
	sh, ok := cgo.Handle(clientKey).Value().(*shared)
	if !ok || sh.settings.logger == nil {
		return
	}
	ctx := context.Background()
	if cs := lookupCall(callKey); cs != nil {
		ctx = cs.ctx
	}
	lvl := slog.LevelDebug
	if level == C.ROOMCHAT_LOG_LEVEL_WARNING {
		lvl = slog.LevelWarn
	}
	sh.settings.logger.Log(ctx, lvl, goString(line))
}

//export rcgoRelease
func rcgoRelease(clientKey C.uintptr_t) {
	cgo.Handle(clientKey).Delete()
}
