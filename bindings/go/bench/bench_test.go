package main

// The same contenders as go test benchmarks, for a profile of one of them
// (main.go prints the figures side by side; these are for -cpuprofile and
// -memprofile):
//
//	go test -run '^$' -bench 'ListUsers/roomchat$' -benchmem -cpuprofile cpu.out
//	go tool pprof -top bench.test cpu.out
//
// Against the emulator of ROOMCHAT_BENCH_BASE_URL and ROOMCHAT_BENCH_KEY, or
// one this starts (ROOMCHAT_EMULATOR, default target/release/roomchat-emulator).

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

var (
	emulatorOnce sync.Once
	emulatorErr  error
	baseURL, key string
	started      *emulator
)

func TestMain(m *testing.M) {
	code := m.Run()
	if started != nil {
		started.stop()
	}
	os.Exit(code)
}

func emulatorFor(b *testing.B) (string, string) {
	emulatorOnce.Do(func() {
		baseURL, key = os.Getenv("ROOMCHAT_BENCH_BASE_URL"), os.Getenv("ROOMCHAT_BENCH_KEY")
		if baseURL != "" {
			return
		}
		started, emulatorErr = startEmulator(filepath.Clean(filepath.Join(benchDir(), "..", "..", "..")))
		if emulatorErr == nil {
			baseURL, key = started.baseURL, started.key
		}
	})
	if emulatorErr != nil {
		b.Fatal(emulatorErr)
	}
	return baseURL, key
}

// BenchmarkListUsers: each contender one call at a time, then from 16
// goroutines at once (b.RunParallel; ns/op is then the wall time over the calls).
func BenchmarkListUsers(b *testing.B) {
	for _, name := range contenderNames {
		for _, goroutines := range []int{1, inFlight} {
			label := strings.NewReplacer("/", "-", ", ", "+", " ", "-").Replace(name)
			b.Run(fmt.Sprintf("%s/goroutines=%d", label, goroutines), func(b *testing.B) {
				base, key := emulatorFor(b)
				c, err := newContender(name, base, key)
				if err != nil {
					b.Fatal(err)
				}
				defer c.close()
				ctx, cancel := c.context()
				defer cancel()
				if err := c.call(ctx); err != nil { // the connection open
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				if goroutines == 1 {
					for range b.N {
						if err := c.call(ctx); err != nil {
							b.Fatal(err)
						}
					}
					return
				}
				// RunParallel starts parallelism × GOMAXPROCS goroutines.
				procs := runtime.GOMAXPROCS(0)
				b.SetParallelism((goroutines + procs - 1) / procs)
				var failed sync.Once
				b.RunParallel(func(pb *testing.PB) {
					ctx, cancel := c.context()
					defer cancel()
					for pb.Next() {
						if err := c.call(ctx); err != nil {
							failed.Do(func() { b.Error(err) })
							return
						}
					}
				})
			})
		}
	}
}
