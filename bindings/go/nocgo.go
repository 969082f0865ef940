//go:build !cgo

package roomchat

// roomchat calls its native library (core's static library, linked into the
// program) through cgo. Without cgo the build fails here with one message, from
// the package imported below: its only file names the fix.
import _ "github.com/roomchat/roomchat-go/internal/cgorequired"
