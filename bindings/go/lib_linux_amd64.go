//go:build cgo && linux && amd64 && !roomchat_musl

package roomchat

import _ "github.com/roomchat/roomchat-go/lib/linux-amd64"
