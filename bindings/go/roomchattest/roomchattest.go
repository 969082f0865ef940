// Package roomchattest runs the roomchat emulator for a Go test: a local,
// stateful stand-in for the chat service (users, rooms, messages, the rate
// limit, plan gating) with fault injection and a journal of the requests it
// received.
//
//	func TestSignUp(t *testing.T) {
//		emu := roomchattest.Start(t, roomchattest.WithSeedUsers(3)) // stopped when the test ends
//		emu.Fault(roomchattest.Fault{Method: "POST", Path: "/consumer/api/v1/user",
//			Action: roomchattest.Respond(429, `{"message":"Too many requests"}`, map[string]string{"Retry-After": "1"})})
//		client := emu.Client(t) // closed when the test ends
//		// ... your code calls the service through client ...
//		for _, e := range emu.Journal() {
//			t.Log(e.Method, e.Path, e.Status)
//		}
//	}
//
// The emulator is an executable, the same one the Python, Node and C test kits
// run: the path in $ROOMCHAT_EMULATOR, else `roomchat-emulator` on PATH. Get it
// with `pip install roomchat-emulator` or `npm install roomchat-emulator` (one
// static Linux executable, no Rust needed), or build it from the repository
// with `cargo build --release -p roomchat-emulator`.
//
// The methods talk to the emulator's admin API (/_emulator/, described in the
// emulator's README): its requests are never journaled, rate-limited or
// faulted. A method that fails calls t.Fatal, so call them from the test's own
// goroutine, as testing requires.
package roomchattest

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/roomchat/roomchat-go"
)

// EnvEmulator is the environment variable naming the emulator executable to
// run (it wins over the one on PATH), as every roomchat test kit reads it.
const EnvEmulator = "ROOMCHAT_EMULATOR"

const executable = "roomchat-emulator"

const installHint = "install it with `pip install roomchat-emulator` or `npm install roomchat-emulator` " +
	"(one static executable) and put it on PATH, or set " + EnvEmulator + " to its path " +
	"(in the roomchat repository: cargo build --release -p roomchat-emulator, then " +
	EnvEmulator + "=target/release/roomchat-emulator)"

// Option sets how Start runs the emulator.
type Option func(*config)

type config struct {
	binary          string
	privateKey      string
	publicKey       string
	rateRequests    int
	rateWindow      time.Duration
	rateHeaders     bool
	seedUsers       int
	tls             bool
	journalCapacity *int
	gzipMinBytes    *int
	startupTimeout  time.Duration
	extraArgs       []string
}

// WithBinary runs the emulator at path instead of finding it.
func WithBinary(path string) Option { return func(c *config) { c.binary = path } }

// WithKeys sets the account's private and public keys (by default a pair of
// its own for each emulator, renewed by Reset).
func WithKeys(privateKey, publicKey string) Option {
	return func(c *config) { c.privateKey, c.publicKey = privateKey, publicKey }
}

// WithSeedUsers makes n users (`seed-user-<k>`) at start and at each Reset.
func WithSeedUsers(n int) Option { return func(c *config) { c.seedUsers = n } }

// WithRateLimit sets the service's rate limit the emulator enforces: requests
// per window (default 600 per minute, as the service).
func WithRateLimit(requests int, window time.Duration) Option {
	return func(c *config) { c.rateRequests, c.rateWindow = requests, window }
}

// WithRateLimitHeaders makes every answer carry X-RateLimit-* headers, and
// each 429 a Retry-After (off by default, as the service documents none).
func WithRateLimitHeaders() Option { return func(c *config) { c.rateHeaders = true } }

// WithTLS serves HTTPS with a CA of the emulator's own, which Client trusts
// (CAPEM gives it).
func WithTLS() Option { return func(c *config) { c.tls = true } }

// WithJournalCapacity sets how many requests the journal keeps (default 10,000).
func WithJournalCapacity(n int) Option { return func(c *config) { c.journalCapacity = &n } }

// WithGzipMinBytes gzips the answers of at least n bytes to a client that
// accepts gzip (off by default).
func WithGzipMinBytes(n int) Option { return func(c *config) { c.gzipMinBytes = &n } }

