// Command bench prints the Go package's figures beside what a Go team writes
// without it (figures, not a test): list_users of 50 users (the emulator
// started with --seed-users 50), roomchat's Client.ListUsers against net/http
// (one shared http.Client, MaxIdleConnsPerHost 64, a 30 s timeout) with
// encoding/json into the same roomchat.UserPage, each call reading every
// username; each with context.Background() and with a ctx that can be
// cancelled (a server handler's). One call at a time, then 16 goroutines at
// once. Per call: the time (the block's wall time over its calls), the median
// and p99 of the calls' own times, the process's CPU time, and the Go heap's
// allocations and bytes (runtime.MemStats, as -benchmem counts them; the
// library's own Rust allocations are not Go's and not in them). Each mode
// twice: on the machine as it is (idle), then loaded: one busy-loop process per
// core beside it (scripts/bench/cpu-load.sh, the loader every language's
// benchmarks share), as on a production server. Last, the time from a
// process's start to its first answer (exec, NewClientFromEnv, ListUsers, exit:
// ./startup/roomchat) beside net/http's (./startup/nethttp), each built once
// and run ROOMCHAT_BENCH_STARTS times, idle and loaded.
//
// Each contender runs in a process of its own (this program with -side NAME),
// which loads only its own client and times its own blocks; this process
// conducts them over their stdin and stdout, one block at a time, rotating who
// goes first, and is idle while a block runs: a contender's garbage, threads
// and connections are never another's (the Node benchmark's lesson, issue 51
// item 12).
//
//	bash bindings/go/bench/run.sh       (or, in bindings/go/bench with Go's env set: go run .)
//	ROOMCHAT_BENCH_N          calls per contender and mode, idle (default 2000)
//	ROOMCHAT_BENCH_N_LOADED   the same, loaded (default ROOMCHAT_BENCH_N, at most 1000)
//	ROOMCHAT_BENCH_STARTS     runs of each first-answer program, idle and loaded (default 20)
//	ROOMCHAT_EMULATOR         the emulator (default target/release/roomchat-emulator)
//
// For a profile: go test -run '^$' -bench . -benchmem -cpuprofile cpu.out (bench_test.go).
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const inFlight = 16

func main() {
	sideName := flag.String("side", "", "run as the process of this contender (the conductor starts them)")
	flag.Parse()
	var err error
	if *sideName != "" {
		err = side(*sideName)
	} else {
		err = conduct()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "go bench:", err)
		os.Exit(1)
	}
}

// ---- a contender's process ----

type request struct {
	Op          string `json:"op"`
	Count       int    `json:"count,omitempty"`
	Concurrency int    `json:"concurrency,omitempty"`
}

type answer struct {
	OK    *results `json:"ok,omitempty"`
	Error string   `json:"error,omitempty"`
}

// results are a contender's figures over the blocks since the last results.
type results struct {
	Calls       int     `json:"calls"`
	USPerCall   float64 `json:"us_per_call"`
	MedianUS    float64 `json:"median_us"`
	P99US       float64 `json:"p99_us"`
	CPUUSPerCal float64 `json:"cpu_us_per_call"`
	Allocs      float64 `json:"allocs_per_call"`
	Bytes       float64 `json:"bytes_per_call"`
	GCsPer1000  float64 `json:"gcs_per_1000"`
}

// tally adds up a contender's blocks.
type tally struct {
	calls            int
	wall, cpu        time.Duration
	mallocs, bytes   uint64
	gcs              uint32
	latencies        []time.Duration
	stats0, stats1   runtime.MemStats
	rusage0, rusage1 syscall.Rusage
}

func cpuTime(r *syscall.Rusage) time.Duration {
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}

