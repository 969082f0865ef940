package roomchat

// The cgo side: every C function of include/roomchat.h this package calls goes
// through the helpers of this file, which turn Go strings into C ones and the
// library's errors into *Error.

/*
#include "capi.h"
*/
import "C"

import (
	"unsafe"
)

// cString is a C copy of s, freed by the caller with C.free. A Go string
// holding a NUL cannot cross: the library would read it cut short.
func cString(name, s string) (*C.char, error) {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return nil, &Error{Kind: KindInvalidArgument, Message: name + " holds a NUL byte"}
		}
	}
	return C.CString(s), nil
}

// goString copies a NUL-terminated C string; NULL is "".
func goString(s *C.char) string {
	if s == nil {
		return ""
	}
	return C.GoString(s)
}

// takeString copies and frees a string the library handed over.
func takeString(s *C.char) string {
	text := goString(s)
	C.roomchat_string_free(s)
	return text
}

// takeBytes copies and frees a string the library handed over, as bytes.
func takeBytes(s *C.char) []byte {
	if s == nil {
		return nil
	}
	b := C.GoBytes(unsafe.Pointer(s), C.int(C.strlen(s)))
	C.roomchat_string_free(s)
	return b
}

// check turns a result code and its error object into an *Error (nil on OK),
// freeing the object.
func check(code C.roomchat_result, err *C.struct_roomchat_error) error {
	if code == C.ROOMCHAT_RESULT_OK {
		if err != nil {
			C.roomchat_error_free(err)
		}
		return nil
	}
	return takeError(code, err)
}