// WithStartupTimeout sets how long Start waits for the emulator to be ready
// (default 10 s).
func WithStartupTimeout(d time.Duration) Option { return func(c *config) { c.startupTimeout = d } }

// WithArgs passes more flags to the executable (see `roomchat-emulator --help`).
func WithArgs(args ...string) Option {
	return func(c *config) { c.extraArgs = append(c.extraArgs, args...) }
}

// Emulator is a running emulator process on a free loopback port.
type Emulator struct {
	t        testing.TB
	cfg      config
	renewKey [2]bool

	mu         sync.Mutex
	privateKey string
	publicKey  string

	baseURL, chatURL, adminURL string
	caPEM                      []byte
	caFile                     string

	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *tail
	admin  *http.Client
	done   chan struct{}
}

// FindEmulator is the emulator executable Start runs: $ROOMCHAT_EMULATOR when
// set (an error if it is not an executable file), else roomchat-emulator on
// PATH; an error saying how to get it when there is none.
func FindEmulator() (string, error) {
	if path := os.Getenv(EnvEmulator); path != "" {
		if !isExecutable(path) {
			return "", fmt.Errorf("roomchattest: %s names %q, which is not an executable file", EnvEmulator, path)
		}
		return path, nil
	}
	path, err := exec.LookPath(executable)
	if err != nil {
		return "", fmt.Errorf("roomchattest: the %s executable was not found (%s not set, and none on PATH): %s", executable, EnvEmulator, installHint)
	}
	return path, nil
}

func isExecutable(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular() && info.Mode().Perm()&0o111 != 0
}

// Start runs an emulator for the test and stops it when the test ends
// (t.Cleanup). It fails the test (t.Fatal) when there is no emulator
// executable, saying how to get one, or when it does not start.
func Start(t testing.TB, opts ...Option) *Emulator {
	t.Helper()
	cfg := config{rateRequests: 600, rateWindow: time.Minute, startupTimeout: 10 * time.Second}
	for _, opt := range opts {
		opt(&cfg)
	}
	binary := cfg.binary
	if binary == "" {
		var err error
		if binary, err = FindEmulator(); err != nil {
			t.Fatal(err)
		}
	}
	e := &Emulator{t: t, cfg: cfg, stderr: &tail{}, done: make(chan struct{})}
	e.renewKey = [2]bool{cfg.privateKey == "", cfg.publicKey == ""}
	private, public := testKeys()
	e.privateKey, e.publicKey = orElse(cfg.privateKey, private), orElse(cfg.publicKey, public)
	if cfg.rateRequests < 1 || cfg.rateWindow < time.Millisecond {
		t.Fatalf("roomchattest: WithRateLimit needs at least 1 request per a window of at least 1 ms")
	}
	args := []string{
		"--host", "127.0.0.1", "--port", "0",
		"--private-key", e.privateKey, "--public-key", e.publicKey,
		"--rate-limit", fmt.Sprintf("%d/%dms", cfg.rateRequests, cfg.rateWindow.Milliseconds()),
		"--seed-users", strconv.Itoa(cfg.seedUsers),
	}
	if cfg.rateHeaders {
		args = append(args, "--rate-limit-headers")
	}
	if cfg.tls {
		args = append(args, "--tls")
	}
	if cfg.journalCapacity != nil {
		args = append(args, "--journal-capacity", strconv.Itoa(*cfg.journalCapacity))
	}
	if cfg.gzipMinBytes != nil {
		args = append(args, "--gzip-min-bytes", strconv.Itoa(*cfg.gzipMinBytes))
	}
	args = append(args, cfg.extraArgs...)
	e.cmd = exec.Command(binary, args...)
	e.cmd.Stderr = e.stderr
	var err error
	if e.stdin, err = e.cmd.StdinPipe(); err != nil {
		t.Fatalf("roomchattest: %v", err)
	}
	stdout, err := e.cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("roomchattest: %v", err)
	}
	if err := e.cmd.Start(); err != nil {
		t.Fatalf("roomchattest: starting %s: %v", binary, err)
	}
	go func() {
		// The process's end, for Stop and for an admin request's error.
		_ = e.cmd.Wait()
		close(e.done)
	}()
	// From here on it is stopped whatever happens (its stdin closing stops it
	// too, and it stops when this process dies).
	t.Cleanup(e.stop)
	ready, err := e.readReady(stdout, cfg.startupTimeout)
	if err != nil {
		t.Fatalf("roomchattest: %v", err)
	}
	e.baseURL, e.chatURL, e.adminURL = ready.BaseURL, ready.ChatURL, ready.AdminURL
	transport := &http.Transport{Proxy: nil, DisableKeepAlives: true}
	if ready.CAFile != nil {
		e.caFile = *ready.CAFile
		if e.caPEM, err = os.ReadFile(e.caFile); err != nil {
			t.Fatalf("roomchattest: reading the emulator's CA: %v", err)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(e.caPEM)
		transport.TLSClientConfig = &tls.Config{RootCAs: pool}
	}
	e.admin = &http.Client{Transport: transport, Timeout: 30 * time.Second}
	return e
}