// run makes count calls from concurrency goroutines, each with its own ctx,
// and writes each call's time to latencies (when not nil).
func run(c *contender, count, concurrency int, latencies []time.Duration) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var failure error
	for range min(concurrency, count) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := c.context()
			defer cancel()
			for {
				i := int(next.Add(1) - 1)
				if i >= count {
					return
				}
				start := time.Now()
				err := c.call(ctx)
				if latencies != nil {
					latencies[i] = time.Since(start)
				}
				if err != nil {
					once.Do(func() { failure = err })
					next.Store(int64(count)) // the others stop too
					return
				}
			}
		}()
	}
	wg.Wait()
	return failure
}

// block runs one timed block and adds it to the tally.
func (t *tally) block(c *contender, count, concurrency int) error {
	latencies := make([]time.Duration, count)
	runtime.ReadMemStats(&t.stats0)
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &t.rusage0); err != nil {
		return err
	}
	start := time.Now()
	err := run(c, count, concurrency, latencies)
	wall := time.Since(start)
	if err2 := syscall.Getrusage(syscall.RUSAGE_SELF, &t.rusage1); err2 != nil {
		return err2
	}
	runtime.ReadMemStats(&t.stats1)
	if err != nil {
		return err
	}
	t.calls += count
	t.wall += wall
	t.cpu += cpuTime(&t.rusage1) - cpuTime(&t.rusage0)
	t.mallocs += t.stats1.Mallocs - t.stats0.Mallocs
	t.bytes += t.stats1.TotalAlloc - t.stats0.TotalAlloc
	t.gcs += t.stats1.NumGC - t.stats0.NumGC
	t.latencies = append(t.latencies, latencies...)
	return nil
}

func (t *tally) results() *results {
	n := float64(t.calls)
	slices.Sort(t.latencies)
	quantile := func(q float64) float64 {
		if len(t.latencies) == 0 {
			return 0
		}
		i := min(len(t.latencies)-1, int(q*float64(len(t.latencies))))
		return float64(t.latencies[i]) / 1e3
	}
	return &results{
		Calls:       t.calls,
		USPerCall:   float64(t.wall) / 1e3 / n,
		MedianUS:    quantile(0.5),
		P99US:       quantile(0.99),
		CPUUSPerCal: float64(t.cpu) / 1e3 / n,
		Allocs:      float64(t.mallocs) / n,
		Bytes:       float64(t.bytes) / n,
		GCsPer1000:  float64(t.gcs) * 1000 / n,
	}
}

// side is one contender's process: it answers the conductor's requests, one
// JSON line each, on its stdout (which nothing else writes).
func side(name string) error {
	c, err := newContender(name, os.Getenv("ROOMCHAT_BENCH_BASE_URL"), os.Getenv("ROOMCHAT_BENCH_KEY"))
	if err != nil {
		return err
	}
	in := bufio.NewScanner(os.Stdin)
	out := json.NewEncoder(os.Stdout)
	var t tally
	for in.Scan() {
		var req request
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			return err
		}
		var a answer
		var err error
		switch req.Op {
		case "warm":
			err = run(c, req.Count, req.Concurrency, nil)
		case "block":
			err = t.block(c, req.Count, req.Concurrency)
		case "results":
			a.OK = t.results()
			t = tally{}
		case "end":
			c.close()
			if c.sink.Load() == 0 {
				err = errors.New("nothing was read")
			}
		default:
			err = fmt.Errorf("unknown request %q", req.Op)
		}
		if err != nil {
			a.Error = err.Error()
		}
		if err := out.Encode(a); err != nil {
			return err
		}
		if req.Op == "end" {
			return nil
		}
	}
	return in.Err()
}

// ---- the conductor ----

type sideProcess struct {
	name string
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Scanner
}

func (s *sideProcess) ask(req request) (*results, error) {
	line, _ := json.Marshal(req)
	if _, err := s.in.Write(append(line, '\n')); err != nil {
		return nil, fmt.Errorf("%s: %w", s.name, err)
	}
	if !s.out.Scan() {
		return nil, fmt.Errorf("%s's process ended (%v)", s.name, s.out.Err())
	}
	var a answer
	if err := json.Unmarshal(s.out.Bytes(), &a); err != nil {
		return nil, fmt.Errorf("%s: %w", s.name, err)
	}
	if a.Error != "" {
		return nil, fmt.Errorf("%s: %s", s.name, a.Error)
	}
	return a.OK, nil
}

