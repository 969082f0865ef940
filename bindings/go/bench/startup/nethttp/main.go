// Command nethttp is the first-answer program of the Go benchmark written
// without the package: net/http and encoding/json, from the same environment
// variables as ../roomchat, into a struct of its own with the page's JSON
// fields (roomchat.UserPage would link the package in, whose start is what the
// other program measures). ../../main.go runs it and times it beside ../roomchat.
package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"time"
)

type user struct {
	ID       string `json:"_id"`
	Username string `json:"username"`
}

type userPage struct {
	Total uint64  `json:"total"`
	Limit uint64  `json:"limit"`
	Skip  uint64  `json:"skip"`
	Data  []*user `json:"data"`
}

func main() {
	client := &http.Client{Timeout: 30 * time.Second}
	target := os.Getenv("ROOMCHAT_BASE_URL") + "/consumer/api/v2/users?" +
		url.Values{"auth": {os.Getenv("ROOMCHAT_PRIVATE_KEY")}, "limit": {"50"}}.Encode()
	resp, err := client.Get(target)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintln(os.Stderr, "list_users: HTTP", resp.StatusCode)
		os.Exit(1)
	}
	var page userPage
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(len(page.Data))
}
