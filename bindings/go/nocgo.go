//go:build !cgo

package roomchat

// roomchat is Go over core's C library (roomchat.h): it needs cgo. Without it
// (CGO_ENABLED=0, or no C compiler found) the build fails here, with one
// message naming this package: set CGO_ENABLED=1 and install gcc or clang.
import _ "github.com/roomchat/roomchat-go/internal/roomchat_needs_cgo__set_CGO_ENABLED_1_and_install_gcc_or_clang"
