package roomchat_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/roomchat/roomchat-go"
	"github.com/roomchat/roomchat-go/roomchattest"
)

// setRoomchatEnv sets the variables NewClientFromEnv reads ("" unsets one
// for this test: core counts an empty variable as unset).
func setRoomchatEnv(t *testing.T, key, base, chat, public, app string) {
	t.Helper()
	for name, value := range map[string]string{
		"ROOMCHAT_PRIVATE_KEY": key, "ROOMCHAT_BASE_URL": base, "ROOMCHAT_CHAT_URL": chat,
		"ROOMCHAT_PUBLIC_KEY": public, "ROOMCHAT_APP_NAME": app,
	} {
		t.Setenv(name, value)
	}
}

// NewClientFromEnv reads the environment as core does (the library's
// roomchat_client_options_new_from_env): every variable honoured, and core's
// errors, of core's kinds, word for word.
func TestNewClientFromEnv(t *testing.T) {
	emu := roomchattest.Start(t)
	var trust []roomchat.Option
	if emu.CAPEM() != nil {
		trust = append(trust, roomchat.WithCAPEM(emu.CAPEM()))
	}
	ctx := context.Background()

	t.Run("every_variable", func(t *testing.T) {
		setRoomchatEnv(t, emu.PrivateKey(), emu.BaseURL(), emu.ChatURL(), emu.PublicKey(), "go-env/1.0")
		client, err := roomchat.NewClientFromEnv(trust...)
		if err != nil {
			t.Fatal(err)
		}
		defer client.Close()
		emu.ClearJournal()
		if _, err := client.ListUsers(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if journal := emu.Journal(); len(journal) != 1 || !strings.HasSuffix(journal[0].UserAgent, " go-env/1.0") {
			t.Fatalf("ROOMCHAT_APP_NAME is not in the User-Agent: %+v", journal)
		}
		if url, err := client.SignInURL("room-1", "token-1"); err != nil || !strings.HasPrefix(url, emu.ChatURL()) {
			t.Fatalf("ROOMCHAT_CHAT_URL: %q %v", url, err)
		}
		// Sent with the public key (without one: KindConfiguration, nothing sent).
		_, err = client.ValidateAccessToken(ctx, "forged-token")
		asError(t, err, roomchat.KindInvalidRequest)
	})
	t.Run("options_apply_after", func(t *testing.T) {
		setRoomchatEnv(t, emu.PrivateKey(), "api.example.com", "", "", "")
		client, err := roomchat.NewClientFromEnv(append(trust, roomchat.WithBaseURL(emu.BaseURL()))...)
		if err != nil {
			t.Fatal(err)
		}
		defer client.Close()
		if _, err := client.ListUsers(ctx, nil); err != nil {
			t.Fatal(err)
		}
	})
	for _, refused := range []struct {
		name, key, base, chat string
		kind                  roomchat.Kind
		message               string
	}{
		{"no_key", "", emu.BaseURL(), "", roomchat.KindConfiguration, "the environment variable ROOMCHAT_PRIVATE_KEY is not set"},
		{"no_base_url", emu.PrivateKey(), "", "", roomchat.KindConfiguration, "the environment variable ROOMCHAT_BASE_URL is not set"},
		{"base_url_not_utf8", emu.PrivateKey(), "http://127.0.0.1:1/\xff", "", roomchat.KindConfiguration, "the environment variable ROOMCHAT_BASE_URL is not valid UTF-8"},
		{"chat_url_not_utf8", emu.PrivateKey(), emu.BaseURL(), "\xfe", roomchat.KindConfiguration, "the environment variable ROOMCHAT_CHAT_URL is not valid UTF-8"},
		{"base_url_not_a_url", emu.PrivateKey(), "api.example.com", "", roomchat.KindConfiguration, "the base URL must start with https:// or http://"},
	} {
		t.Run(refused.name, func(t *testing.T) {
			setRoomchatEnv(t, refused.key, refused.base, refused.chat, "", "")
			client, err := roomchat.NewClientFromEnv(trust...)
			if client != nil {
				client.Close()
			}
			if e := asError(t, err, refused.kind); e.Message != refused.message {
				t.Fatalf("message %q, core's is %q", e.Message, refused.message)
			}
		})
	}
}

// waitHandler cancels a call's ctx at the log line that says it waits for the budget.
type waitHandler struct {
	once   *sync.Once
	cancel context.CancelFunc
}

func (h waitHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h waitHandler) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "for the rate-limit budget") {
		h.once.Do(h.cancel)
	}
	return nil
}
func (h waitHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h waitHandler) WithGroup(string) slog.Handler      { return h }

// WithRateLimit without WithRateLimitMaxWait waits as core does, at least a
// minute: a call of a 1 s window's budget held off 10 s by a 429 waits for
// it (until its ctx is cancelled here) rather than failing at once as a wait
// of window + 3 s would.
func TestRateLimitDefaultWaitIsCores(t *testing.T) {
	emu := roomchattest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logger := slog.New(waitHandler{once: &sync.Once{}, cancel: cancel})
	client := emu.Client(t, roomchat.WithRateLimit(100, time.Second), roomchat.WithMaxRetries(0), roomchat.WithLogger(logger))
	emu.FailNext("/consumer/api/v2/users", 429, 10*time.Second)
	_, err := client.ListUsers(context.Background(), nil)
	asError(t, err, roomchat.KindRateLimited)
	_, err = client.ListUsers(ctx, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want the wait ended by the cancelled ctx, got %v", err)
	}
}
