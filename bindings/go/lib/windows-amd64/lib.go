//go:build windows && amd64 && cgo

// Package lib links roomchat's native library into a program that imports
// github.com/roomchat/roomchat-go on Windows x64 (mingw-w64 gcc, as cgo uses on Windows): the static library
// libroomchat.a beside this file (core's release build for x86_64-pc-windows-gnu),
// and the system libraries Rust's standard library needs there (what
// `cargo rustc --target x86_64-pc-windows-gnu -p roomchat-ffi --crate-type staticlib --
// --print native-static-libs` prints). Nothing is loaded at run time: the
// program carries the library.
//
// The main module imports this package by build constraints; a program never
// imports it itself. The library is not committed: the release workflow builds it.
package lib

/*
#cgo LDFLAGS: ${SRCDIR}/libroomchat.a -lkernel32 -ladvapi32 -lbcrypt -lntdll -luserenv -lws2_32 -ldbghelp -lgcc_eh -l:libpthread.a -lmsvcrt -lmingwex -lmingw32 -lgcc -lmsvcrt -luser32 -lkernel32
*/
import "C"
