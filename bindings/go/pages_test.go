package roomchat_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/roomchat/roomchat-go"
	"github.com/roomchat/roomchat-go/roomchattest"
)

// skips is the skip and the status of each request to path, in order.
func skips(emu *roomchattest.Emulator, path string) []string {
	var out []string
	for _, e := range emu.Journal() {
		if e.Path == path {
			out = append(out, fmt.Sprintf("%s:%d", e.Params.Get("skip"), e.Status))
		}
	}
	return out
}

const usersPath = "/consumer/api/v2/users"

var pagesOf200 = &roomchat.ListUsersParams{Limit: roomchat.Int(200)}

// Every record of a seeded listing, each once, in order; and a room's
// messages seeded through the admin API.
func TestIteratorsGiveEveryRecord(t *testing.T) {
	emu := roomchattest.Start(t, roomchattest.WithSeedUsers(450))
	client := emu.Client(t)
	ctx := context.Background()
	var names []string
	for user, err := range client.IterListUsers(ctx, pagesOf200) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, *user.Username)
	}
	if len(names) != 450 {
		t.Fatalf("%d users, want 450", len(names))
	}
	for i, name := range names {
		if want := fmt.Sprintf("seed-user-%d", i+1); name != want {
			t.Fatalf("user %d is %s, want %s", i, name, want)
		}
	}
	if got := skips(emu, usersPath); fmt.Sprint(got) != "[0:200 200:200 400:200]" {
		t.Fatalf("pages fetched: %v", got)
	}

	room := emu.CreateRoom(nil)["roomId"].(string)
	emu.SeedMessages(room, "", 250)
	var texts []string
	for message, err := range client.IterRoomMessages(ctx, room, &roomchat.RoomMessagesParams{Limit: roomchat.Int(100)}) {
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, *message.Message)
	}
	if len(texts) != 250 || texts[0] != "message 1" || texts[249] != "message 250" {
		t.Fatalf("%d messages: %v ... ", len(texts), texts[:min(3, len(texts))])
	}
	// The same through the runtime's pages by the operation's name.
	n := 0
	for _, err := range roomchat.Pages(client, ctx, "room_messages", map[string]any{"roomId": room, "limit": 100}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 3 {
		t.Fatalf("%d pages of 100 for 250 messages", n)
	}
}

// A loop that breaks half-way fetches no more pages.
func TestIteratorBreak(t *testing.T) {
	emu := roomchattest.Start(t, roomchattest.WithSeedUsers(450))
	client := emu.Client(t)
	n := 0
	for _, err := range client.IterListUsers(context.Background(), pagesOf200) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if n == 201 { // the first record of the second page
			break
		}
	}
	if got := skips(emu, usersPath); fmt.Sprint(got) != "[0:200 200:200]" {
		t.Fatalf("pages fetched: %v", got)
	}
}

// A ctx cancelled half-way: the next step yields the cancel error, then the
// iteration stops even though the loop goes on; nothing more is sent.
func TestIteratorCancel(t *testing.T) {
	emu := roomchattest.Start(t, roomchattest.WithSeedUsers(450))
	client := emu.Client(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var pages, errs int
	for page, err := range client.ListUsersPages(ctx, pagesOf200) {
		if err != nil {
			errs++
			asError(t, err, roomchat.KindCancelled)
			if !errors.Is(err, context.Canceled) || page != nil {
				t.Fatal(err)
			}
			continue // the loop goes on: the iterator must stop by itself
		}
		pages++
		cancel()
	}
	if pages != 1 || errs != 1 {
		t.Fatalf("%d pages, %d errors; want 1 and 1", pages, errs)
	}
	if got := skips(emu, usersPath); fmt.Sprint(got) != "[0:200]" {
		t.Fatalf("pages fetched: %v", got)
	}
}

// An error mid-way is yielded; a loop that goes on fetches the same page
// again, and gets every record once.
func TestIteratorErrorThenContinue(t *testing.T) {
	emu := roomchattest.Start(t, roomchattest.WithSeedUsers(450))
	client := emu.Client(t, roomchat.WithMaxRetries(0))
	// The first page passes, the second is answered 500 once.
	emu.Fault(roomchattest.Fault{Path: usersPath, Action: roomchattest.Delay(0)})
	emu.Fault(roomchattest.Fault{Path: usersPath, Action: roomchattest.Respond(500, `{"message":"boom"}`, nil)})
	seen := map[string]int{}
	errs := 0
	for user, err := range client.IterListUsers(context.Background(), pagesOf200) {
		if err != nil {
			errs++
			asError(t, err, roomchat.KindServerError)
			continue
		}
		seen[*user.Username]++
	}
	if len(seen) != 450 || errs != 1 {
		t.Fatalf("%d users, %d errors; want 450 and 1", len(seen), errs)
	}
	for name, n := range seen {
		if n != 1 {
			t.Fatalf("%s yielded %d times", name, n)
		}
	}
	if got := skips(emu, usersPath); fmt.Sprint(got) != "[0:200 200:500 200:200 400:200]" {
		t.Fatalf("pages fetched: %v", got)
	}
}
