package roomchat_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/roomchat/roomchat-go"
	"github.com/roomchat/roomchat-go/roomchattest"
)

// A sanity bound on "returns promptly", never a timing assertion: a cancel
// that does not reach the call leaves it waiting for its 30 s or 60 s.
const prompt = 5 * time.Second

type outcome struct {
	err     error
	elapsed time.Duration // from the cancel to the return
}

// callThenCancel runs call on a goroutine, waits for ready (a state of the
// emulator), cancels, and gives the call's error and how long it took after the cancel.
func callThenCancel(t *testing.T, call func(ctx context.Context) error, ready func()) outcome {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- call(ctx) }()
	ready()
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		return outcome{err, time.Since(start)}
	case <-time.After(prompt):
		t.Fatalf("the call did not return within %v of its cancel", prompt)
		return outcome{}
	}
}

func posts(emu *roomchattest.Emulator, path string) int {
	n := 0
	for _, e := range emu.Journal() {
		if e.Method == "POST" && e.Path == path {
			n++
		}
	}
	return n
}

// A create cancelled with its request on the wire: cancelled, its outcome
// unknown, sent once (never again), and the call returns at once.
func TestCancelOnTheWire(t *testing.T) {
	emu := roomchattest.Start(t)
	client := emu.Client(t, roomchat.WithRetryNonIdempotent(true))
	emu.Fault(roomchattest.Fault{Method: "POST", Path: "/consumer/api/v1/user", Action: roomchattest.Hold()})
	got := callThenCancel(t, func(ctx context.Context) error {
		_, err := client.CreateUser(ctx, "ann", nil)
		return err
	}, func() { emu.WaitHeld(1, prompt) })
	e := asError(t, got.err, roomchat.KindCancelled)
	if !errors.Is(got.err, context.Canceled) || errors.Is(got.err, context.DeadlineExceeded) {
		t.Fatalf("errors.Is(err, context.Canceled) fails: %v", got.err)
	}
	if !e.OutcomeUnknown {
		t.Fatalf("a create cancelled on the wire must say its outcome is unknown: %+v", e)
	}
	emu.ReleaseHeld()
	if n := posts(emu, "/consumer/api/v1/user"); n != 1 {
		t.Fatalf("sent %d times", n)
	}
	t.Logf("cancel on the wire returned %v after the cancel", got.elapsed)
}

// Cancelled while it waits for the client's rate budget: never sent.
func TestCancelDuringBudgetWait(t *testing.T) {
	emu := roomchattest.Start(t)
	client := emu.Client(t, roomchat.WithRateLimit(1, time.Minute))
	ctx := context.Background()
	if err := roomchat.Invoke(client, ctx, "list_chat_rooms", nil, nil); err != nil {
		t.Fatal(err)
	}
	// The budget is spent for a minute: the next call waits for a slot.
	got := callThenCancel(t, func(ctx context.Context) error {
		return roomchat.Invoke(client, ctx, "list_chat_rooms", nil, nil)
	}, func() { time.Sleep(100 * time.Millisecond) /* not a state: a cancel before the wait gives the same */ })
	e := asError(t, got.err, roomchat.KindCancelled)
	if !errors.Is(got.err, context.Canceled) || e.OutcomeUnknown {
		t.Fatalf("%+v", e)
	}
	if n := len(emu.Journal()); n != 1 {
		t.Fatalf("%d requests sent, want 1", n)
	}
	// A deadline bounds the wait the same way.
	dctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := roomchat.Invoke(client, dctx, "list_chat_rooms", nil, nil)
	asError(t, err, roomchat.KindCancelled)
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || time.Since(start) > prompt {
		t.Fatalf("%v after %v", err, time.Since(start))
	}
	if n := len(emu.Journal()); n != 1 {
		t.Fatalf("%d requests sent, want 1", n)
	}
}

// Cancelled while it waits before a retry (a 503 asking for 30 s): the first
// attempt alone was sent, and the call returns at once.
func TestCancelDuringRetryWait(t *testing.T) {
	emu := roomchattest.Start(t)
	client := emu.Client(t)
	emu.FailNext("/consumer/api/v1/chatrooms", 503, 30*time.Second)
	wait := roomchat.WithCallMaxRetryWait(time.Minute)
	got := callThenCancel(t, func(ctx context.Context) error {
		return roomchat.Invoke(client, ctx, "list_chat_rooms", nil, nil, wait)
	}, func() {
		// The 503 has been answered: the call now waits before its retry.
		deadline := time.Now().Add(prompt)
		for len(emu.Journal()) == 0 || emu.Journal()[0].Status != 503 {
			if time.Now().After(deadline) {
				t.Fatal("no 503 answered")
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
	asError(t, got.err, roomchat.KindCancelled)
	if !errors.Is(got.err, context.Canceled) {
		t.Fatal(got.err)
	}
	if n := len(emu.Journal()); n != 1 {
		t.Fatalf("%d attempts sent, want 1", n)
	}
	// A deadline bounds the whole call, the wait before the retry included.
	emu.FailNext("/consumer/api/v1/chatrooms", 503, 30*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	err := roomchat.Invoke(client, ctx, "list_chat_rooms", nil, nil, wait)
	asError(t, err, roomchat.KindCancelled)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > prompt {
		t.Fatalf("%v after %v", err, time.Since(start))
	}
	// One attempt (the 503), never its retry: 2 with the first call's.
	if n := len(emu.Journal()); n > 2 {
		t.Fatalf("%d attempts sent, want at most 2 (one per call)", n)
	}
}

// A deadline that passes with the request on the wire; a ctx already done
// sends nothing.
func TestDeadlineOnTheWire(t *testing.T) {
	emu := roomchattest.Start(t)
	client := emu.Client(t)
	emu.Fault(roomchattest.Fault{Path: "/consumer/api/v1/chatrooms", Action: roomchattest.Hold()})
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := roomchat.Invoke(client, ctx, "list_chat_rooms", nil, nil)
	asError(t, err, roomchat.KindCancelled)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatal(err)
	}
	emu.ReleaseHeld()
	done, stop := context.WithCancel(context.Background())
	stop()
	err = roomchat.Invoke(client, done, "list_chat_rooms", nil, nil)
	if e := asError(t, err, roomchat.KindCancelled); e.OutcomeUnknown || !errors.Is(err, context.Canceled) {
		t.Fatalf("%+v", e)
	}
	// The first call's request (held until its deadline), and nothing of the second.
	if n := len(emu.Journal()); n > 1 {
		t.Fatalf("%d requests sent, want at most 1", n)
	}
}
