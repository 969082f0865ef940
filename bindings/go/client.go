package roomchat

/*
#include "capi.h"
*/
import "C"

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"reflect"
	"runtime"
	"runtime/cgo"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Client calls the service. One client is safe for any number of goroutines,
// and shares its connection pool and rate budget between them; make one per
// key and keep it. Close it when done (a client the program forgets is freed
// by the garbage collector, but its connections stay open until then).
type Client struct {
	*client
}

// client is what Client's finalizer frees: a Client value may be copied, and
// the calls in flight hold a reference to it.
type client struct {
	mu     sync.Mutex // guards closed and each call's start (enter)
	ptr    *C.struct_roomchat_client
	closed bool
	// active counts the calls using ptr: Close frees it once they have
	// ended, without making a call that starts meanwhile wait (it fails at
	// once, and a call waiting for a turn keeps honouring its ctx).
	active sync.WaitGroup
	freed  chan struct{} // closed once ptr is freed
	// inFlight bounds the calls in C at once: each holds an OS thread, and a
	// Go process stops at 10,000 threads.
	inFlight chan struct{}
	shared   *shared
	key      cgo.Handle
}

// shared is what the library's callbacks reach through the client's handle.
type shared struct {
	settings  *settings
	telemetry *telemetry
}

// NewClient makes a client for the account's private key. The options set
// the base URL (required, or ROOMCHAT_BASE_URL through NewClientFromEnv), the
// timeouts, retries, rate budget, TLS, proxy, logging and telemetry.
func NewClient(privateKey string, opts ...Option) (*Client, error) {
	s := defaultSettings()
	for _, opt := range opts {
		opt(s)
	}
	return newClient(privateKey, s)
}

// NewClientFromEnv makes a client from the environment, as every roomchat
// package reads it: ROOMCHAT_PRIVATE_KEY and ROOMCHAT_BASE_URL (both
// required), and ROOMCHAT_CHAT_URL, ROOMCHAT_PUBLIC_KEY, ROOMCHAT_APP_NAME
// when set. The options given apply after them.
func NewClientFromEnv(opts ...Option) (*Client, error) {
	s := defaultSettings()
	s.fromEnv = true
	for _, opt := range opts {
		opt(s)
	}
	return newClient("", s)
}

func newClient(privateKey string, s *settings) (*Client, error) {
	if s.err != nil {
		return nil, s.err
	}
	if s.maxInFlight < 1 {
		// DefaultMaxInFlight is a variable a program may have set to 0 or below.
		return nil, &Error{Kind: KindConfiguration, Message: "DefaultMaxInFlight: the bound must be at least 1"}
	}
	options, err := s.newOptions(privateKey)
	if err != nil {
		return nil, err
	}
	var cErr *C.struct_roomchat_error
	defer C.roomchat_client_options_free(options)
	if err := s.apply(options); err != nil {
		return nil, err
	}
	sh := &shared{settings: s}
	sh.telemetry = newTelemetry(s)
	key := cgo.NewHandle(sh)
	// The library owns the handle from here: it deletes it (rcgoRelease) once
	// no client, view or iterator made from these options holds it.
	if err := check(C.rcgo_set_observer(options, C.uintptr_t(key)), nil); err != nil {
		key.Delete()
		return nil, err
	}
	if s.logger != nil {
		// Debug lines cross only when the logger wants them.
		lowest := C.uint32_t(C.ROOMCHAT_LOG_LEVEL_WARNING)
		if s.logger.Enabled(context.Background(), slog.LevelDebug) {
			lowest = C.ROOMCHAT_LOG_LEVEL_DEBUG
		}
		if err := check(C.rcgo_set_log(options, C.uintptr_t(key), lowest), nil); err != nil {
			return nil, err
		}
	}
	c := &client{shared: sh, key: key, inFlight: make(chan struct{}, s.maxInFlight), freed: make(chan struct{})}
	if err := check(C.roomchat_client_new(options, &c.ptr, &cErr), cErr); err != nil {
		return nil, err
	}
	if sh.telemetry != nil {
		sh.telemetry.clientStarted(c)
	}
	runtime.SetFinalizer(c, (*client).free)
	return &Client{c}, nil
}

// Close frees the client once the calls in flight have ended; a call that
// starts after Close began fails at once (KindConfiguration). Close takes no
// ctx: it waits for those calls as long as they last, each bounded by its own
// ctx and the client's timeouts (a call held on the wire: every attempt's
// timeout, 30 s by default). Closing twice does nothing (the second returns
// once the client is freed). As sql.DB's Close waits for its queries, this
// waits for its calls: so never call it from the client's own log handler or
// telemetry hooks, which run inside a call (it would wait for itself).
func (c *Client) Close() error {
	if c == nil || c.client == nil {
		return nil
	}
	c.free()
	runtime.SetFinalizer(c.client, nil)
	return nil
}

