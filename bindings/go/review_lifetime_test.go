package roomchat_test

import (
	"context"
	"errors"
	"runtime"
	"testing"

	"github.com/roomchat/roomchat-go"
	"github.com/roomchat/roomchat-go/roomchattest"
)

// A Client copied by value is the same client: closing the copy closes both,
// and the original's calls then fail with KindConfiguration; Close twice on
// either is fine.
func TestReviewClientCopiedByValue(t *testing.T) {
	emu := roomchattest.Start(t)
	client := emu.Client(t)
	copied := *client
	if _, err := copied.ListChatRooms(context.Background()); err != nil {
		t.Fatal(err)
	}
	copied.Close()
	copied.Close()
	_, err := client.ListChatRooms(context.Background())
	asError(t, err, roomchat.KindConfiguration)
	client.Close()
}

// An iterator running across Close (from another goroutine, between steps):
// the next step yields the closed error once, and the loop ends; its native
// iterator is freed after the client (it holds its own reference).
func TestReviewIteratorAcrossClose(t *testing.T) {
	emu := roomchattest.Start(t, roomchattest.WithSeedUsers(10))
	client := emu.Client(t)
	steps, errs := 0, 0
	for user, err := range client.IterListUsers(context.Background(), &roomchat.ListUsersParams{Limit: roomchat.Int(2)}) {
		steps++
		if err != nil {
			errs++
			asError(t, err, roomchat.KindConfiguration)
			continue
		}
		if user == nil {
			t.Fatal("a nil user without an error")
		}
		if steps == 3 {
			done := make(chan struct{})
			go func() { client.Close(); close(done) }()
			<-done
		}
		if steps > 20 {
			t.Fatal("the iterator goes on after Close")
		}
	}
	if errs != 1 {
		t.Fatalf("%d steps, %d errors: want the closed error once", steps, errs)
	}
}

// A nil ctx is context.Background(), for calls and iterators.
func TestReviewNilCtx(t *testing.T) {
	emu := roomchattest.Start(t, roomchattest.WithSeedUsers(3))
	client := emu.Client(t)
	//lint:ignore SA1012 the point of the test
	if _, err := client.ListChatRooms(nil); err != nil { //nolint:staticcheck
		t.Fatal(err)
	}
	n := 0
	for _, err := range client.IterListUsers(nil, nil) { //nolint:staticcheck
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 3 {
		t.Fatalf("%d users", n)
	}
}

// Forgotten clients with calls and iterators in their past, collected while
// other goroutines call: the finalizer frees each once (no double free, no
// use after free) and never one in use.
func TestReviewFinalizerUnderLoad(t *testing.T) {
	emu := roomchattest.Start(t, roomchattest.WithSeedUsers(5))
	for i := 0; i < 30; i++ {
		client, err := roomchat.NewClient(emu.PrivateKey(), roomchat.WithBaseURL(emu.BaseURL()))
		if err != nil {
			t.Fatal(err)
		}
		for _, err := range client.IterListUsers(context.Background(), &roomchat.ListUsersParams{Limit: roomchat.Int(2)}) {
			if err != nil {
				t.Fatal(err)
			}
			break
		}
		seq := client.IterListUsers(context.Background(), nil)
		client = nil
		runtime.GC()
		// The iterator made before the client was forgotten still works.
		for _, err := range seq {
			if err != nil && !errors.Is(err, roomchat.ErrConfiguration) {
				t.Fatal(err)
			}
		}
	}
	runtime.GC()
	runtime.GC()
}