type readyLine struct {
	BaseURL  string  `json:"base_url"`
	ChatURL  string  `json:"chat_url"`
	AdminURL string  `json:"admin_url"`
	CAFile   *string `json:"ca_file"`
}

func (e *Emulator) readReady(stdout io.Reader, timeout time.Duration) (*readyLine, error) {
	type result struct {
		line []byte
		err  error
	}
	got := make(chan result, 1)
	go func() {
		line, err := bufio.NewReader(stdout).ReadBytes('\n')
		got <- result{line, err}
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case r := <-got:
		if r.err != nil {
			<-e.done
			return nil, fmt.Errorf("the emulator exited (%v) before it was ready%s", e.cmd.ProcessState, e.why())
		}
		var ready readyLine
		if err := json.Unmarshal(r.line, &ready); err != nil {
			return nil, fmt.Errorf("the emulator's ready line is not JSON: %v", err)
		}
		return &ready, nil
	case <-timer.C:
		e.stop() // ends the reader too: stdout closes with the process
		return nil, fmt.Errorf("the emulator printed no ready line within %v%s", timeout, e.why())
	}
}

func (e *Emulator) why() string {
	if text := strings.TrimSpace(e.stderr.String()); text != "" {
		return ": " + text
	}
	return ""
}

// stop stops the emulator: the end of its stdin (a clean stop, which removes
// its CA file), then SIGTERM, then SIGKILL.
func (e *Emulator) stop() {
	_ = e.stdin.Close()
	for _, escalate := range []syscall.Signal{0, syscall.SIGTERM, syscall.SIGKILL} {
		if escalate != 0 {
			_ = e.cmd.Process.Signal(escalate)
		}
		select {
		case <-e.done:
			if e.caFile != "" && e.cfg.tls {
				_ = os.Remove(e.caFile) // gone already after a clean stop
			}
			return
		case <-time.After(5 * time.Second):
		}
	}
}

// BaseURL is the REST base URL, e.g. http://127.0.0.1:41234 (https:// with WithTLS).
func (e *Emulator) BaseURL() string { return e.baseURL }

// ChatURL is where sign-in pages are served ({BaseURL}/chat).
func (e *Emulator) ChatURL() string { return e.chatURL }

// AdminURL is the admin API's base URL ({BaseURL}/_emulator).
func (e *Emulator) AdminURL() string { return e.adminURL }

// PrivateKey is the account's private key now (Reset renews a made-up one).
func (e *Emulator) PrivateKey() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.privateKey
}

// PublicKey is the account's public key now (Reset renews a made-up one).
func (e *Emulator) PublicKey() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.publicKey
}

// CAPEM is the PEM of the CA that signed the emulator's certificate
// (WithTLS), nil over plain HTTP.
func (e *Emulator) CAPEM() []byte { return e.caPEM }

