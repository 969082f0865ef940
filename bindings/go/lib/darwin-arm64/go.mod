module github.com/roomchat/roomchat-go/lib/darwin-arm64

go 1.23