// free frees the client once the calls in flight have ended (a second caller
// waits for the first's free).
func (c *client) free() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		<-c.freed
		return
	}
	c.closed = true
	c.mu.Unlock()
	c.active.Wait()
	if c.shared.telemetry != nil {
		c.shared.telemetry.clientClosed(c)
	}
	C.roomchat_client_free(c.ptr)
	c.ptr = nil
	close(c.freed)
}

// enter starts a call on the client's pointer (leave ends it): errClosed
// once Close has begun, errNoClient for a Client NewClient did not make.
func (c *Client) enter() (*C.struct_roomchat_client, error) {
	if c == nil || c.client == nil {
		return nil, errNoClient
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errClosed
	}
	c.active.Add(1)
	return c.ptr, nil
}

func (c *client) leave() { c.active.Done() }

var (
	errClosed   = &Error{Kind: KindConfiguration, Message: "the client is closed"}
	errNoClient = &Error{Kind: KindConfiguration, Message: "the Client was not made by NewClient (a zero or nil Client)"}
)

// nextCallKey numbers the calls in flight for the library's callbacks.
var (
	nextCallKey atomic.Uint64
	calls       sync.Map // uintptr -> *callState
)

// callState is one call in flight, as the library's callbacks see it.
type callState struct {
	ctx       context.Context
	client    *client
	telemetry callTelemetry
	// dispatched: the call is counted in roomchat.client.active_calls from
	// its dispatch (callAs), not from its first report.
	dispatched bool
}

func lookupCall(key C.uintptr_t) *callState {
	if key == 0 {
		return nil
	}
	if cs, ok := calls.Load(uintptr(key)); ok {
		return cs.(*callState)
	}
	return nil
}

// callC is what one C call of the package passes beside the client: the
// call's key for the library's callbacks (0: none needs it), whether its
// observer reports are wanted (capi.c drops them otherwise, in C), and its
// ctx's cancel token (nil: none).
type callC struct {
	key     C.uintptr_t
	observe C.int
	cancel  *C.struct_roomchat_cancel_token
}

// call runs fn (one C call) with the client's pointer (or a view of it
// carrying the call's options and its ctx's cancel token), a turn among the
// calls in flight, and what the callbacks need.
func (c *Client) call(ctx context.Context, opts []CallOption, fn func(ptr *C.struct_roomchat_client, cc callC) error) error {
	return c.callAs(ctx, "", opts, false, fn)
}

// callOp is call for one call of the operation op (as core names it), which
// counts in roomchat.client.active_calls from now to its end: its wait for a
// turn and for the rate budget included, as in the other languages.
func (c *Client) callOp(ctx context.Context, op string, opts []CallOption, fn func(ptr *C.struct_roomchat_client, cc callC) error) error {
	return c.callAs(ctx, op, opts, false, fn)
}

// step is call for an iterator's step: the iterator keeps the view it was
// made from, and the step gets its ctx's cancel token only.
func (c *Client) step(ctx context.Context, fn func(cc callC) error) error {
	return c.callAs(ctx, "", nil, true, func(_ *C.struct_roomchat_client, cc callC) error {
		return fn(cc)
	})
}

// callAs runs fn; op, when not "", is the operation it calls, counted in
// flight from now (an iterator's step is counted from its first report: a
// step does not always send).
func (c *Client) callAs(ctx context.Context, op string, opts []CallOption, tokenOnly bool, fn func(ptr *C.struct_roomchat_client, cc callC) error) error {
	if c == nil || c.client == nil {
		return errNoClient
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return notStarted(ctx)
	}
	t := c.shared.telemetry
	observe := t != nil && t.listens(ctx)
	// The call is known to the callbacks only when one of them will look for
	// it: its reports are wanted, or a log line takes its ctx.
	var cs *callState
	if observe || c.shared.settings.logger != nil {
		cs = &callState{ctx: ctx, client: c.client}
	}
	if observe && op != "" {
		if dispatched := t.dispatch(ctx, op); dispatched != nil {
			cs.dispatched = true
			defer dispatched()
		}
	}
	// A turn: waiting for it holds no thread, and a cancelled ctx ends the wait.
	select {
	case c.inFlight <- struct{}{}:
	default:
		select {
		case c.inFlight <- struct{}{}:
		case <-ctx.Done():
			return notStarted(ctx)
		}
	}
	defer func() { <-c.inFlight }()
	ptr, err := c.enter()
	if err != nil {
		return err
	}
	defer c.leave()
	call, err := newCallView(ctx, ptr, opts, tokenOnly)
	if err != nil {
		return err
	}
	defer call.free()
	if call.view != nil {
		ptr = call.view
	}
	cc := callC{cancel: call.token}
	if cs != nil {
		key := uintptr(nextCallKey.Add(1))
		calls.Store(key, cs)
		defer calls.Delete(key)
		cc.key = C.uintptr_t(key)
	}
	if observe {
		cc.observe = 1
	}
	err = fn(ptr, cc)
	if observe {
		// A failed call's span is ended with its error's description.
		t.callReturned(cs, err)
	}
	runtime.KeepAlive(c.client)
	return fromContext(ctx, err)
}

