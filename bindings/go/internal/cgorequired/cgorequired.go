//go:build !cgo

// Package cgorequired fails a build without cgo with one clear message: the
// roomchat package links its native library through cgo, so CGO_ENABLED=0 (or
// no C compiler, which turns cgo off) cannot build it. It is imported only by
// nocgo.go (`//go:build !cgo`); the failure is in a package of its own so that
// the compiler reports this one line, not every use of the cgo files that a
// build without cgo leaves out.
package cgorequired

// The undefined name below is the message the compiler prints.
var _ = roomchat_needs_cgo__build_with_CGO_ENABLED_1_and_a_C_compiler_on_PATH_such_as_gcc_or_clang
