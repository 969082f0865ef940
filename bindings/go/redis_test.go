package roomchat_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/roomchat/roomchat-go"
	"github.com/roomchat/roomchat-go/roomchattest"
)

// startRedis runs a redis-server of the test's own on a free port (no
// persistence), stopped when the test ends; its redis:// URL.
func startRedis(t *testing.T) string {
	t.Helper()
	binary := os.Getenv("REDIS_SERVER")
	if binary == "" {
		binary = "redis-server"
	}
	if _, err := exec.LookPath(binary); err != nil {
		t.Fatalf("redis-server is needed (apt-get install -y redis-server, or REDIS_SERVER=path): %v", err)
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := listener.Addr().(*net.TCPAddr).Port
	listener.Close()
	cmd := exec.Command(binary, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--loglevel", "warning")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	address := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := net.Dial("tcp", address)
		if err == nil {
			conn.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server did not listen on %s", address)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return "redis://" + address + "/0"
}

// redisKeys is the names of the keys Redis holds (KEYS *), by RESP.
func redisKeys(t *testing.T, redisURL string) []string {
	t.Helper()
	address := strings.TrimSuffix(strings.TrimPrefix(redisURL, "redis://"), "/0")
	conn, err := net.Dial("tcp", address)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprint(conn, "*2\r\n$4\r\nKEYS\r\n$1\r\n*\r\n")
	r := bufio.NewReader(conn)
	line, _ := r.ReadString('\n')
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "*")))
	if err != nil {
		t.Fatalf("KEYS answered %q", line)
	}
	var keys []string
	for i := 0; i < n; i++ {
		_, _ = r.ReadString('\n') // $len
		key, _ := r.ReadString('\n')
		keys = append(keys, strings.TrimSpace(key))
	}
	return keys
}

// Two clients (as two processes would) share one budget through Redis: 5
// requests a minute between them, the sixth refused before it is sent.
func TestRedisBudgetShared(t *testing.T) {
	redisURL := startRedis(t)
	emu := roomchattest.Start(t)
	budget := []roomchat.Option{
		roomchat.WithRedisBudget(redisURL),
		roomchat.WithRedisPolicy(roomchat.RedisFailClosed, 0),
		roomchat.WithRedisKeyPrefix("gotest"),
		roomchat.WithRateLimit(5, time.Minute),
		roomchat.WithRateLimitFailFast(),
	}
	one, two := emu.Client(t, budget...), emu.Client(t, budget...)
	ctx := context.Background()
	for i, client := range []*roomchat.Client{one, two, one, two, two} {
		if err := roomchat.Invoke(client, ctx, "list_chat_rooms", nil, nil); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	for _, client := range []*roomchat.Client{one, two} {
		err := roomchat.Invoke(client, ctx, "list_chat_rooms", nil, nil)
		if e := asError(t, err, roomchat.KindRateLimited); e.Status != 0 {
			t.Fatalf("answered by the service, not the budget: %+v", e)
		}
	}
	if n := len(emu.Journal()); n != 5 {
		t.Fatalf("%d requests sent, want 5", n)
	}
	// The budget is Redis's, not the process's: under another key prefix
	// (another budget in the same Redis) the same key has 5 more.
	other := emu.Client(t, append(budget, roomchat.WithRedisKeyPrefix("gotest-other"))...)
	for i := 0; i < 5; i++ {
		if err := roomchat.Invoke(other, ctx, "list_chat_rooms", nil, nil); err != nil {
			t.Fatalf("another budget's call %d: %v", i, err)
		}
	}
	asError(t, roomchat.Invoke(other, ctx, "list_chat_rooms", nil, nil), roomchat.KindRateLimited)
	keys := redisKeys(t, redisURL)
	if len(keys) == 0 || !strings.HasPrefix(keys[0], "gotest") {
		t.Fatalf("the budget is not in Redis: keys %q", keys)
	}
	for _, key := range keys {
		if strings.Contains(key, emu.PrivateKey()) {
			t.Fatalf("the private key is in a Redis key's name: %q", key)
		}
	}
}