// Client is a roomchat client of this emulator, closed when the test ends:
// its URLs and keys (and CA, with WithTLS), no client-side throttling (a
// budget of 1,000,000 requests per second: the emulator's rate limit answers
// 429 as the service would). The options given apply after these.
func (e *Emulator) Client(t testing.TB, opts ...roomchat.Option) *roomchat.Client {
	t.Helper()
	base := []roomchat.Option{
		roomchat.WithBaseURL(e.baseURL),
		roomchat.WithChatURL(e.chatURL),
		roomchat.WithPublicKey(e.PublicKey()),
		roomchat.WithRateLimit(1_000_000, time.Second),
	}
	if e.caPEM != nil {
		base = append(base, roomchat.WithCAPEM(e.caPEM))
	}
	client, err := roomchat.NewClient(e.PrivateKey(), append(base, opts...)...)
	if err != nil {
		t.Fatalf("roomchattest: a client of the emulator: %v", err)
	}
	t.Cleanup(func() { _ = client.Close() })
	return client
}

// AdminRequest sends a request to the admin API (path under /_emulator, e.g.
// "/rooms"; body nil or a value sent as JSON) and decodes its JSON answer
// into out (nil: dropped). It fails the test when the emulator refuses it.
func (e *Emulator) AdminRequest(method, path string, body, out any) {
	e.t.Helper()
	if err := e.adminRequest(method, path, body, out); err != nil {
		e.t.Fatalf("roomchattest: %v", err)
	}
}

func (e *Emulator) adminRequest(method, path string, body, out any) error {
	var reader io.Reader
	if body != nil {
		text, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("%s /_emulator%s: %v", method, path, err)
		}
		reader = bytes.NewReader(text)
	}
	request, err := http.NewRequest(method, e.adminURL+path, reader)
	if err != nil {
		return err
	}
	if body != nil {
		request.Header.Set("Content-Type", "application/json")
	}
	answer, err := e.admin.Do(request)
	if err != nil {
		select {
		case <-e.done:
			return fmt.Errorf("the emulator is not running (%v)%s", e.cmd.ProcessState, e.why())
		default:
		}
		return fmt.Errorf("%s /_emulator%s: %v", method, path, err)
	}
	defer answer.Body.Close()
	text, err := io.ReadAll(answer.Body)
	if err != nil {
		return fmt.Errorf("%s /_emulator%s: %v", method, path, err)
	}
	if answer.StatusCode < 200 || answer.StatusCode > 299 {
		detail := string(text)
		var shaped struct{ Message string }
		if json.Unmarshal(text, &shaped) == nil && shaped.Message != "" {
			detail = shaped.Message
		}
		return fmt.Errorf("%s /_emulator%s: %d %s", method, path, answer.StatusCode, detail)
	}
	if out != nil && len(text) > 0 {
		if err := json.Unmarshal(text, out); err != nil {
			return fmt.Errorf("%s /_emulator%s: the answer: %v", method, path, err)
		}
	}
	return nil
}

// Reset puts the emulator back as it started: users (the WithSeedUsers ones
// made again), rooms, conversations, faults, the journal, plan gates and the
// rate-limit counters cleared, the rate limit as at start, and new keys unless
// WithKeys gave them (a client's rate budget is per key and process-wide: a new
// key keeps one test's holds out of the next). Make clients after it.
func (e *Emulator) Reset() {
	e.t.Helper()
	e.AdminRequest("POST", "/reset", nil, nil)
	private, public := testKeys()
	e.mu.Lock()
	if e.renewKey[0] {
		e.privateKey = private
	}
	if e.renewKey[1] {
		e.publicKey = public
	}
	change := map[string]any{
		"private_key": e.privateKey,
		"public_key":  e.publicKey,
		"rate_limit": map[string]any{
			"requests":  e.cfg.rateRequests,
			"window_ms": e.cfg.rateWindow.Milliseconds(),
		},
		"rate_limit_headers": e.cfg.rateHeaders,
	}
	e.mu.Unlock()
	e.AdminRequest("PUT", "/config", change, nil)
	if e.cfg.seedUsers > 0 {
		e.SeedUsers(e.cfg.seedUsers)
	}
}

// SeedUsers adds n users named seed-user-<k>; it returns the number of active users.
func (e *Emulator) SeedUsers(n int) int {
	e.t.Helper()
	var out struct{ Total int }
	e.AdminRequest("POST", "/users/seed", map[string]any{"count": n}, &out)
	return out.Total
}

// SetRateLimit sets the service's rate limit until the next Reset.
func (e *Emulator) SetRateLimit(requests int, window time.Duration) {
	e.t.Helper()
	e.AdminRequest("PUT", "/config", map[string]any{
		"rate_limit": map[string]any{"requests": requests, "window_ms": window.Milliseconds()},
	}, nil)
}

