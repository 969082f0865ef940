// A stand-in for bindings/go/README.md's quickstart until the README exists
// (scripts/dist/go.sh builds that block, after the line `<!-- go: quickstart -->`,
// once it does): one call through the static library against the service that
// ROOMCHAT_BASE_URL and ROOMCHAT_PRIVATE_KEY name.
package main

import (
	"fmt"
	"log"
	"os"

	"github.com/roomchat/roomchat-go"
)

func main() {
	page, err := roomchat.CallJSON(os.Getenv("ROOMCHAT_BASE_URL"), os.Getenv("ROOMCHAT_PRIVATE_KEY"), "list_users", `{"limit":2}`)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("roomchat %s: list_users answered %d bytes\n", roomchat.LibraryVersion(), len(page))
}
