//go:build linux && arm64 && !roomchat_musl && cgo

// Package lib links roomchat's native library into a program that imports
// github.com/roomchat/roomchat-go on Linux arm64 with glibc (2.17 or newer): the static library
// libroomchat.a beside this file (core's release build for aarch64-unknown-linux-gnu),
// and the system libraries Rust's standard library needs there (what
// `cargo rustc --target aarch64-unknown-linux-gnu -p roomchat-ffi --crate-type staticlib --
// --print native-static-libs` prints). Nothing is loaded at run time: the
// program carries the library.
//
// The main module imports this package by build constraints; a program never
// imports it itself. The library is not committed: scripts/dist/go.sh cross builds it.
package lib

/*
#cgo LDFLAGS: ${SRCDIR}/libroomchat.a -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
*/
import "C"
