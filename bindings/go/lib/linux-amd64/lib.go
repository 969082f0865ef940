// Package linuxamd64 links core's static library for Linux x86-64 (glibc)
// into a program that imports github.com/roomchat/roomchat-go.
package linuxamd64

// #cgo LDFLAGS: ${SRCDIR}/libroomchat.a -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
import "C"
