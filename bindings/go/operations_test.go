package roomchat_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/roomchat/roomchat-go"
	"github.com/roomchat/roomchat-go/roomchattest"
)

// Every declared operation, once, end to end: its first request vector sent
// through the client (by the operation's name: the runtime's invoke) to the
// emulator, whose journal must hold the vector's wire request exactly.
func TestEveryOperationSendsItsVector(t *testing.T) {
	emu := roomchattest.Start(t)
	client := emu.Client(t, roomchat.WithMaxRetries(0))
	seen := map[string]bool{}
	ctx := context.Background()
	for _, v := range loadVectors[requestVector](t, "requests.json") {
		if v.ExpectError != "" || seen[v.Operation] || v.Operation == "raw" {
			continue
		}
		seen[v.Operation] = true
		emu.ClearJournal()
		// The vectors' ids name nothing the emulator holds: most calls are
		// answered with an error, which is the service's (a 4xx), not ours.
		err := roomchat.Invoke(client, ctx, v.Operation, v.Params, nil)
		if err != nil {
			e := err.(*roomchat.Error)
			if e.Status == 0 {
				t.Errorf("%s: no answer: %v", v.Name, err)
				continue
			}
		}
		checkJournal(t, emu, v)
	}
	if len(seen) != 41 {
		t.Errorf("%d operations have a request vector, want 41", len(seen))
	}
}

func splitQuery(raw string) [][2]string {
	var pairs [][2]string
	for raw != "" {
		var part string
		part, raw, _ = strings.Cut(raw, "&")
		name, value, _ := strings.Cut(part, "=")
		name, _ = url.QueryUnescape(name)
		value, _ = url.QueryUnescape(value)
		pairs = append(pairs, [2]string{name, value})
	}
	return pairs
}

func equalPairs(a, b [][2]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// checkJournal asserts the emulator received exactly one request, the
// vector's: method, path, query (after the key's, in order) and body.
func checkJournal(t *testing.T, emu *roomchattest.Emulator, v requestVector) {
	t.Helper()
	journal := emu.Journal()
	if len(journal) != 1 {
		t.Errorf("%s: %d requests in the journal, want 1", v.Name, len(journal))
		return
	}
	got, want := journal[0], v.Expect
	if got.Method != want.Method || got.Path != want.Path {
		t.Errorf("%s: sent %s %s, want %s %s", v.Name, got.Method, got.Path, want.Method, want.Path)
	}
	// The key's parameter comes first, then the vector's, in order.
	all := splitQuery(got.Query)
	if len(all) == 0 || (all[0][0] != "auth" && all[0][0] != "publicKey") || all[0][1] != "REDACTED" {
		t.Errorf("%s: the query does not begin with the key, hidden: %q", v.Name, got.Query)
		return
	}
	pairs := all[1:]
	if len(pairs) != len(want.Query) || (len(pairs) > 0 && !equalPairs(pairs, want.Query)) {
		t.Errorf("%s: query %q, want %q", v.Name, pairs, want.Query)
	}
	body := []byte(got.Body)
	if len(body) == 0 {
		body = []byte("null")
	}
	if !sameJSON(t, body, want.Body) {
		t.Errorf("%s: body %s, want %s", v.Name, got.Body, want.Body)
	}
}
