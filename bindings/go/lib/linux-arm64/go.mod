module github.com/roomchat/roomchat-go/lib/linux-arm64

go 1.23