// benchDir is this program's source folder (./startup is built from there).
func benchDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

func envInt(name string, fallback int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return fallback
}

type emulator struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	baseURL string
	key     string
}

func startEmulator(root string) (*emulator, error) {
	path := os.Getenv("ROOMCHAT_EMULATOR")
	if path == "" {
		target := os.Getenv("CARGO_TARGET_DIR")
		if target == "" {
			target = filepath.Join(root, "target")
		}
		path = filepath.Join(target, "release", "roomchat-emulator")
	}
	cmd := exec.Command(path, "--port", "0", "--seed-users", strconv.Itoa(pageSize), "--rate-limit", "1000000000/1s")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("the emulator (%s): %w", path, err)
	}
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	if err != nil {
		_ = stdin.Close()
		_ = cmd.Wait()
		return nil, fmt.Errorf("the emulator printed no ready line: %w", err)
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	var ready struct {
		BaseURL    string `json:"base_url"`
		PrivateKey string `json:"private_key"`
	}
	if err := json.Unmarshal(line, &ready); err != nil {
		return nil, err
	}
	return &emulator{cmd: cmd, stdin: stdin, baseURL: ready.BaseURL, key: ready.PrivateKey}, nil
}

func (e *emulator) stop() {
	_ = e.stdin.Close() // it stops when its stdin closes
	_ = e.cmd.Wait()
}

// loadProcesses is how many busy processes a loaded round starts: one per core.
var loadProcesses = runtime.NumCPU()

// withCPULoad runs fn while scripts/bench/cpu-load.sh keeps every core busy;
// the load stops when fn returns (its stdin closes), or when this process ends.
func withCPULoad(root string, fn func() error) error {
	load := exec.Command("bash", filepath.Join(root, "scripts", "bench", "cpu-load.sh"), strconv.Itoa(loadProcesses), "900")
	load.Stderr = os.Stderr
	stdin, err := load.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := load.StdoutPipe()
	if err != nil {
		return err
	}
	if err := load.Start(); err != nil {
		return err
	}
	defer func() {
		_ = stdin.Close()
		_ = load.Wait()
	}()
	ready, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(ready, "cpu-load:") {
		return fmt.Errorf("cpu-load.sh did not start: %q %v", ready, err)
	}
	return fn()
}

