module github.com/roomchat/roomchat-go/lib/linux-arm64-musl

go 1.23
