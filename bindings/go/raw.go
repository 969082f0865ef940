package roomchat

/*
#include "capi.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"unsafe"
)

// RawAuth says which key authenticates a raw request.
type RawAuth string

const (
	// RawAuthPrivateKey sends the private key as `auth` (the default).
	RawAuthPrivateKey RawAuth = "private_key"
	// RawAuthPublicKey sends the public key as `publicKey`.
	RawAuthPublicKey RawAuth = "public_key"
	// RawAuthNone sends no key.
	RawAuthNone RawAuth = "none"
)

// RawRequest is a request to an operation without a declared shape.
type RawRequest struct {
	// Method is GET, POST, PUT, PATCH or DELETE.
	Method string
	// Path is the path, e.g. /consumer/api/v1/chatrooms.
	Path string
	// Query holds name/value pairs, sent in order.
	Query [][2]string
	// Body is sent as JSON when not nil.
	Body any
	// Auth is which key authenticates it (default RawAuthPrivateKey).
	Auth RawAuth
}

// RawResponse is a raw request's answer: its status, every header, and its JSON body.
type RawResponse struct {
	*Response
	// JSON is the body's JSON (null for an empty body).
	JSON json.RawMessage
}

// Raw sends a request to an operation without a declared shape, through the
// client's budget, retries (as its method allows) and error decoding: a
// non-2xx answer is an *Error.
func (c *Client) Raw(ctx context.Context, request RawRequest, opts ...CallOption) (*RawResponse, error) {
	auth := request.Auth
	if auth == "" {
		auth = RawAuthPrivateKey
	}
	query := request.Query
	if query == nil {
		query = [][2]string{}
	}
	params := map[string]any{"method": request.Method, "path": request.Path, "query": query, "auth": auth}
	if request.Body != nil {
		params["body"] = request.Body
	}
	var out struct {
		Status int             `json:"status"`
		Body   json.RawMessage `json:"body"`
	}
	response, err := c.invokeWithResponse(ctx, "raw", params, &out, opts)
	if err != nil {
		return nil, err
	}
	response.Body = out.Body
	return &RawResponse{Response: response, JSON: out.Body}, nil
}

// SignInURL is the browser address that signs the holder of accessToken in
// to roomID (needs WithChatURL). No request is sent.
func (c *Client) SignInURL(roomID, accessToken string) (string, error) {
	return c.text(func(ptr *C.struct_roomchat_client, a, b *C.char, out **C.char, cErr **C.struct_roomchat_error) C.roomchat_result {
		return C.roomchat_client_sign_in_url(ptr, a, b, out, cErr)
	}, roomID, accessToken)
}

// IframeHTML is an <iframe> element for the sign-in address, width and
// height as given ("100%", "600"), HTML-escaped. No request is sent.
func (c *Client) IframeHTML(roomID, accessToken, width, height string) (string, error) {
	cw, err := cString("width", width)
	if err != nil {
		return "", err
	}
	defer C.free(unsafe.Pointer(cw))
	ch, err := cString("height", height)
	if err != nil {
		return "", err
	}
	defer C.free(unsafe.Pointer(ch))
	return c.text(func(ptr *C.struct_roomchat_client, a, b *C.char, out **C.char, cErr **C.struct_roomchat_error) C.roomchat_result {
		return C.roomchat_client_iframe_html(ptr, a, b, cw, ch, out, cErr)
	}, roomID, accessToken)
}

func (c *Client) text(fn func(*C.struct_roomchat_client, *C.char, *C.char, **C.char, **C.struct_roomchat_error) C.roomchat_result, a, b string) (string, error) {
	ca, err := cString("room id", a)
	if err != nil {
		return "", err
	}
	defer C.free(unsafe.Pointer(ca))
	cb, err := cString("access token", b)
	if err != nil {
		return "", err
	}
	defer C.free(unsafe.Pointer(cb))
	ptr, err := c.enter()
	if err != nil {
		return "", err
	}
	defer c.leave()
	var out *C.char
	var cErr *C.struct_roomchat_error
	if err := check(fn(ptr, ca, cb, &out, &cErr), cErr); err != nil {
		return "", err
	}
	return takeString(out), nil
}
