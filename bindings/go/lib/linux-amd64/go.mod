module github.com/roomchat/roomchat-go/lib/linux-amd64

go 1.23
