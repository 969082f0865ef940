//go:build darwin && arm64 && cgo

package roomchat

// macOS on Apple silicon: the static library of this platform's module.
import _ "github.com/roomchat/roomchat-go/lib/darwin-arm64"
