package roomchat

/*
#include "capi.h"
*/
import "C"

import (
	"encoding/json"
	"net/http"
	"unsafe"
)

// WireRequest is the HTTP request core builds for an operation (BuildRequest).
type WireRequest struct {
	// Method is the HTTP method, upper case.
	Method string `json:"method"`
	// Path is the path, its parameters percent-encoded.
	Path string `json:"path"`
	// Query holds the query's name/value pairs in order (the key's is added when sent).
	Query [][2]string `json:"query"`
	// Body is the JSON body, null for none.
	Body json.RawMessage `json:"body"`
	// Auth says which key authenticates it: private_key, public_key or none.
	Auth string `json:"auth"`
	// URL is the whole URL (BuildRequestURL only), the key as given.
	URL string `json:"url,omitempty"`
}

// BuildRequest is the request core sends for the declared operation (its
// snake_case name) with params (JSON by the wire names, as the conformance
// vectors give them), built without sending anything: for a program with an
// HTTP stack of its own. Params the declaration refuses give KindValidation.
func BuildRequest(operation string, params any) (*WireRequest, error) {
	return buildRequest(operation, params, nil, nil)
}

// BuildRequestURL is BuildRequest with the whole URL at baseURL, key as the
// key's query parameter (shown as given: pass a placeholder to log it).
func BuildRequestURL(operation string, params any, baseURL, key string) (*WireRequest, error) {
	return buildRequest(operation, params, &baseURL, &key)
}

func buildRequest(operation string, params any, baseURL, key *string) (*WireRequest, error) {
	cOp, cParams, err := callArgs(operation, params)
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(cOp))
	if cParams != nil {
		defer C.free(unsafe.Pointer(cParams))
	}
	var cBase, cKey *C.char
	if baseURL != nil {
		if cBase, err = cString("base URL", *baseURL); err != nil {
			return nil, err
		}
		defer C.free(unsafe.Pointer(cBase))
		if cKey, err = cString("key", *key); err != nil {
			return nil, err
		}
		defer C.free(unsafe.Pointer(cKey))
	}
	var out *C.char
	var cErr *C.struct_roomchat_error
	if err := check(C.roomchat_wire_build_request(cOp, cParams, cBase, cKey, &out, &cErr), cErr); err != nil {
		return nil, err
	}
	var request WireRequest
	if err := json.Unmarshal(takeBytes(out), &request); err != nil {
		return nil, &Error{Kind: KindDecode, Message: err.Error()}
	}
	return &request, nil
}

// DecodeResponse decodes an answer of the declared operation without I/O:
// the record's JSON (by the wire names, unknown fields kept), which
// json.Unmarshal reads into the operation's result type; an error answer
// gives its *Error, as a call would.
func DecodeResponse(operation string, status int, header http.Header, body []byte) (json.RawMessage, error) {
	if status < 100 || status > 599 {
		return nil, &Error{Kind: KindInvalidArgument, Message: "status must be 100 to 599"}
	}
	cOp, err := cString("operation", operation)
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(cOp))
	pairs := [][2]string{}
	for name, values := range header {
		for _, v := range values {
			pairs = append(pairs, [2]string{name, v})
		}
	}
	headerJSON, _ := json.Marshal(pairs)
	cHeaders, err := cString("headers", string(headerJSON))
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(cHeaders))
	var cBody *C.uint8_t
	if len(body) > 0 {
		cBody = (*C.uint8_t)(C.CBytes(body))
		defer C.free(unsafe.Pointer(cBody))
	}
	var out *C.char
	var cErr *C.struct_roomchat_error
	if err := check(C.roomchat_wire_decode_response(cOp, C.uint16_t(status), cHeaders, cBody, C.size_t(len(body)), &out, &cErr), cErr); err != nil {
		return nil, err
	}
	return json.RawMessage(takeBytes(out)), nil
}
