module github.com/roomchat/roomchat-go/lib/windows-amd64

go 1.23
