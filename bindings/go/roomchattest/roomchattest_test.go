package roomchattest_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/roomchat/roomchat-go"
	"github.com/roomchat/roomchat-go/roomchattest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// In the repository: the emulator the release build made, unless
	// ROOMCHAT_EMULATOR names one.
	if os.Getenv(roomchattest.EnvEmulator) == "" {
		built, _ := filepath.Abs(filepath.Join("..", "..", "..", "target", "release", "roomchat-emulator"))
		if _, err := os.Stat(built); err == nil {
			os.Setenv(roomchattest.EnvEmulator, built)
		}
	}
	goleak.VerifyTestMain(m)
}

// The kit's example, run: a 429 once, the client waits and tries again.
func TestExampleFlow(t *testing.T) {
	emu := roomchattest.Start(t, roomchattest.WithSeedUsers(3))
	emu.CreateRoom(map[string]any{"name": "support"})
	emu.FailNext("/consumer/api/v1/chatrooms", 429, time.Second)
	client := emu.Client(t)
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
	if len(emu.Users()) != 3 {
		t.Fatalf("%d users", len(emu.Users()))
	}
}

// The journal hides the keys and credential headers, as the other kits do.
func TestJournalHidesCredentials(t *testing.T) {
	emu := roomchattest.Start(t)
	client := emu.Client(t, roomchat.WithHeader("X-Api-Token", "tok-secret-1"), roomchat.WithHeader("X-Note", "plain"))
	ctx := context.Background()
	if _, err := client.ListUsers(ctx, &roomchat.ListUsersParams{Limit: roomchat.Int(3)}); err != nil {
		t.Fatal(err)
	}
	// The validate operation sends the public key (publicKey).
	_, _ = client.ValidateAccessToken(ctx, "nope")
	journal := emu.Journal()
	if len(journal) != 2 {
		t.Fatalf("%d entries", len(journal))
	}
	first := journal[0]
	if first.Method != "GET" || first.Path != "/consumer/api/v2/users" || first.Params.Get("limit") != "3" {
		t.Fatalf("%+v", first)
	}
	if first.Params.Get("auth") != "REDACTED" || !strings.Contains(first.Query, "auth=REDACTED") {
		t.Fatalf("auth: %q", first.Query)
	}
	if first.Header.Get("x-api-token") != "REDACTED" || first.Header.Get("X-NOTE") != "plain" {
		t.Fatalf("headers: %v", first.Header)
	}
	if journal[1].Params.Get("publicKey") != "REDACTED" {
		t.Fatalf("publicKey: %q", journal[1].Query)
	}
	for _, e := range journal {
		for _, text := range []string{e.Path, e.Query, e.Body, e.UserAgent, strings.Join(flatten(e.Header), " ")} {
			if strings.Contains(text, emu.PrivateKey()) || strings.Contains(text, emu.PublicKey()) || strings.Contains(text, "tok-secret-1") {
				t.Fatalf("a secret in the journal: %q", text)
			}
		}
	}
}

func flatten(h map[string][]string) []string {
	var out []string
	for name, values := range h {
		out = append(out, name+": "+strings.Join(values, ", "))
	}
	return out
}

// Reset clears the state, renews made-up keys (a new client uses them) and
// seeds again; faults, held answers and the journal go.
func TestReset(t *testing.T) {
	emu := roomchattest.Start(t, roomchattest.WithSeedUsers(2))
	oldKey := emu.PrivateKey()
	emu.CreateRoom(nil)
	emu.Fault(roomchattest.Fault{Action: roomchattest.CloseConnection(), Times: 5})
	emu.Reset()
	if emu.PrivateKey() == oldKey || !strings.HasPrefix(emu.PrivateKey(), "sk_test_emulator_") {
		t.Fatalf("key not renewed: %q", emu.PrivateKey())
	}
	client := emu.Client(t)
	if rooms, err := client.ListChatRooms(context.Background()); err != nil || len(rooms) != 0 {
		t.Fatalf("%v %v", rooms, err)
	}
	if len(emu.Users()) != 2 || len(emu.Journal()) != 1 {
		t.Fatalf("%d users, %d entries", len(emu.Users()), len(emu.Journal()))
	}
	// Given keys are kept.
	given := roomchattest.Start(t, roomchattest.WithKeys("sk_given", "pk_given"))
	given.Reset()
	if given.PrivateKey() != "sk_given" || given.PublicKey() != "pk_given" {
		t.Fatal("given keys changed")
	}
}

