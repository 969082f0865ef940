package roomchat_test

import (
	"context"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/roomchat/roomchat-go"
	"github.com/roomchat/roomchat-go/roomchattest"
)

// A call after Close fails (KindConfiguration) without being sent; Close twice is fine.
func TestCallAfterClose(t *testing.T) {
	emu := roomchattest.Start(t)
	client := emu.Client(t)
	if err := client.Close(); err != nil {
		t.Fatal(err)
	}
	err := roomchat.Invoke(client, context.Background(), "list_chat_rooms", nil, nil)
	asError(t, err, roomchat.KindConfiguration)
	steps := 0
	for _, err := range roomchat.Pages(client, context.Background(), "list_users", nil) {
		steps++
		asError(t, err, roomchat.KindConfiguration)
	}
	if steps != 1 {
		t.Fatalf("a closed client's pages: %d steps, want its error once", steps)
	}
	if err := client.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(emu.Journal()); n != 0 {
		t.Fatalf("%d requests sent", n)
	}
}

// Close while a call is in flight waits for it: the call gets its answer,
// and Close returns after it.
func TestCloseWaitsForCallsInFlight(t *testing.T) {
	emu := roomchattest.Start(t)
	client := emu.Client(t)
	emu.Fault(roomchattest.Fault{Path: "/consumer/api/v1/chatrooms", Action: roomchattest.Hold()})
	called := make(chan error, 1)
	go func() { called <- roomchat.Invoke(client, context.Background(), "list_chat_rooms", nil, nil) }()
	emu.WaitHeld(1, prompt)
	closed := make(chan struct{})
	go func() {
		client.Close()
		close(closed)
	}()
	// Not a state to wait for, a check that cannot fail wrongly: a Close that
	// did not wait would return now.
	select {
	case <-closed:
		t.Fatal("Close returned with a call in flight")
	case <-time.After(200 * time.Millisecond):
	}
	emu.ReleaseHeld()
	if err := <-called; err != nil {
		t.Fatalf("the call in flight: %v", err)
	}
	<-closed
	asError(t, roomchat.Invoke(client, context.Background(), "list_chat_rooms", nil, nil), roomchat.KindConfiguration)
}

// openFiles is how many file descriptors the process holds.
func openFiles(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(entries)
}

// A client the program forgets is freed by its finalizer: its connection to
// the emulator (a file descriptor) is closed once the GC has run it.
func TestForgottenClientIsFreed(t *testing.T) {
	emu := roomchattest.Start(t)
	base := openFiles(t)
	func() {
		client, err := roomchat.NewClient(emu.PrivateKey(), roomchat.WithBaseURL(emu.BaseURL()))
		if err != nil {
			t.Fatal(err)
		}
		if err := roomchat.Invoke(client, context.Background(), "list_chat_rooms", nil, nil); err != nil {
			t.Fatal(err)
		}
	}()
	held := openFiles(t)
	if held <= base {
		t.Skipf("the client's connection is not observable as a file descriptor (%d before, %d after)", base, held)
	}
	deadline := time.Now().Add(prompt)
	for openFiles(t) > base {
		if time.Now().After(deadline) {
			t.Fatalf("a forgotten client was not freed: %d file descriptors, %d before it", openFiles(t), base)
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("file descriptors: %d before the client, %d with it, %d once it was collected", base, held, openFiles(t))
}
