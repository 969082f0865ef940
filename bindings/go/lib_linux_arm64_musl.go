//go:build linux && arm64 && roomchat_musl && cgo

package roomchat

// Linux arm64 with musl (Alpine), build tag roomchat_musl: the static library of this platform's module.
import _ "github.com/roomchat/roomchat-go/lib/linux-arm64-musl"
