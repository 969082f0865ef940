package roomchat

// TEMPORARY (packaging branch): a call through the static library, so that the
// packaging's links and clean rooms exercise it before the runtime lands. The
// runtime replaces this file.

/*
#include <stdlib.h>
#include "roomchat.h"
*/
import "C"

import (
	"errors"
	"unsafe"
)

// LibraryVersion is the linked library's version.
func LibraryVersion() string { return C.GoString(C.roomchat_version()) }

// CallJSON calls the operation op with JSON params against baseURL, as the
// runtime's invoke will; it returns the JSON answer.
func CallJSON(baseURL, privateKey, op, params string) (string, error) {
	cKey, cURL, cOp, cParams := C.CString(privateKey), C.CString(baseURL), C.CString(op), C.CString(params)
	defer func() {
		for _, p := range []*C.char{cKey, cURL, cOp, cParams} {
			C.free(unsafe.Pointer(p))
		}
	}()
	var options *C.struct_roomchat_client_options
	var cErr *C.struct_roomchat_error
	fail := func() error {
		defer C.roomchat_error_free(cErr)
		if cErr == nil {
			return errors.New("roomchat: failed")
		}
		return errors.New(C.GoString(C.roomchat_error_message(cErr)))
	}
	if C.roomchat_client_options_new(cKey, &options, &cErr) != C.ROOMCHAT_RESULT_OK {
		return "", fail()
	}
	defer C.roomchat_client_options_free(options)
	if C.roomchat_client_options_set_base_url(options, cURL) != C.ROOMCHAT_RESULT_OK {
		return "", errors.New("roomchat: bad base URL")
	}
	var client *C.struct_roomchat_client
	if C.roomchat_client_new(options, &client, &cErr) != C.ROOMCHAT_RESULT_OK {
		return "", fail()
	}
	defer C.roomchat_client_free(client)
	var out *C.char
	if C.roomchat_client_call_operation(client, cOp, cParams, &out, nil, &cErr) != C.ROOMCHAT_RESULT_OK {
		return "", fail()
	}
	defer C.roomchat_string_free(out)
	return C.GoString(out), nil
}
