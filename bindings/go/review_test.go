package roomchat_test

// Reproducers of the hostile review (goreview): each test states the promise it checks.

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/roomchat/roomchat-go"
	"github.com/roomchat/roomchat-go/roomchattest"
)

// A call that starts while Close waits for a call held on the wire must still
// honour its ctx: its deadline ends it (README: "a goroutine whose ctx ends
// while it waits returns at once").
func TestReviewCallDuringPendingCloseHonoursCtx(t *testing.T) {
	emu := roomchattest.Start(t)
	client := emu.Client(t)
	emu.Fault(roomchattest.Fault{Path: "/consumer/api/v1/chatrooms", Action: roomchattest.Hold()})
	held := make(chan error, 1)
	go func() { _, err := client.ListChatRooms(context.Background()); held <- err }()
	emu.WaitHeld(1, prompt)
	closed := make(chan struct{})
	go func() { client.Close(); close(closed) }()
	// Let Close reach its wait for the held call (not observable from here).
	// The pause cannot make the test fail wrongly: had Close not begun, the
	// call below would get its answer, at once, as well.
	time.Sleep(100 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { _, err := client.ListChatRooms(ctx); done <- err }()
	select {
	case err := <-done:
		var e *roomchat.Error
		if !errors.As(err, &e) {
			t.Fatalf("want a *roomchat.Error, got %v", err)
		}
	case <-time.After(prompt):
		emu.ReleaseHeld()
		<-held
		<-closed
		<-done
		t.Fatalf("a call whose ctx deadline passed stayed blocked behind a pending Close for %v", prompt)
	}
	emu.ReleaseHeld()
	<-held
	<-closed
}

// The zero Client (var c roomchat.Client, or &roomchat.Client{}) must not
// panic: "no input ever panics".
func TestReviewZeroClientDoesNotPanic(t *testing.T) {
	check := func(name string, f func() error) {
		t.Helper()
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("%s on the zero Client panicked: %v", name, r)
			}
		}()
		if err := f(); err == nil {
			t.Errorf("%s on the zero Client: no error", name)
		}
	}
	var zero roomchat.Client
	check("ListChatRooms", func() error { _, err := zero.ListChatRooms(context.Background()); return err })
	check("SignInURL", func() error { _, err := zero.SignInURL("r", "t"); return err })
	check("IterListUsers", func() error {
		for _, err := range zero.IterListUsers(context.Background(), nil) {
			return err
		}
		return nil
	})
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("Close on the zero Client panicked: %v", r)
			}
		}()
		_ = zero.Close()
	}()
}

// panicHandler panics in every Handle: a broken slog handler.
type panicHandler struct{}

func (panicHandler) Enabled(context.Context, slog.Level) bool  { return true }
func (panicHandler) Handle(context.Context, slog.Record) error { panic("handler exploded") }
func (h panicHandler) WithAttrs([]slog.Attr) slog.Handler      { return h }
func (h panicHandler) WithGroup(string) slog.Handler           { return h }

// A panicking slog handler costs its line only: the call returns its answer.
func TestReviewPanickingLogHandler(t *testing.T) {
	emu := roomchattest.Start(t)
	client := emu.Client(t, roomchat.WithLogger(slog.New(panicHandler{})))
	emu.FailNext("/consumer/api/v1/chatrooms", 503, 0) // a retry: a Warn line too
	if _, err := client.ListChatRooms(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// Calls whose ctx is cancelled at every instant, racing Close: each returns
// nil, a cancel error that errors.Is context.Canceled, or the closed error.
func TestReviewCancelEveryInstantRacingClose(t *testing.T) {
	emu := roomchattest.Start(t)
	client := emu.Client(t, roomchat.WithMaxInFlight(4))
	var wg sync.WaitGroup
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				time.Sleep(time.Duration(i%20) * 100 * time.Microsecond)
				cancel()
			}()
			var err error
			if i%2 == 0 {
				_, err = client.ListChatRooms(ctx)
			} else {
				for _, e := range client.IterListUsers(ctx, nil) {
					if e != nil {
						err = e
					}
				}
			}
			cancel()
			var e *roomchat.Error
			switch {
			case err == nil:
			case !errors.As(err, &e):
				t.Errorf("not a *roomchat.Error: %T %v", err, err)
			case e.Kind == roomchat.KindCancelled && !errors.Is(err, context.Canceled):
				t.Errorf("a cancel error that is not context.Canceled: %v", err)
			case e.Kind != roomchat.KindCancelled && e.Kind != roomchat.KindConfiguration:
				t.Errorf("unexpected error: %v", err)
			}
		}(i)
		if i == 150 {
			client.Close()
		}
	}
	wg.Wait()
}

// The ...WithResponse doc: with an error, the Response only when a 2xx answer
// came that did not decode; an error answer's status is the *Error's Status.
// (It said the Response came "also with an error when an answer came", which
// core's C call never gives.)
func TestReviewWithResponseOnErrorAnswer(t *testing.T) {
	emu := roomchattest.Start(t)
	client := emu.Client(t)
	_, resp, err := client.GetChatRoomWithResponse(context.Background(), "no-such-room")
	e := asError(t, err, roomchat.KindNotFound)
	if resp != nil || e.Status != 404 {
		t.Fatalf("an error answer: Response %+v, Status %d", resp, e.Status)
	}
}