// WithTLS serves HTTPS, and Client trusts its CA.
func TestTLS(t *testing.T) {
	emu := roomchattest.Start(t, roomchattest.WithTLS(), roomchattest.WithRateLimitHeaders())
	if !strings.HasPrefix(emu.BaseURL(), "https://") || len(emu.CAPEM()) == 0 {
		t.Fatalf("%s, CA %d bytes", emu.BaseURL(), len(emu.CAPEM()))
	}
	client := emu.Client(t)
	_, response, err := client.ListChatRoomsWithResponse(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if response.StatusCode != 200 || len(emu.Journal()) != 1 {
		t.Fatalf("%+v", response)
	}
	// A client that does not trust the CA fails on TLS.
	wary, err := roomchat.NewClient(emu.PrivateKey(), roomchat.WithBaseURL(emu.BaseURL()), roomchat.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	defer wary.Close()
	_, err = wary.ListChatRooms(context.Background())
	if e, ok := err.(*roomchat.Error); !ok || e.Kind != roomchat.KindTLS {
		t.Fatalf("%v", err)
	}
}

// Without an emulator executable, the error says how to get one.
func TestFindEmulatorAbsent(t *testing.T) {
	t.Setenv(roomchattest.EnvEmulator, "")
	t.Setenv("PATH", t.TempDir())
	_, err := roomchattest.FindEmulator()
	if err == nil || !strings.Contains(err.Error(), "ROOMCHAT_EMULATOR") || !strings.Contains(err.Error(), "pip install roomchat-emulator") {
		t.Fatalf("%v", err)
	}
	missing := filepath.Join(t.TempDir(), "nothing")
	t.Setenv(roomchattest.EnvEmulator, missing)
	if _, err := roomchattest.FindEmulator(); err == nil || !strings.Contains(err.Error(), missing) {
		t.Fatalf("%v", err)
	}
}

// A Hold fault stops a request at a point of the test's choosing.
func TestHold(t *testing.T) {
	emu := roomchattest.Start(t)
	client := emu.Client(t)
	emu.Fault(roomchattest.Fault{Method: "GET", Path: "/consumer/api/v1/*", Action: roomchattest.Hold()})
	done := make(chan error, 1)
	go func() {
		_, err := client.ListChatRooms(context.Background())
		done <- err
	}()
	emu.WaitHeld(1, 5*time.Second)
	if n := emu.ReleaseHeld(); n != 1 {
		t.Fatalf("released %d", n)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// The flags' options reach the emulator: a journal of 0 entries, gzip, a
// rate limit with its headers, extra flags.
func TestOptions(t *testing.T) {
	emu := roomchattest.Start(t, roomchattest.WithJournalCapacity(0), roomchattest.WithGzipMinBytes(10),
		roomchattest.WithRateLimit(2, time.Minute), roomchattest.WithRateLimitHeaders(), roomchattest.WithArgs("--read-timeout", "5s"),
		roomchattest.WithSeedUsers(20))
	// Fail fast: by default a call waits up to a minute for the budget the answers hold off.
	client := emu.Client(t, roomchat.WithMaxRetries(0), roomchat.WithRateLimitFailFast())
	ctx := context.Background()
	page, response, err := client.ListUsersWithResponse(ctx, nil)
	if err != nil || len(page.Data) != 20 {
		t.Fatalf("%v %v", page, err)
	}
	if response.Header.Get("X-RateLimit-Limit") != "2" {
		t.Fatalf("no rate-limit headers: %v", response.Header)
	}
	if _, err := client.ListChatRooms(ctx); err != nil {
		t.Fatal(err)
	}
	// The limit is spent (the answers said so: X-RateLimit-Remaining 0).
	_, err = client.ListChatRooms(ctx)
	if e, ok := err.(*roomchat.Error); !ok || e.Kind != roomchat.KindRateLimited {
		t.Fatalf("%v", err)
	}
	if n := len(emu.Journal()); n != 0 {
		t.Fatalf("a journal of capacity 0 holds %d", n)
	}
}