// CreateRoom creates a room as the admin API does (fields by their wire
// names: "name", "roomId", …; a made-up roomId when absent) and returns it.
func (e *Emulator) CreateRoom(fields map[string]any) map[string]any {
	e.t.Helper()
	spec := map[string]any{"name": "General"}
	for k, v := range fields {
		spec[k] = v
	}
	var room map[string]any
	e.AdminRequest("POST", "/rooms", spec, &room)
	return room
}

// AddChannel adds a channel to a room and returns it (its "_id" included).
func (e *Emulator) AddChannel(roomID, channelName string) map[string]any {
	e.t.Helper()
	var channel map[string]any
	e.AdminRequest("POST", "/channels", map[string]any{"roomId": roomID, "channelName": channelName}, &channel)
	return channel
}

// SeedMessages adds count messages ("message <n>") to a room, or to its
// channel when channelID is not empty; it returns how many it holds now.
func (e *Emulator) SeedMessages(roomID, channelID string, count int) int {
	e.t.Helper()
	spec := map[string]any{"roomId": roomID, "count": count}
	if channelID != "" {
		spec["channelId"] = channelID
	}
	var out struct{ Total int }
	e.AdminRequest("POST", "/messages", spec, &out)
	return out.Total
}

// AddMember makes the user with that uniqueUserIdentifier a member of the
// room with roleName (user, guest, admin or moderator); it returns the record.
func (e *Emulator) AddMember(roomID, uniqueUserIdentifier, roleName string) map[string]any {
	e.t.Helper()
	var member map[string]any
	e.AdminRequest("POST", "/members", map[string]any{"roomId": roomID, "uniqueUserIdentifier": uniqueUserIdentifier, "roleName": roleName}, &member)
	return member
}

// CreateBot creates a bot (fields by their wire names; "name" and
// "webhookURL" default to helper and https://hooks.example/bot) and returns
// it, its "_id" included.
func (e *Emulator) CreateBot(fields map[string]any) map[string]any {
	e.t.Helper()
	spec := map[string]any{"name": "helper", "webhookURL": "https://hooks.example/bot"}
	for k, v := range fields {
		spec[k] = v
	}
	var bot map[string]any
	e.AdminRequest("POST", "/bots", spec, &bot)
	return bot
}

// Users is every user the emulator holds, deactivated ones too ("active":
// false), in creation order, as the admin API gives them.
func (e *Emulator) Users() []map[string]any {
	e.t.Helper()
	var out struct{ Users []map[string]any }
	e.AdminRequest("GET", "/users", nil, &out)
	return out.Users
}

// Gate takes an endpoint out of the account's plan until the next Reset: it
// answers 400 "not available on your current plan" (KindPlanUpgradeRequired).
// method "" is any method; a path ending in * is a prefix.
func (e *Emulator) Gate(method, path string) {
	e.t.Helper()
	if method == "" {
		method = "*"
	}
	e.AdminRequest("POST", "/gate", map[string]any{"method": method, "path": path}, nil)
}

// Fault is a rule of the emulator's fault injection: the next Times requests
// (default 1) with Method ("" for any) to Path (exact, or a prefix when it
// ends in *; "" or "*" is every request) get Action instead of the usual
// handling. Rules are checked in the order they were added.
type Fault struct {
	Method string
	Path   string
	Times  int
	Action FaultAction
}

// FaultAction is what a faulted request gets (Respond, Delay, Hold, …).
type FaultAction struct{ spec map[string]any }

// Respond answers status with body (text; content type application/json)
// and headers, without the request taking effect. A 429 without Retry-After
// makes a roomchat client hold its key for a window of its budget: give one.
func Respond(status int, body string, headers map[string]string) FaultAction {
	if headers == nil {
		headers = map[string]string{}
	}
	return FaultAction{map[string]any{"kind": "respond", "status": status, "body": body, "headers": headers}}
}

// Delay lets the request take effect, then holds its answer back for d.
func Delay(d time.Duration) FaultAction {
	return FaultAction{map[string]any{"kind": "delay", "ms": d.Milliseconds()}}
}

