package roomchat_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/roomchat/roomchat-go"
	"github.com/roomchat/roomchat-go/roomchattest"
)

// lockedBuffer is a log destination the client's calls may write to from any goroutine.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// No key, access token or password in any log line (debug included), error
// string, or record's printed form.
func TestNoSecretInLogsOrErrors(t *testing.T) {
	emu := roomchattest.Start(t)
	var logs lockedBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	client := emu.Client(t, roomchat.WithLogger(logger), roomchat.WithRetryNonIdempotent(false))
	ctx := context.Background()
	var shown []string // every error string and printed record

	created, err := client.CreateUser(ctx, "ann", nil)
	if err != nil {
		t.Fatal(err)
	}
	token := created.AccessToken
	shown = append(shown, fmt.Sprint(created), fmt.Sprintf("%+v", created), fmt.Sprintf("%#v", created))
	if _, err := client.ValidateAccessToken(ctx, token); err != nil {
		t.Fatal(err)
	}
	// A retry (a warning line) and a call that ends in an error.
	emu.FailNext("/consumer/api/v2/users", 503, 0)
	if _, err := client.ListUsers(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := client.InvalidateAccessToken(ctx, token); err != nil {
		t.Fatal(err)
	}
	_, err = client.InvalidateAccessToken(ctx, token) // invalidated already: a 400
	shown = append(shown, fmt.Sprint(err), fmt.Sprintf("%+v", err))

	wrong, err := roomchat.NewClient("sk_test_wrong_"+emu.PrivateKey(), roomchat.WithBaseURL(emu.BaseURL()), roomchat.WithLogger(logger))
	if err != nil {
		t.Fatal(err)
	}
	defer wrong.Close()
	_, err = wrong.ListChatRooms(ctx)
	shown = append(shown, fmt.Sprint(err), fmt.Sprintf("%+v", err))

	// Passwords of a proxy and of Redis that cannot be reached.
	proxied, err := roomchat.NewClient(emu.PrivateKey(), roomchat.WithBaseURL("https://api.invalid"),
		roomchat.WithProxy("http://user:proxy-pw-42@127.0.0.1:1"), roomchat.WithMaxRetries(0), roomchat.WithLogger(logger))
	if err != nil {
		t.Fatal(err)
	}
	defer proxied.Close()
	_, err = proxied.ListChatRooms(ctx)
	shown = append(shown, fmt.Sprint(err), fmt.Sprintf("%+v", err))
	budgeted, err := roomchat.NewClient(emu.PrivateKey(), roomchat.WithBaseURL(emu.BaseURL()),
		roomchat.WithRedisBudget("redis://:redis-pw-42@127.0.0.1:1/0"), roomchat.WithRedisPolicy(roomchat.RedisFailClosed, 0),
		roomchat.WithRedisTimeouts(200*time.Millisecond, 200*time.Millisecond, 0), roomchat.WithLogger(logger))
	if err != nil {
		shown = append(shown, fmt.Sprint(err))
	} else {
		defer budgeted.Close()
		_, err = budgeted.ListChatRooms(ctx)
		asError(t, err, roomchat.KindBudgetUnavailable)
		shown = append(shown, fmt.Sprint(err), fmt.Sprintf("%+v", err))
	}

	lines := logs.String()
	if !strings.Contains(lines, "level=DEBUG") || !strings.Contains(lines, "level=WARN") {
		t.Fatalf("the client logged no debug or warning line:\n%s", lines)
	}
	for _, secret := range []string{emu.PrivateKey(), emu.PublicKey(), token, "proxy-pw-42", "redis-pw-42"} {
		if strings.Contains(lines, secret) {
			t.Errorf("a secret in the log lines: %.12s…", secret)
		}
		for _, text := range shown {
			if strings.Contains(text, secret) {
				t.Errorf("a secret in %q", text)
			}
		}
	}
}
