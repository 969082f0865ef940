// Command roomchat is the first-answer program of the Go benchmark: a fresh
// process makes a client from the environment, lists 50 users, prints how many
// it got, and exits. ../../main.go runs it and times it beside ../nethttp.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/roomchat/roomchat-go"
)

func main() {
	client, err := roomchat.NewClientFromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer client.Close()
	page, err := client.ListUsers(context.Background(), &roomchat.ListUsersParams{Limit: roomchat.Int(50)})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(len(page.Data))
}