// Hold lets the request take effect, then holds its answer back until
// ReleaseHeld, ClearFaults or Reset (Held counts the answers held).
func Hold() FaultAction { return FaultAction{map[string]any{"kind": "hold"}} }

// CloseConnection closes the connection before any byte of an answer (no effect).
func CloseConnection() FaultAction { return FaultAction{map[string]any{"kind": "close"}} }

// TruncatedBody answers 200 with a body cut mid-JSON, then closes.
func TruncatedBody() FaultAction { return FaultAction{map[string]any{"kind": "truncate"}} }

// TruncatedAfterEffect lets the request take effect, then sends half its answer and closes.
func TruncatedAfterEffect() FaultAction {
	return FaultAction{map[string]any{"kind": "truncate_after_effect"}}
}

// NotJSON answers 200 with an HTML body labelled JSON.
func NotJSON() FaultAction { return FaultAction{map[string]any{"kind": "not_json"}} }

// WrongContentType gives the usual answer (it takes effect) labelled text/html.
func WrongContentType() FaultAction {
	return FaultAction{map[string]any{"kind": "wrong_content_type"}}
}

// LargeBody answers 200 with a valid JSON body of n bytes.
func LargeBody(n int) FaultAction {
	return FaultAction{map[string]any{"kind": "large_body", "bytes": n}}
}

// Fault adds a fault rule and returns its id.
func (e *Emulator) Fault(f Fault) int {
	e.t.Helper()
	if f.Action.spec == nil {
		e.t.Fatal("roomchattest: a Fault needs an Action (Respond, Delay, Hold, …)")
	}
	rule := map[string]any{"path": orElse(f.Path, "*"), "times": max(f.Times, 1), "action": f.Action.spec}
	if f.Method != "" {
		rule["method"] = f.Method
	}
	var out struct{ ID int }
	e.AdminRequest("POST", "/faults", rule, &out)
	return out.ID
}

// FailNext answers the next request to path ("*": any) with status and the
// service's usual body for it ({"message": ...}), and Retry-After when
// retryAfter is above 0 (whole seconds, rounded up), without it taking effect.
func (e *Emulator) FailNext(path string, status int, retryAfter time.Duration) {
	e.t.Helper()
	message := http.StatusText(status)
	if status == 429 {
		message = "Too many requests"
	}
	body, _ := json.Marshal(map[string]string{"message": message})
	headers := map[string]string{}
	if retryAfter > 0 {
		headers["Retry-After"] = strconv.FormatInt(int64((retryAfter+time.Second-1)/time.Second), 10)
	}
	e.Fault(Fault{Path: path, Action: Respond(status, string(body), headers)})
}

// ClearFaults removes every fault rule and lets every held answer go.
func (e *Emulator) ClearFaults() {
	e.t.Helper()
	e.AdminRequest("DELETE", "/faults", nil, nil)
}

// Held is how many answers a Hold fault holds back now.
func (e *Emulator) Held() int {
	e.t.Helper()
	var out struct{ Held int }
	e.AdminRequest("GET", "/held", nil, &out)
	return out.Held
}

// ReleaseHeld lets every held answer go; it returns how many were held.
func (e *Emulator) ReleaseHeld() int {
	e.t.Helper()
	var out struct{ Released int }
	e.AdminRequest("DELETE", "/held", nil, &out)
	return out.Released
}

