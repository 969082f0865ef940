package roomchat_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// README: "With CGO_ENABLED=0 the build fails with one message saying that
// roomchat needs cgo and a C toolchain." (It failed with "build constraints
// exclude all Go files in lib/linux-amd64", which says neither.)
func TestReviewBuildWithoutCgoSaysWhy(t *testing.T) {
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		t.Skipf("no go tool at %s", goTool)
	}
	cmd := exec.Command(goTool, "build", "-o", os.DevNull, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatal("a build without cgo succeeded")
	}
	text := string(out)
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if !strings.Contains(text, "roomchat_needs_cgo__build_with_CGO_ENABLED_1_and_a_C_compiler_on_PATH_such_as_gcc_or_clang") || len(lines) > 2 {
		t.Fatalf("a build without cgo should fail with one message naming cgo; got:\n%s", text)
	}
}
