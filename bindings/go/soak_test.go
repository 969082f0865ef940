package roomchat_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/roomchat/roomchat-go"
	"github.com/roomchat/roomchat-go/roomchattest"
)

// 100,000 calls with the RSS flat: measured after 10,000 (warm: the
// connection pool, the budget's log, the allocator's arenas) and after
// 100,000, each after a GC. Run when ROOMCHAT_GO_SOAK=1 (the test command
// sets it): ROOMCHAT_GO_SOAK=1 go test -race -run TestSoak -v .
//
// The bound: 20 MB of growth over 90,000 calls is 230 bytes a call; a leak of
// one answer (a page of users, a few hundred bytes) or of one C string per
// call would pass it, and of the error or result object per call (the
// smallest thing the binding could forget to free) it would not, within the
// noise of the allocators (Go's heap and the library's) that a GC'd figure
// leaves.
func TestSoak(t *testing.T) {
	if os.Getenv("ROOMCHAT_GO_SOAK") != "1" {
		t.Skip("set ROOMCHAT_GO_SOAK=1 to run 100,000 calls")
	}
	if raceEnabled && os.Getenv("ROOMCHAT_GO_SOAK_IN_PROCESS") != "1" {
		// Under -race the race runtime's own memory grows with each
		// synchronisation once many goroutines have lived (its vector
		// clocks grow with them): measured after TestManyGoroutines' 10,000,
		// +656 MB over these 90,000 calls, where this test alone under -race
		// grows 3 MB and a build without -race 0.3 MB in both cases. So the
		// figure is taken by this test built without -race, alone
		// (ROOMCHAT_GO_SOAK_IN_PROCESS=1 measures it here instead).
		soakWithoutRace(t)
		return
	}
	emu := roomchattest.Start(t, roomchattest.WithRateLimit(1_000_000, time.Second), roomchattest.WithJournalCapacity(0), roomchattest.WithSeedUsers(5))
	client := emu.Client(t)
	const workers = 8
	run := func(calls int) {
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				var page struct{ Total int }
				for i := 0; i < calls/workers; i++ {
					// A cancellable ctx: each call makes and frees its cancel token and view.
					if err := roomchat.Invoke(client, ctx, "list_users", map[string]any{"limit": 5}, &page); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
	}
	rss := func() int {
		runtime.GC()
		debug.FreeOSMemory()
		return procStatus(t, "VmRSS")
	}
	begun := time.Now()
	run(10_000)
	warm := rss()
	run(90_000)
	end := rss()
	t.Logf("RSS after 10,000 calls %d kB, after 100,000 %d kB (growth %+d kB), in %v",
		warm, end, end-warm, time.Since(begun).Round(time.Millisecond))
	if end-warm > 20*1024 {
		t.Fatalf("RSS grew %d kB over 90,000 calls", end-warm)
	}
}

// soakWithoutRace runs TestSoak in a test binary built without -race (go
// test, from the Go that built this one), and reports what it printed.
func soakWithoutRace(t *testing.T) {
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		if goTool, err = exec.LookPath("go"); err != nil {
			t.Fatalf("built with -race, and no go tool to run the soak without it: %v", err)
		}
	}
	cmd := exec.Command(goTool, "test", "-count=1", "-run", "^TestSoak$", "-v", ".")
	// Built without -race even if GOFLAGS asks for it.
	env := []string{"ROOMCHAT_GO_SOAK=1"}
	for _, kv := range os.Environ() {
		if flags, ok := strings.CutPrefix(kv, "GOFLAGS="); ok {
			kv = "GOFLAGS=" + strings.Join(slices.DeleteFunc(strings.Fields(flags), func(f string) bool { return f == "-race" || f == "-race=true" }), " ")
		}
		env = append(env, kv)
	}
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if strings.Contains(line, "RSS") || strings.Contains(line, "FAIL") || strings.Contains(line, "ok ") || err != nil {
			t.Log("(without -race) " + line)
		}
	}
	if err != nil {
		t.Fatalf("the soak without -race failed: %v", err)
	}
}