// WaitHeld waits until n answers are held (a request stopped at a Hold
// fault), polling the admin API, and fails the test after timeout.
func (e *Emulator) WaitHeld(n int, timeout time.Duration) {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	for e.Held() < n {
		if time.Now().After(deadline) {
			e.t.Fatalf("roomchattest: %d answer(s) held after %v, not %d", e.Held(), timeout, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// JournalEntry is one request the emulator received (REST API and sign-in
// pages; never the admin API). The private key (the query's auth) and the
// public key (publicKey) show as REDACTED, and the private key nowhere else;
// so do the values of credential headers (Authorization, Cookie, any name
// holding token, secret, auth, …), as the emulator's README lists them.
type JournalEntry struct {
	// Seq counts arrivals from 1 (a Reset starts it again).
	Seq uint64
	// Method and Path are the request's; Path as sent (percent-encoded).
	Method, Path string
	// Query is the raw query string, Params its decoded pairs.
	Query  string
	Params url.Values
	// Body is the request's body (its first 64 KiB).
	Body string
	// Status is what was answered, 0 when the connection was closed without an answer.
	Status int
	// ReceivedAt is when it arrived.
	ReceivedAt time.Time
	// UserAgent is its User-Agent, "" without one.
	UserAgent string
	// Header holds its headers (Get is case-insensitive).
	Header http.Header
	// Truncated says the emulator kept only the start of a long field.
	Truncated bool
}

// JSON decodes the body into v.
func (j JournalEntry) JSON(v any) error { return json.Unmarshal([]byte(j.Body), v) }

// Journal is the requests received since the start or the last Reset or
// ClearJournal, oldest first (at most the latest 10,000 by default).
func (e *Emulator) Journal() []JournalEntry {
	e.t.Helper()
	var out struct {
		Entries []struct {
			Seq          uint64      `json:"seq"`
			Method       string      `json:"method"`
			Path         string      `json:"path"`
			Query        string      `json:"query"`
			Body         string      `json:"body"`
			ReceivedAtMs float64     `json:"received_at_ms"`
			Status       int         `json:"status"`
			UserAgent    *string     `json:"user_agent"`
			Headers      [][2]string `json:"headers"`
			Truncated    bool        `json:"truncated"`
		} `json:"entries"`
	}
	e.AdminRequest("GET", "/journal", nil, &out)
	scrub := e.scrubber()
	entries := make([]JournalEntry, 0, len(out.Entries))
	for _, raw := range out.Entries {
		entry := JournalEntry{
			Seq:        raw.Seq,
			Method:     raw.Method,
			Path:       scrub(raw.Path),
			Query:      scrub(raw.Query),
			Body:       scrub(raw.Body),
			Status:     raw.Status,
			ReceivedAt: time.UnixMicro(int64(raw.ReceivedAtMs * 1000)),
			Header:     http.Header{},
			Truncated:  raw.Truncated,
			Params:     url.Values{},
		}
		if raw.UserAgent != nil {
			entry.UserAgent = scrub(*raw.UserAgent)
		}
		// Decoded, a query may spell the key in a form not scrubbed above.
		if params, err := url.ParseQuery(entry.Query); err == nil {
			for name, values := range params {
				for _, v := range values {
					entry.Params.Add(scrub(name), scrub(v))
				}
			}
		}
		for _, h := range raw.Headers {
			entry.Header.Add(h[0], scrub(h[1]))
		}
		entries = append(entries, entry)
	}
	return entries
}

// scrubber replaces the private key, as sent and percent-encoded (either hex
// case), by REDACTED: the emulator already shows auth and publicKey so; this
// takes it out of any other field it might have been put in.
func (e *Emulator) scrubber() func(string) string {
	key := e.PrivateKey()
	if key == "" {
		return func(s string) string { return s }
	}
	encoded := url.QueryEscape(key)
	encoded = strings.ReplaceAll(encoded, "+", "%20")
	lower := percentLower(encoded)
	forms := []string{key, encoded, lower, url.QueryEscape(key)}
	return func(s string) string {
		for _, form := range forms {
			s = strings.ReplaceAll(s, form, "REDACTED")
		}
		return s
	}
}

func percentLower(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1] = lowerHex(b[i+1])
			b[i+2] = lowerHex(b[i+2])
		}
	}
	return string(b)
}

func lowerHex(c byte) byte {
	if c >= 'A' && c <= 'F' {
		return c + 'a' - 'A'
	}
	return c
}

// ClearJournal empties the journal (Seq goes on).
func (e *Emulator) ClearJournal() {
	e.t.Helper()
	e.AdminRequest("DELETE", "/journal", nil, nil)
}

// testKeys is a private and a public key of their own, unlike any other emulator's.
func testKeys() (string, string) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	token := hex.EncodeToString(b[:])
	return "sk_test_emulator_" + token, "pk_test_emulator_" + token
}

func orElse(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

// tail keeps the last 8 KiB written to it (the emulator's stderr).
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - 8192; over > 0 {
		t.buf = append([]byte(nil), t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
