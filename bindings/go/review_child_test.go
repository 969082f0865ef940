package roomchat_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/roomchat/roomchat-go"
	"github.com/roomchat/roomchat-go/roomchattest"
)

// TestReviewChild is the child process of the tests below (it runs only when
// they start it): one call, as ROOMCHAT_REVIEW_CHILD says.
func TestReviewChild(t *testing.T) {
	mode := os.Getenv("ROOMCHAT_REVIEW_CHILD")
	if mode == "" {
		t.Skip("the child of TestReviewSignalToAProgramMidCall and TestReviewRoomchatLogEnv")
	}
	client, err := roomchat.NewClientFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	switch mode {
	case "log":
		if _, err := client.ListChatRooms(context.Background()); err != nil {
			t.Fatal(err)
		}
		client.Close()
	case "sigint":
		// A program's usual shutdown: SIGINT cancels the ctx of the call in flight.
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		fmt.Println("calling")
		_, err := client.CreateUser(ctx, "ann", nil)
		client.Close()
		if errors.Is(err, context.Canceled) {
			fmt.Println("cancelled")
			os.Exit(0)
		}
		fmt.Println("ended:", err)
		os.Exit(3)
	}
}

func child(t *testing.T, emu *roomchattest.Emulator, mode string, extraEnv ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestReviewChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "ROOMCHAT_REVIEW_CHILD="+mode, "ROOMCHAT_PRIVATE_KEY="+emu.PrivateKey(),
		"ROOMCHAT_BASE_URL="+emu.BaseURL())
	cmd.Env = append(cmd.Env, extraEnv...)
	return cmd
}

// README, Logging: "Without a logger, ROOMCHAT_LOG=debug|info|warn prints them to standard error."
func TestReviewRoomchatLogEnv(t *testing.T) {
	emu := roomchattest.Start(t)
	cmd := child(t, emu, "log", "ROOMCHAT_LOG=debug")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if out, err := cmd.Output(); err != nil {
		t.Fatalf("child: %v\n%s\n%s", err, out, stderr.String())
	}
	if !strings.Contains(stderr.String(), "/consumer/api/v1/chatrooms") || strings.Contains(stderr.String(), emu.PrivateKey()) {
		t.Fatalf("ROOMCHAT_LOG=debug: the child's standard error does not show the call (or shows the key):\n%s", stderr.String())
	}
}

// SIGINT to a program with a create on the wire: its ctx ends, the call
// returns cancelled, Close returns, and the program exits (within the bound).
func TestReviewSignalToAProgramMidCall(t *testing.T) {
	emu := roomchattest.Start(t)
	emu.Fault(roomchattest.Fault{Method: "POST", Path: "/consumer/api/v1/user", Action: roomchattest.Hold()})
	cmd := child(t, emu, "sigint")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	emu.WaitHeld(1, prompt)
	cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil || !strings.Contains(out.String(), "cancelled") {
			t.Fatalf("the child: %v\n%s", err, out.String())
		}
	case <-time.After(prompt):
		cmd.Process.Kill()
		<-done
		t.Fatalf("the child did not exit within %v of SIGINT:\n%s", prompt, out.String())
	}
	emu.ReleaseHeld()
}
