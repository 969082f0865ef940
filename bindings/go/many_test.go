package roomchat_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/roomchat/roomchat-go"
	"github.com/roomchat/roomchat-go/roomchattest"
)

// procStatus reads a figure of /proc/self/status (Threads, VmRSS in kB).
func procStatus(t testing.TB, field string) int {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		if value, ok := strings.CutPrefix(scanner.Text(), field+":"); ok {
			n, err := strconv.Atoi(strings.Fields(value)[0])
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// 10,000 goroutines calling at once through one client: all finish, and the
// OS threads stay bounded (each call in C holds one; the others wait for a
// turn without one). The peak is printed: go test -race -run TestManyGoroutines -v .
func TestManyGoroutines(t *testing.T) {
	emu := roomchattest.Start(t, roomchattest.WithRateLimit(1_000_000, time.Second), roomchattest.WithJournalCapacity(0))
	client := emu.Client(t)
	// The first calls' answers are slow: the calls in flight reach their
	// bound, each holding an OS thread, while the others wait for a turn.
	emu.Fault(roomchattest.Fault{Path: "/consumer/api/v1/chatrooms", Times: 4 * roomchat.DefaultMaxInFlight, Action: roomchattest.Delay(100 * time.Millisecond)})
	const goroutines = 10_000
	before := procStatus(t, "Threads")
	var peak atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if n := int64(procStatus(t, "Threads")); n > peak.Load() {
				peak.Store(n)
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	var wg sync.WaitGroup
	var failed atomic.Int64
	var firstErr atomic.Value
	start := make(chan struct{})
	for i := 0; i < goroutines; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if err := roomchat.Invoke(client, context.Background(), "list_chat_rooms", nil, nil); err != nil {
				failed.Add(1)
				firstErr.CompareAndSwap(nil, err)
			}
		}()
	}
	begun := time.Now()
	close(start)
	wg.Wait()
	took := time.Since(begun)
	close(stop)
	<-sampled
	if n := failed.Load(); n != 0 {
		t.Fatalf("%d of %d calls failed, the first: %v", n, goroutines, firstErr.Load())
	}
	bound := int64(roomchat.DefaultMaxInFlight + 200)
	t.Logf("%d goroutines calling at once: peak OS threads %d (%d before; calls in flight bounded at %d), all done in %v",
		goroutines, peak.Load(), before, roomchat.DefaultMaxInFlight, took.Round(time.Millisecond))
	if peak.Load() > bound {
		t.Fatalf("peak OS threads %d, above DefaultMaxInFlight + 200 = %d", peak.Load(), bound)
	}
}

// A goroutine whose ctx is cancelled while it waits for its turn returns with
// the cancel error, and its call was never sent.
func TestCancelWaitingForATurn(t *testing.T) {
	emu := roomchattest.Start(t)
	client := emu.Client(t, roomchat.WithMaxInFlight(1))
	emu.Fault(roomchattest.Fault{Path: "/consumer/api/v1/chatrooms", Action: roomchattest.Hold()})
	first := make(chan error, 1)
	go func() { first <- roomchat.Invoke(client, context.Background(), "list_chat_rooms", nil, nil) }()
	emu.WaitHeld(1, prompt) // the one turn is taken, by a call on the wire
	got := callThenCancel(t, func(ctx context.Context) error {
		return roomchat.Invoke(client, ctx, "get_chat_room", map[string]any{"roomId": "r"}, nil)
	}, func() {})
	e := asError(t, got.err, roomchat.KindCancelled)
	if !errors.Is(got.err, context.Canceled) || e.OutcomeUnknown {
		t.Fatalf("%+v", e)
	}
	emu.ReleaseHeld()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	journal := emu.Journal()
	if len(journal) != 1 || journal[0].Path != "/consumer/api/v1/chatrooms" {
		t.Fatalf("sent: %+v", journal)
	}
}
