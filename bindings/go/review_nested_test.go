package roomchat_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/roomchat/roomchat-go"
	"github.com/roomchat/roomchat-go/roomchattest"
)

type ctxTag struct{}

// taggingHandler records each line with its ctx's tag; on the outer call's
// first line it makes a call of its own through the same client (a handler
// that reports through the service, say).
type taggingHandler struct {
	mu     *sync.Mutex
	lines  *[]string
	nested func()
	once   *sync.Once
}

func (h taggingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h taggingHandler) Handle(ctx context.Context, r slog.Record) error {
	tag, _ := ctx.Value(ctxTag{}).(string)
	h.mu.Lock()
	*h.lines = append(*h.lines, tag+" | "+r.Message)
	h.mu.Unlock()
	if tag == "outer" {
		h.once.Do(h.nested)
	}
	return nil
}
func (h taggingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h taggingHandler) WithGroup(string) slog.Handler      { return h }

// A call made from inside a log callback (on the same thread) must not cut
// the outer call off from its ctx: the outer call's later lines still carry it.
func TestReviewNestedCallKeepsOuterCtx(t *testing.T) {
	emu := roomchattest.Start(t)
	var mu sync.Mutex
	var lines []string
	var client *roomchat.Client
	h := taggingHandler{mu: &mu, lines: &lines, once: &sync.Once{}, nested: func() {
		client.ListUsers(context.WithValue(context.Background(), ctxTag{}, "inner"), nil)
	}}
	client = emu.Client(t, roomchat.WithLogger(slog.New(h)))
	emu.FailNext("/consumer/api/v1/chatrooms", 503, 0) // the outer call: an attempt, a retry, an attempt
	if _, err := client.ListChatRooms(context.WithValue(context.Background(), ctxTag{}, "outer")); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	outer := 0
	for _, l := range lines {
		if strings.Contains(l, "/consumer/api/v1/chatrooms") {
			if !strings.HasPrefix(l, "outer |") {
				t.Errorf("a line of the outer call without its ctx: %q", l)
			}
			outer++
		}
	}
	if outer < 2 {
		t.Fatalf("the outer call logged %d lines: %q", outer, lines)
	}
}
