package roomchat_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/roomchat/roomchat-go"
	"github.com/roomchat/roomchat-go/roomchattest"
)

type userPage struct {
	Total int `json:"total"`
	Data  []struct {
		Username string `json:"username"`
	} `json:"data"`
}

type messagePage struct {
	Messages []struct {
		Message string `json:"message"`
	} `json:"messages"`
}

func decodePage[P any](t *testing.T, raw *json.RawMessage) P {
	t.Helper()
	var page P
	if err := json.Unmarshal(*raw, &page); err != nil {
		t.Fatal(err)
	}
	return page
}

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

// Every record of a seeded listing, each once, in order; and a room's
// messages seeded through the admin API.
func TestPagesGiveEveryRecord(t *testing.T) {
	emu := roomchattest.Start(t, roomchattest.WithSeedUsers(450))
	client := emu.Client(t)
	ctx := context.Background()
	var names []string
	for raw, err := range roomchat.Pages(client, ctx, "list_users", map[string]any{"limit": 200}) {
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range decodePage[userPage](t, raw).Data {
			names = append(names, u.Username)
		}
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
	for raw, err := range roomchat.Pages(client, ctx, "room_messages", map[string]any{"roomId": room, "limit": 100}) {
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range decodePage[messagePage](t, raw).Messages {
			texts = append(texts, m.Message)
		}
	}
	if len(texts) != 250 || texts[0] != "message 1" || texts[249] != "message 250" {
		t.Fatalf("%d messages: %v ... ", len(texts), texts[:min(3, len(texts))])
	}
}

// A loop that breaks half-way fetches no more pages.
func TestPagesBreak(t *testing.T) {
	emu := roomchattest.Start(t, roomchattest.WithSeedUsers(450))
	client := emu.Client(t)
	n := 0
	for _, err := range roomchat.Pages(client, context.Background(), "list_users", map[string]any{"limit": 200}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if n == 2 {
			break
		}
	}
	if got := skips(emu, usersPath); fmt.Sprint(got) != "[0:200 200:200]" {
		t.Fatalf("pages fetched: %v", got)
	}
}

// A ctx cancelled half-way: the next step yields the cancel error, then the
// iteration stops even though the loop goes on; nothing more is sent.
func TestPagesCancel(t *testing.T) {
	emu := roomchattest.Start(t, roomchattest.WithSeedUsers(450))
	client := emu.Client(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var pages, errs int
	for _, err := range roomchat.Pages(client, ctx, "list_users", map[string]any{"limit": 200}) {
		if err != nil {
			errs++
			asError(t, err, roomchat.KindCancelled)
			if !errors.Is(err, context.Canceled) {
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
func TestPagesErrorThenContinue(t *testing.T) {
	emu := roomchattest.Start(t, roomchattest.WithSeedUsers(450))
	client := emu.Client(t, roomchat.WithMaxRetries(0))
	// The first page passes, the second is answered 500 once.
	emu.Fault(roomchattest.Fault{Path: usersPath, Action: roomchattest.Delay(0)})
	emu.Fault(roomchattest.Fault{Path: usersPath, Action: roomchattest.Respond(500, `{"message":"boom"}`, nil)})
	users, errs := 0, 0
	for raw, err := range roomchat.Pages(client, context.Background(), "list_users", map[string]any{"limit": 200}) {
		if err != nil {
			errs++
			asError(t, err, roomchat.KindServerError)
			continue
		}
		users += len(decodePage[userPage](t, raw).Data)
	}
	if users != 450 || errs != 1 {
		t.Fatalf("%d users, %d errors; want 450 and 1", users, errs)
	}
	if got := skips(emu, usersPath); fmt.Sprint(got) != "[0:200 200:500 200:200 400:200]" {
		t.Fatalf("pages fetched: %v", got)
	}
}
