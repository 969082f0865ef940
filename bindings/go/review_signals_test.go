package roomchat_test

import (
	"bytes"
	"context"
	"os"
	"os/signal"
	"runtime/pprof"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/roomchat/roomchat-go/roomchattest"
)

// Signals delivered while calls wait in the library (a handled SIGUSR1, and
// SIGPROF from the CPU profiler) interrupt its system calls: the calls still
// get their answers (EINTR is retried, never an error).
func TestReviewSignalsDuringCalls(t *testing.T) {
	emu := roomchattest.Start(t)
	client := emu.Client(t)
	got := make(chan os.Signal, 64)
	signal.Notify(got, syscall.SIGUSR1)
	defer signal.Stop(got)
	var profile bytes.Buffer
	if err := pprof.StartCPUProfile(&profile); err != nil {
		t.Skipf("no CPU profile: %v", err)
	}
	defer pprof.StopCPUProfile()
	emu.Fault(roomchattest.Fault{Path: "/consumer/api/v1/chatrooms", Times: 4, Action: roomchattest.Hold()})
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := client.ListChatRooms(context.Background())
			errs <- err
		}()
	}
	emu.WaitHeld(4, prompt)
	stop := make(chan struct{})
	blasted := make(chan struct{})
	go func() {
		defer close(blasted)
		for {
			select {
			case <-stop:
				return
			default:
				syscall.Kill(os.Getpid(), syscall.SIGUSR1)
				time.Sleep(50 * time.Microsecond)
			}
		}
	}()
	time.Sleep(300 * time.Millisecond)
	emu.ReleaseHeld()
	wg.Wait()
	close(stop)
	<-blasted
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("a call interrupted by signals: %v", err)
		}
	}
}
