//go:build cgo

// Package needscgo is imported by a build without cgo only, where its one file
// is left out, so that such a build fails with one message that names it:
// roomchat is Go over core's C library and needs cgo (CGO_ENABLED=1) and a C
// toolchain (gcc or clang).
package needscgo
