package roomchat_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/roomchat/roomchat-go"
	"github.com/roomchat/roomchat-go/roomchattest"
)

// The error kinds, end to end against the emulator: each as a *roomchat.Error
// of its kind that errors.Is its sentinel (and no other).
func TestErrorKinds(t *testing.T) {
	emu := roomchattest.Start(t, roomchattest.WithSeedUsers(1))
	client := emu.Client(t, roomchat.WithMaxRetries(0))
	ctx := context.Background()

	t.Run("not_found", func(t *testing.T) {
		room, err := client.GetChatRoom(ctx, "nowhere")
		if room != nil {
			t.Fatalf("a room with the error: %+v", room)
		}
		if e := asError(t, err, roomchat.KindNotFound); e.Status != 404 || e.Method != "GET" || !strings.Contains(e.Path, "nowhere") {
			t.Fatalf("%+v", e)
		}
	})
	t.Run("user_not_found", func(t *testing.T) {
		_, err := client.DeactivateUser(ctx, &roomchat.DeactivateUserParams{UserID: roomchat.String("000000000000000000000000")})
		if e := asError(t, err, roomchat.KindUserNotFound); e.Status != 400 || e.ServiceMessage != "user not found" {
			t.Fatalf("%+v", e)
		}
	})
	t.Run("invalid_auth", func(t *testing.T) {
		wrong, err := roomchat.NewClient("sk_test_not_the_key", roomchat.WithBaseURL(emu.BaseURL()))
		if err != nil {
			t.Fatal(err)
		}
		defer wrong.Close()
		err = roomchat.Invoke(wrong, ctx, "list_users", nil, nil)
		if e := asError(t, err, roomchat.KindInvalidAuth); e.Status != 401 || strings.Contains(err.Error(), "sk_test_not_the_key") {
			t.Fatalf("%+v", e)
		}
	})
	t.Run("invalid_request", func(t *testing.T) {
		user := map[string]any{"username": "ann", "role": "regular", "extra": map[string]any{"uniqueUserIdentifier": "ann-1"}}
		if err := roomchat.Invoke(client, ctx, "create_user", user, nil); err != nil {
			t.Fatal(err)
		}
		err := roomchat.Invoke(client, ctx, "create_user", user, nil) // the identifier is taken
		if e := asError(t, err, roomchat.KindInvalidRequest); e.Status != 400 || e.ServiceMessage == "" {
			t.Fatalf("%+v", e)
		}
	})
	t.Run("server_error", func(t *testing.T) {
		emu.Fault(roomchattest.Fault{Path: "/consumer/api/v1/chatrooms", Action: roomchattest.Respond(500, `{"message":"boom","eventId":"ev-42"}`, nil)})
		err := roomchat.Invoke(client, ctx, "list_chat_rooms", nil, nil)
		if e := asError(t, err, roomchat.KindServerError); e.Status != 500 || e.EventID != "ev-42" || e.ServiceMessage != "boom" {
			t.Fatalf("%+v", e)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		emu.Fault(roomchattest.Fault{Path: "/consumer/api/v1/chatrooms", Action: roomchattest.Delay(3 * time.Second)})
		err := roomchat.Invoke(client, ctx, "list_chat_rooms", nil, nil, roomchat.WithCallTimeout(200*time.Millisecond))
		asError(t, err, roomchat.KindTimeout)
	})
	t.Run("connection_refused", func(t *testing.T) {
		listener, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		closed := "http://" + listener.Addr().String()
		listener.Close()
		refused, err := roomchat.NewClient("sk_test_refused", roomchat.WithBaseURL(closed), roomchat.WithMaxRetries(0))
		if err != nil {
			t.Fatal(err)
		}
		defer refused.Close()
		err = roomchat.Invoke(refused, ctx, "list_chat_rooms", nil, nil)
		if e := asError(t, err, roomchat.KindConnection); e.Status != 0 {
			t.Fatalf("%+v", e)
		}
	})
	t.Run("validation_before_sending", func(t *testing.T) {
		emu.ClearJournal()
		for _, params := range []map[string]any{
			{"limit": 500},
			{"limit": "ten"},
			{"nope": 1},
		} {
			err := roomchat.Invoke(client, ctx, "list_users", params, nil)
			asError(t, err, roomchat.KindValidation)
		}
		err := roomchat.Invoke(client, ctx, "deactivate_user", map[string]any{"userId": "a", "uniqueUserIdentifier": "b"}, nil)
		asError(t, err, roomchat.KindValidation)
		if journal := emu.Journal(); len(journal) != 0 {
			t.Fatalf("%d requests sent", len(journal))
		}
	})
	t.Run("configuration", func(t *testing.T) {
		_, err := roomchat.NewClient("sk_test_x", roomchat.WithBaseURL("http://api.example.com"))
		e := asError(t, err, roomchat.KindConfiguration)
		if !strings.Contains(e.Message, "roomchat.WithAllowInsecureHTTP(true)") || strings.Contains(e.Message, "(options, true)") {
			t.Fatalf("the remedy is not Go's: %s", e.Message)
		}
	})
	t.Run("nul_byte", func(t *testing.T) {
		emu.ClearJournal()
		_, err := roomchat.NewClient("sk\x00key", roomchat.WithBaseURL(emu.BaseURL()))
		if e := asError(t, err, roomchat.KindInvalidArgument); strings.Contains(e.Error(), "sk\x00key") {
			t.Fatal("the key is in the error")
		}
		_, err = roomchat.NewClient(emu.PrivateKey(), roomchat.WithBaseURL(emu.BaseURL()), roomchat.WithHeader("x-note", "a\x00b"))
		asError(t, err, roomchat.KindInvalidArgument)
		err = roomchat.Invoke(client, ctx, "get\x00_chat_room", map[string]any{"roomId": "r"}, nil)
		asError(t, err, roomchat.KindInvalidArgument)
		if journal := emu.Journal(); len(journal) != 0 {
			t.Fatalf("%d requests sent", len(journal))
		}
	})
	t.Run("nul_byte_in_a_param", func(t *testing.T) {
		// A param crosses as JSON text, where a NUL is the escape \u0000,
		// so it is not refused at the C boundary: an id holding one is sent
		// percent-encoded (one path segment), and the service answers.
		emu.ClearJournal()
		err := roomchat.Invoke(client, ctx, "get_chat_room", map[string]any{"roomId": "a\x00b"}, nil)
		var e *roomchat.Error
		if !errors.As(err, &e) {
			t.Fatalf("%v", err)
		}
		journal := emu.Journal()
		if len(journal) != 1 || journal[0].Path != "/consumer/api/v1/chatroom/a%00b" {
			t.Fatalf("%+v", journal)
		}
	})
	// Last: a 429 holds the key's budget (process-wide) for its Retry-After.
	t.Run("rate_limited", func(t *testing.T) {
		emu.FailNext("/consumer/api/v2/users", 429, 7*time.Second)
		err := roomchat.Invoke(client, ctx, "list_users", nil, nil)
		if e := asError(t, err, roomchat.KindRateLimited); e.Status != 429 || e.RetryAfter != 7*time.Second {
			t.Fatalf("%+v", e)
		}
	})
}
