package roomchat

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// otelEmulator is the emulator of one telemetry test: a process of the
// repository's build (target/release, else target/debug), stopped when the
// test ends (its stdin closed).
type otelEmulator struct {
	BaseURL    string `json:"base_url"`
	AdminURL   string `json:"admin_url"`
	PrivateKey string `json:"private_key"`
	PublicKey  string `json:"public_key"`
}

func startOtelEmulator(t *testing.T, args ...string) *otelEmulator {
	t.Helper()
	bin := os.Getenv("ROOMCHAT_EMULATOR")
	if bin == "" {
		for _, dir := range []string{"release", "debug"} {
			candidate := filepath.Join("..", "..", "target", dir, "roomchat-emulator")
			if _, err := os.Stat(candidate); err == nil {
				bin = candidate
				break
			}
		}
	}
	if bin == "" {
		t.Fatal("no emulator: build it (cargo build --release -p roomchat-emulator) or set ROOMCHAT_EMULATOR")
	}
	cmd := exec.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	if err != nil {
		t.Fatalf("the emulator's ready line: %v", err)
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	emu := &otelEmulator{}
	if err := json.Unmarshal(line, emu); err != nil {
		t.Fatalf("the emulator's ready line %q: %v", line, err)
	}
	return emu
}

// admin calls the emulator's admin API (path under /_emulator).
func (e *otelEmulator) admin(t *testing.T, method, path string, body, out any) {
	t.Helper()
	var reader io.Reader
	if body != nil {
		text, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		reader = bytes.NewReader(text)
	}
	req, err := http.NewRequest(method, e.AdminURL+path, reader)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	text, _ := io.ReadAll(res.Body)
	if res.StatusCode/100 != 2 {
		t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, text)
	}
	if out != nil {
		if err := json.Unmarshal(text, out); err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
	}
}

// fault adds a fault rule: the next `times` requests of method to path get action.
func (e *otelEmulator) fault(t *testing.T, method, path string, times int, action map[string]any) {
	t.Helper()
	e.admin(t, http.MethodPost, "/faults", map[string]any{"method": method, "path": path, "times": times, "action": action}, nil)
}

type journalEntry struct {
	Method  string      `json:"method"`
	Path    string      `json:"path"`
	Status  int         `json:"status"`
	Headers [][2]string `json:"headers"`
}

func (j journalEntry) header(name string) (string, bool) {
	for _, h := range j.Headers {
		if strings.EqualFold(h[0], name) {
			return h[1], true
		}
	}
	return "", false
}

func (e *otelEmulator) journal(t *testing.T) []journalEntry {
	t.Helper()
	var out struct {
		Entries []journalEntry `json:"entries"`
	}
	e.admin(t, http.MethodGet, "/journal", nil, &out)
	return out.Entries
}
