package roomchat_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/roomchat/roomchat-go"
	"github.com/roomchat/roomchat-go/roomchattest"
)

// Secrets inside malformed settings, odd keys and failing calls: no error
// string (%v, %+v, %#v) or log line shows them.
func TestReviewSecretsInMalformedSettings(t *testing.T) {
	emu := roomchattest.Start(t)
	var logs lockedBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var shown []string
	show := func(err error) {
		if err != nil {
			shown = append(shown, fmt.Sprint(err), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err))
		}
	}
	const pw = "hunter2-pw-77"
	for _, opt := range []roomchat.Option{
		roomchat.WithProxy("http://user:" + pw + "@[::1"),
		roomchat.WithProxy("ftp://user:" + pw + "@127.0.0.1:1"),
		roomchat.WithProxy("http://user:" + pw + "@127.0.0.1:notaport"),
		roomchat.WithProxy("user:" + pw + "@127.0.0.1:1"),
		roomchat.WithProxy("http://user:" + pw + " @127.0.0.1:1"),
		roomchat.WithRedisBudget("redis://:" + pw + "@[::1"),
		roomchat.WithRedisBudget("redis://:" + pw + "@127.0.0.1:notaport/0"),
		roomchat.WithRedisBudget("redsi://:" + pw + "@127.0.0.1:1/0"),
		roomchat.WithRedisBudget("redis://user:" + pw + "@127.0.0.1:1/x"),
		roomchat.WithRedisBudget("rediss://:" + pw + "@127.0.0.1:1/0?password=" + pw),
		roomchat.WithRedisBudget("redis+sentinel://:" + pw + "@127.0.0.1:1/"),
	} {
		client, err := roomchat.NewClient(emu.PrivateKey(), roomchat.WithBaseURL(emu.BaseURL()), opt,
			roomchat.WithLogger(logger), roomchat.WithMaxRetries(0),
			roomchat.WithRedisPolicy(roomchat.RedisFailClosed, 0), roomchat.WithRedisTimeouts(100*time.Millisecond, 100*time.Millisecond, 0))
		show(err)
		if err == nil {
			_, err = client.ListChatRooms(context.Background())
			show(err)
			client.Close()
		}
	}
	// Keys with characters a URL escapes, a wrong public key.
	for _, key := range []string{"sk key " + pw, "sk%" + pw, "sk#" + pw, "sk&auth=" + pw, "sk\xff" + pw} {
		client, err := roomchat.NewClient(key, roomchat.WithBaseURL(emu.BaseURL()), roomchat.WithLogger(logger),
			roomchat.WithPublicKey("pk "+pw), roomchat.WithMaxRetries(0))
		show(err)
		if err == nil {
			_, err = client.ListChatRooms(context.Background())
			show(err)
			_, err = client.ValidateAccessToken(context.Background(), "tok"+pw)
			show(err)
			_, err = client.Raw(context.Background(), roomchat.RawRequest{Method: "GET", Path: "/consumer/api/v1/chatrooms", Auth: roomchat.RawAuthPublicKey})
			show(err)
			_, err = client.SignInURL("room/"+pw, "tok"+pw)
			client.Close()
		}
	}
	lines := logs.String()
	if strings.Contains(lines, pw) {
		for _, l := range strings.Split(lines, "\n") {
			if strings.Contains(l, pw) {
				t.Errorf("a secret in a log line: %s", l)
			}
		}
	}
	for _, text := range shown {
		if strings.Contains(text, pw) {
			t.Errorf("a secret in %q", text)
		}
	}
}
