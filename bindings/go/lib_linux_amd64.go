//go:build linux && amd64 && !roomchat_musl && cgo

package roomchat

// Linux x86-64 with glibc (2.17 or newer): the static library of this platform's module.
import _ "github.com/roomchat/roomchat-go/lib/linux-amd64"
