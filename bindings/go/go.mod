module github.com/roomchat/roomchat-go

go 1.23

require (
	github.com/roomchat/roomchat-go/lib/darwin-amd64 v0.1.0
	github.com/roomchat/roomchat-go/lib/darwin-arm64 v0.1.0
	github.com/roomchat/roomchat-go/lib/linux-amd64 v0.1.0
	github.com/roomchat/roomchat-go/lib/linux-amd64-musl v0.1.0
	github.com/roomchat/roomchat-go/lib/linux-arm64 v0.1.0
	github.com/roomchat/roomchat-go/lib/linux-arm64-musl v0.1.0
	github.com/roomchat/roomchat-go/lib/windows-amd64 v0.1.0
)