// notStarted is the error of a call whose ctx ended before it was sent.
func notStarted(ctx context.Context) error {
	return &Error{Kind: KindCancelled, Message: "the context ended before the call was sent: nothing was sent", cause: ctx.Err()}
}

// invoke calls the declared operation op with params (JSON by the wire
// names; nil for none) and decodes its answer into out (nil: dropped).
func (c *Client) invoke(ctx context.Context, op string, params any, out any, opts []CallOption) error {
	_, err := c.invokeMeta(ctx, op, params, out, opts, false)
	return err
}

// invokeWithResponse is invoke with the answer's status, headers and attempts.
func (c *Client) invokeWithResponse(ctx context.Context, op string, params any, out any, opts []CallOption) (*Response, error) {
	return c.invokeMeta(ctx, op, params, out, opts, true)
}

func (c *Client) invokeMeta(ctx context.Context, op string, params any, out any, opts []CallOption, withMeta bool) (*Response, error) {
	cOp, cParams, err := callArgs(op, params)
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(cOp))
	if cParams != nil {
		defer C.free(unsafe.Pointer(cParams))
	}
	var result *C.char
	var response *Response
	err = c.callOp(ctx, op, opts, func(ptr *C.struct_roomchat_client, cc callC) error {
		var meta *C.struct_roomchat_response_meta
		var metaOut **C.struct_roomchat_response_meta
		if withMeta {
			metaOut = &meta
		}
		var cErr *C.struct_roomchat_error
		code := C.rcgo_call(ptr, cc.key, cc.observe, cOp, cParams, &result, metaOut, &cErr)
		if err := check(code, cErr); err != nil {
			return err
		}
		if meta != nil {
			response = takeResponse(meta)
		}
		return nil
	})
	if result != nil {
		defer C.roomchat_string_free(result)
	}
	if err != nil {
		return nil, err
	}
	// The answer is decoded from the library's text itself, freed on return:
	// json.Unmarshal keeps no reference to its input (an UnmarshalJSON copies
	// what it keeps), so a Go copy of it was garbage at once (issue 52, item 7).
	// Response.Body outlives the call: a copy.
	var body []byte
	if result != nil {
		body = unsafe.Slice((*byte)(unsafe.Pointer(result)), C.strlen(result))
	}
	if response != nil {
		response.Body = bytes.Clone(body)
	}
	if out != nil {
		if err := decodeAnswer(body, out); err != nil {
			return response, &Error{Kind: KindDecode, Message: "the answer's JSON does not fit " + op + "'s record: " + err.Error()}
		}
	}
	return response, nil
}

// decodeAnswer decodes JSON text the library wrote into out, as json.Unmarshal
// does. A type that decodes itself (the generated records: a pointer to one)
// is given the text at once: the library's text is one valid JSON value
// (serde_json wrote it), which json.Unmarshal would scan twice more before
// calling the same method (checkValid, then to find the value's end), a
// sixth of the CPU time of a call that lists 50 users (issue 52, item 7).
func decodeAnswer(body []byte, out any) error {
	if u, ok := out.(json.Unmarshaler); ok && len(body) > 0 {
		if v := reflect.ValueOf(out); v.Kind() == reflect.Pointer && !v.IsNil() {
			return u.UnmarshalJSON(body)
		}
	}
	return json.Unmarshal(body, out)
}

// callArgs makes the C arguments of a call: the operation's name and its
// params' JSON text (NULL for none).
func callArgs(op string, params any) (*C.char, *C.char, error) {
	var text []byte
	if params != nil {
		var err error
		if text, err = json.Marshal(params); err != nil {
			return nil, nil, &Error{Kind: KindValidation, Message: op + "'s params cannot be sent as JSON: " + err.Error()}
		}
		if where := notUTF8(reflect.ValueOf(params), "", 0); where != "" {
			return nil, nil, &Error{Kind: KindValidation, Message: op + "'s params: " + where + " is not valid UTF-8 (JSON would send its bad bytes as U+FFFD)"}
		}
	}
	cOp, err := cString("operation", op)
	if err != nil {
		return nil, nil, err
	}
	if text == nil {
		return cOp, nil, nil
	}
	cParams, err := cString(op+"'s params", string(text))
	if err != nil {
		C.free(unsafe.Pointer(cOp))
		return nil, nil, err
	}
	return cOp, cParams, nil
}
