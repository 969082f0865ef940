package roomchat_test

import (
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind (goleak), and, in
// the repository, runs the emulator the release build made when
// ROOMCHAT_EMULATOR names none.
func TestMain(m *testing.M) {
	if os.Getenv("ROOMCHAT_EMULATOR") == "" {
		built, _ := filepath.Abs(filepath.Join("..", "..", "target", "release", "roomchat-emulator"))
		if _, err := os.Stat(built); err == nil {
			os.Setenv("ROOMCHAT_EMULATOR", built)
		}
	}
	goleak.VerifyTestMain(m)
}
