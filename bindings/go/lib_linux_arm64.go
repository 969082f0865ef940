//go:build linux && arm64 && !roomchat_musl && cgo

package roomchat

// Linux arm64 with glibc (2.17 or newer): the static library of this platform's module.
import _ "github.com/roomchat/roomchat-go/lib/linux-arm64"
