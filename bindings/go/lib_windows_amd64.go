//go:build windows && amd64 && cgo

package roomchat

// Windows x64 (mingw-w64 gcc, as cgo uses on Windows): the static library of this platform's module.
import _ "github.com/roomchat/roomchat-go/lib/windows-amd64"