func conduct() error {
	dir := benchDir()
	root := filepath.Clean(filepath.Join(dir, "..", "..", ".."))
	n := envInt("ROOMCHAT_BENCH_N", 2000)
	nLoaded := envInt("ROOMCHAT_BENCH_N_LOADED", min(n, 1000))
	starts := envInt("ROOMCHAT_BENCH_STARTS", 20)
	loadedLabel := fmt.Sprintf("loaded (%d busy processes)", loadProcesses)

	// The first-answer programs, built before anything runs.
	tmp, err := os.MkdirTemp("", "roomchat-go-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	programs := map[string]string{roomchatName: "roomchat", netHTTPName: "nethttp"}
	binaries := map[string]string{}
	for name, pkg := range programs {
		bin := filepath.Join(tmp, "first-answer-"+pkg)
		build := exec.Command("go", "build", "-o", bin, "./startup/"+pkg)
		build.Dir = dir
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("go build ./startup/%s: %w", pkg, err)
		}
		binaries[name] = bin
	}

	emu, err := startEmulator(root)
	if err != nil {
		return err
	}
	defer emu.stop()
	self, err := os.Executable()
	if err != nil {
		return err
	}

	sides := map[string]*sideProcess{}
	defer func() {
		for _, s := range sides {
			_ = s.in.Close()
			_ = s.cmd.Wait()
		}
	}()
	for _, name := range contenderNames {
		cmd := exec.Command(self, "-side", name)
		cmd.Env = append(os.Environ(), "ROOMCHAT_BENCH_BASE_URL="+emu.baseURL, "ROOMCHAT_BENCH_KEY="+emu.key)
		cmd.Stderr = os.Stderr
		in, err := cmd.StdinPipe()
		if err != nil {
			return err
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			return err
		}
		if err := cmd.Start(); err != nil {
			return err
		}
		sides[name] = &sideProcess{name: name, cmd: cmd, in: in, out: bufio.NewScanner(out)}
	}

	measure := func(concurrency, calls int) (map[string]*results, error) {
		for _, name := range contenderNames { // connections open, code paths hot
			if _, err := sides[name].ask(request{Op: "warm", Count: 200, Concurrency: concurrency}); err != nil {
				return nil, err
			}
		}
		blockSize := 50
		if concurrency > 1 {
			blockSize = 200
		}
		for done, round := 0, 0; done < calls; round++ {
			count := min(blockSize, calls-done)
			for i := range contenderNames { // who goes first rotates
				name := contenderNames[(i+round)%len(contenderNames)]
				if _, err := sides[name].ask(request{Op: "block", Count: count, Concurrency: concurrency}); err != nil {
					return nil, err
				}
			}
			done += count
		}
		all := map[string]*results{}
		for _, name := range contenderNames {
			r, err := sides[name].ask(request{Op: "results"})
			if err != nil {
				return nil, err
			}
			all[name] = r
		}
		return all, nil
	}

	type round struct {
		title, load string
		results     map[string]*results
	}
	var rounds []round
	for _, mode := range []struct {
		title       string
		concurrency int
	}{{"one call at a time", 1}, {fmt.Sprintf("%d goroutines at once", inFlight), inFlight}} {
		idle, err := measure(mode.concurrency, n)
		if err != nil {
			return err
		}
		table(mode.title, "idle", n, idle)
		rounds = append(rounds, round{mode.title, "idle", idle})
		var loaded map[string]*results
		if err := withCPULoad(root, func() (err error) {
			loaded, err = measure(mode.concurrency, nLoaded)
			return err
		}); err != nil {
			return err
		}
		table(mode.title, loadedLabel, nLoaded, loaded)
		rounds = append(rounds, round{mode.title, loadedLabel, loaded})
	}
	for _, name := range contenderNames {
		if _, err := sides[name].ask(request{Op: "end"}); err != nil {
			return err
		}
	}

	// The first answer of a fresh process.
	env := append(os.Environ(), "ROOMCHAT_BASE_URL="+emu.baseURL, "ROOMCHAT_PRIVATE_KEY="+emu.key)
	firstAnswer := func() (map[string][]time.Duration, error) {
		times := map[string][]time.Duration{}
		names := []string{roomchatName, netHTTPName}
		for i := range starts {
			for j := range names {
				name := names[(i+j)%len(names)]
				cmd := exec.Command(binaries[name])
				cmd.Env = env
				cmd.Stderr = os.Stderr
				start := time.Now()
				out, err := cmd.Output()
				took := time.Since(start)
				if err != nil {
					return nil, fmt.Errorf("%s's first-answer program: %w", name, err)
				}
				if strings.TrimSpace(string(out)) != strconv.Itoa(pageSize) {
					return nil, fmt.Errorf("%s's first-answer program printed %q", name, out)
				}
				times[name] = append(times[name], took)
			}
		}
		return times, nil
	}
	startIdle, err := firstAnswer()
	if err != nil {
		return err
	}
	var startLoaded map[string][]time.Duration
	if err := withCPULoad(root, func() (err error) {
		startLoaded, err = firstAnswer()
		return err
	}); err != nil {
		return err
	}

	fmt.Printf("\ngo: first answer of a fresh process (exec, NewClientFromEnv / http.Client, list_users, exit; %d runs each, interleaved), idle and %s\n", starts, loadedLabel)
	fmt.Printf("%-12s%14s%14s%16s%14s%12s\n", "program", "idle median", "idle p90", "loaded median", "loaded p90", "binary")
	for _, name := range []string{roomchatName, netHTTPName} {
		info, _ := os.Stat(binaries[name])
		fmt.Printf("%-12s%11.1f ms%11.1f ms%13.1f ms%11.1f ms%9.1f MB\n", name,
			ms(quantile(startIdle[name], 0.5)), ms(quantile(startIdle[name], 0.9)),
			ms(quantile(startLoaded[name], 0.5)), ms(quantile(startLoaded[name], 0.9)), float64(info.Size())/1e6)
	}

	// The figures a regression shows in, one line each.
	fmt.Println()
	for _, r := range rounds {
		for _, pair := range [][2]string{{roomchatName, netHTTPName}, {roomchatCtxName, netHTTPCtxName}} {
			ours, theirs := r.results[pair[0]], r.results[pair[1]]
			ratio := theirs.USPerCall / ours.USPerCall
			behind := ""
			if ratio < 1 {
				behind = " (BEHIND net/http)"
			}
			fmt.Printf("go: %s, %s: %s %.1f µs/call (median %.1f, p99 %.1f; %.0f allocs, CPU %.1f µs), %s %.1f µs/call (median %.1f, p99 %.1f; %.0f allocs, CPU %.1f µs): %.2f× net/http's speed%s, median %.2f×, CPU %.2f×\n",
				r.title, r.load, pair[0], ours.USPerCall, ours.MedianUS, ours.P99US, ours.Allocs, ours.CPUUSPerCal,
				pair[1], theirs.USPerCall, theirs.MedianUS, theirs.P99US, theirs.Allocs, theirs.CPUUSPerCal, ratio, behind,
				theirs.MedianUS/ours.MedianUS, theirs.CPUUSPerCal/ours.CPUUSPerCal)
		}
	}
	for _, load := range []struct {
		label string
		times map[string][]time.Duration
	}{{"idle", startIdle}, {loadedLabel, startLoaded}} {
		fmt.Printf("go: first answer, %s: roomchat %.1f ms, net/http %.1f ms (medians of %d)\n", load.label,
			ms(quantile(load.times[roomchatName], 0.5)), ms(quantile(load.times[netHTTPName], 0.5)), starts)
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func quantile(values []time.Duration, q float64) time.Duration {
	if len(values) == 0 {
		return 0
	}
	sorted := slices.Clone(values)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))]
}

func table(title, load string, calls int, all map[string]*results) {
	fmt.Printf("\ngo list_users (%d users), %s, %s (%d calls per contender, each in its own process, interleaved in blocks; GOMAXPROCS %d)\n",
		pageSize, title, load, calls, runtime.GOMAXPROCS(0))
	fmt.Printf("%-27s%9s%9s%11s%9s%13s%13s%9s%12s%12s\n",
		"contender", "µs/call", "calls/s", "median µs", "p99 µs", "CPU µs/call", "allocs/call", "B/call", "GCs/1000", "roomchat ×")
	for _, name := range contenderNames {
		r := all[name]
		// Against the roomchat row of the same ctx.
		ours := all[roomchatName]
		if name == netHTTPCtxName || name == roomchatCtxName {
			ours = all[roomchatCtxName]
		}
		fmt.Printf("%-27s%9.1f%9.0f%11.1f%9.1f%13.1f%13.0f%9.0f%12.1f%12.2f\n",
			name, r.USPerCall, 1e6/r.USPerCall, r.MedianUS, r.P99US, r.CPUUSPerCal, r.Allocs, r.Bytes, r.GCsPer1000, r.USPerCall/ours.USPerCall)
	}
}
