package roomchat

/*
#include "capi.h"
*/
import "C"

import "net/http"

// Response is an answer beside its typed record (the ...WithResponse methods).
type Response struct {
	// StatusCode is the answer's HTTP status.
	StatusCode int
	// Header holds the answer's headers (every one for a raw request; those
	// the library reads otherwise), canonical names.
	Header http.Header
	// Attempts is how many attempts the call made.
	Attempts int
	// RequestID is the service's request id header, when it sent one.
	RequestID string
	// Body is the answer's JSON as the library decoded it (the record's JSON).
	Body []byte
}

func takeResponse(meta *C.struct_roomchat_response_meta) *Response {
	defer C.roomchat_response_meta_free(meta)
	r := &Response{
		StatusCode: int(C.roomchat_response_meta_status(meta)),
		Attempts:   int(C.roomchat_response_meta_attempts(meta)),
		RequestID:  goString(C.roomchat_response_meta_request_id(meta)),
		Header:     http.Header{},
	}
	n := C.roomchat_response_meta_header_count(meta)
	for i := C.size_t(0); i < n; i++ {
		r.Header.Add(goString(C.roomchat_response_meta_header_name(meta, i)), goString(C.roomchat_response_meta_header_value(meta, i)))
	}
	return r
}
