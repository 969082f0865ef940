module github.com/roomchat/roomchat-go/lib/darwin-amd64

go 1.23
