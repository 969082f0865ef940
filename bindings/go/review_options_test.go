package roomchat_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/roomchat/roomchat-go"
	"github.com/roomchat/roomchat-go/roomchattest"
)

// A negative duration or count is a mistake: NewClient (or the call) refuses
// it with a KindConfiguration error that names the option, never keeps a
// default silently nor reports a wrapped-around number.
func TestReviewNegativeSettingsRefused(t *testing.T) {
	emu := roomchattest.Start(t)
	for name, opt := range map[string]roomchat.Option{
		"WithTimeouts":         roomchat.WithTimeouts(-time.Second, -time.Second),
		"WithRateLimitMaxWait": roomchat.WithRateLimitMaxWait(-time.Second),
		"WithRedisTimeouts":    roomchat.WithRedisTimeouts(-time.Second, -time.Second, -time.Second),
		"WithRedisPolicy":      roomchat.WithRedisPolicy(roomchat.RedisLocalFallback, -3),
	} {
		opts := []roomchat.Option{roomchat.WithBaseURL(emu.BaseURL()), opt}
		if strings.HasPrefix(name, "WithRedis") {
			opts = append(opts, roomchat.WithRedisBudget("redis://127.0.0.1:1"))
		}
		client, err := roomchat.NewClient(emu.PrivateKey(), opts...)
		if err == nil {
			client.Close()
			t.Errorf("%s with a negative value: accepted", name)
			continue
		}
		var e *roomchat.Error
		if !errors.As(err, &e) || e.Kind != roomchat.KindConfiguration || !strings.Contains(err.Error(), name) {
			t.Errorf("%s with a negative value: %v (want KindConfiguration naming %s)", name, err, name)
		}
	}
	client := emu.Client(t)
	for name, opt := range map[string]roomchat.CallOption{
		"WithCallTimeout":        roomchat.WithCallTimeout(-time.Second),
		"WithCallConnectTimeout": roomchat.WithCallConnectTimeout(-time.Second),
		"WithCallMaxRetryWait":   roomchat.WithCallMaxRetryWait(-time.Second),
		"WithCallTimeout huge":   roomchat.WithCallTimeout(math.MaxInt64),
	} {
		_, err := client.ListChatRooms(context.Background(), opt)
		var e *roomchat.Error
		if !errors.As(err, &e) || e.Kind != roomchat.KindConfiguration {
			t.Errorf("%s: %v (want KindConfiguration)", name, err)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}

// Strings the C boundary reads: invalid UTF-8 and NUL give a typed error, never a panic.
func TestReviewBadStringsInOptions(t *testing.T) {
	emu := roomchattest.Start(t)
	for _, bad := range []string{"a\x00b", "a\xffb"} {
		for name, opt := range map[string]roomchat.Option{
			"key":    nil,
			"base":   roomchat.WithBaseURL(bad),
			"public": roomchat.WithPublicKey(bad),
			"app":    roomchat.WithAppName(bad),
			"proxy":  roomchat.WithProxy(bad),
			"header": roomchat.WithHeader("X-A", bad),
			"hname":  roomchat.WithHeader(bad, "v"),
			"redis":  roomchat.WithRedisBudget(bad),
			"prefix": roomchat.WithRedisKeyPrefix(bad),
			"chat":   roomchat.WithChatURL(bad),
			"ca":     roomchat.WithCAPEM([]byte(bad)),
		} {
			key := emu.PrivateKey()
			opts := []roomchat.Option{roomchat.WithBaseURL(emu.BaseURL())}
			if opt == nil {
				key = bad
			} else {
				opts = append(opts, opt)
			}
			client, err := roomchat.NewClient(key, opts...)
			if err == nil {
				client.Close()
				if name != "app" && name != "prefix" {
					t.Errorf("%s %q: accepted", name, bad)
				}
				continue
			}
			var e *roomchat.Error
			if !errors.As(err, &e) {
				t.Errorf("%s %q: not a *roomchat.Error: %v", name, bad, err)
			}
			if strings.Contains(err.Error(), bad) && (name == "key" || name == "proxy" || name == "redis") {
				t.Errorf("%s: the secret shows in %v", name, err)
			}
		}
	}
}

// A string argument that is not UTF-8 is refused before anything is sent
// (KindValidation), never sent with its bad bytes replaced by U+FFFD (a
// user named "ann\uFFFD", a request to another room's path).
func TestReviewInvalidUTF8ParamsRefused(t *testing.T) {
	emu := roomchattest.Start(t)
	client := emu.Client(t)
	ctx := context.Background()
	_, err := client.CreateUser(ctx, "ann\xff", nil)
	asError(t, err, roomchat.KindValidation)
	_, err = client.GetChatRoom(ctx, "abc\xff")
	asError(t, err, roomchat.KindValidation)
	_, err = client.CreateUser(ctx, "bob", &roomchat.CreateUserParams{Extra: map[string]any{"note": []any{"ok", "bad\xc3"}}})
	asError(t, err, roomchat.KindValidation)
	_, err = client.Raw(ctx, roomchat.RawRequest{Method: "GET", Path: "/consumer/api/v1/chatrooms", Query: [][2]string{{"q", "\xff"}}})
	asError(t, err, roomchat.KindValidation)
	if n := len(emu.Journal()); n != 0 {
		t.Fatalf("%d requests sent", n)
	}
	// Valid text, U+FFFD itself included, and bytes go as before.
	if _, err := client.CreateUser(ctx, "ann\uFFFD", &roomchat.CreateUserParams{Meta: map[string]any{"raw": []byte{0xff}}}); err != nil {
		t.Fatal(err)
	}
}

// DefaultMaxInFlight is an exported variable: a program that sets it to 0 or
// below gets a clear error from NewClient, not a panic (makechan: size out of
// range) nor a client whose every call waits forever for a turn.
func TestReviewDefaultMaxInFlightNotPositive(t *testing.T) {
	emu := roomchattest.Start(t)
	saved := roomchat.DefaultMaxInFlight
	defer func() { roomchat.DefaultMaxInFlight = saved }()
	for _, n := range []int{0, -1} {
		roomchat.DefaultMaxInFlight = n
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("DefaultMaxInFlight = %d: NewClient panicked: %v", n, r)
				}
			}()
			client, err := roomchat.NewClient(emu.PrivateKey(), roomchat.WithBaseURL(emu.BaseURL()))
			if err == nil {
				defer client.Close()
				ctx, cancel := context.WithTimeout(context.Background(), prompt)
				defer cancel()
				_, err := client.ListChatRooms(ctx)
				t.Errorf("DefaultMaxInFlight = %d: NewClient accepted it; a call: %v", n, err)
				return
			}
			var e *roomchat.Error
			if !errors.As(err, &e) || e.Kind != roomchat.KindConfiguration {
				t.Errorf("DefaultMaxInFlight = %d: %v", n, err)
			}
		}()
	}
}
