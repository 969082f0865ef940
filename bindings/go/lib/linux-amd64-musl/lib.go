//go:build linux && amd64 && roomchat_musl && cgo

// Package lib links roomchat's native library into a program that imports
// github.com/roomchat/roomchat-go on Linux x86-64 with musl (Alpine), build tag roomchat_musl: the static library
// libroomchat.a beside this file (core's release build for x86_64-unknown-linux-musl),
// LLVM's libunwind.a beside it (the one Rust's x86_64-unknown-linux-musl target
// carries, rustlib/x86_64-unknown-linux-musl/lib/self-contained: Rust's standard library
// unwinds with it, and musl systems have none to link; Apache-2.0 WITH
// LLVM-exception), and the system libraries Rust's standard library needs there (what
// `cargo rustc --target x86_64-unknown-linux-musl -p roomchat-ffi --crate-type staticlib --
// --print native-static-libs` prints). Nothing is loaded at run time: the
// program carries the library.
//
// The main module imports this package by build constraints; a program never
// imports it itself. The libraries are not committed: scripts/dist/go.sh cross builds it.
package lib

/*
#cgo LDFLAGS: ${SRCDIR}/libroomchat.a ${SRCDIR}/libunwind.a -lc
*/
import "C"
