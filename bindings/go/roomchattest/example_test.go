package roomchattest_test

import (
	"context"
	"testing"
	"time"

	"github.com/roomchat/roomchat-go"
	"github.com/roomchat/roomchat-go/roomchattest"
)

// listRooms is the code under test: it counts the account's rooms (the
// client waits out a 429's Retry-After and tries again by itself).
func listRooms(ctx context.Context, client *roomchat.Client) (int, error) {
	rooms, err := client.ListChatRooms(ctx)
	return len(rooms), err
}

// A test of your own code against the emulator, in a _test.go file of yours:
// the service answers 429 once, and the journal shows that the client waited
// and tried again.
func Example() {
	testListRooms := func(t *testing.T) {
		emu := roomchattest.Start(t, roomchattest.WithSeedUsers(3)) // stopped when the test ends
		emu.CreateRoom(map[string]any{"name": "support"})
		emu.FailNext("/consumer/api/v1/chatrooms", 429, time.Second)
		client := emu.Client(t) // closed when the test ends

		n, err := listRooms(context.Background(), client)
		if err != nil || n != 1 {
			t.Fatalf("%d rooms, %v", n, err)
		}
		journal := emu.Journal()
		if len(journal) != 2 || journal[0].Status != 429 || journal[1].Status != 200 {
			t.Fatalf("%+v", journal)
		}
		if waited := journal[1].ReceivedAt.Sub(journal[0].ReceivedAt); waited < time.Second {
			t.Fatalf("tried again after %v", waited)
		}
		if journal[1].Params.Get("auth") != "REDACTED" {
			t.Fatal("the key is shown")
		}
	}
	_ = testListRooms // func TestListRooms(t *testing.T) { ... } in your package
}
