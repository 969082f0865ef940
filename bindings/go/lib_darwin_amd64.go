//go:build darwin && amd64 && cgo

package roomchat

// macOS on Intel: the static library of this platform's module.
import _ "github.com/roomchat/roomchat-go/lib/darwin-amd64"
