//go:build darwin && amd64 && cgo

// Package lib links roomchat's native library into a program that imports
// github.com/roomchat/roomchat-go on macOS on Intel: the static library
// libroomchat.a beside this file (core's release build for x86_64-apple-darwin),
// and the system libraries Rust's standard library needs there (what
// `cargo rustc --target x86_64-apple-darwin -p roomchat-ffi --crate-type staticlib --
// --print native-static-libs` prints). Nothing is loaded at run time: the
// program carries the library.
//
// The main module imports this package by build constraints; a program never
// imports it itself. The library is not committed: the release workflow builds it.
package lib

/*
#cgo LDFLAGS: ${SRCDIR}/libroomchat.a -framework CoreFoundation -framework Security -liconv -lSystem -lc -lm
*/
import "C"
