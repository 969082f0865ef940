module github.com/roomchat/roomchat-go/lib/linux-amd64-musl

go 1.23
