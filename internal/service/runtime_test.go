package service_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locatorhq/locator/internal/service"
)

// A runtime folder another user made first (squatting the sockets'
// place) is refused, and the refusal gives its victim a way out they can
// take: they cannot remove another user's folder, so it says to name a
// folder of their own in XDG_RUNTIME_DIR, and that works.
func TestSquattedRuntimeFolderExplained(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("making a folder another user's needs root (CI runs as root)")
	}
	base := t.TempDir()
	squatted := filepath.Join(base, "locator")
	if err := os.Mkdir(squatted, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(squatted, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	env := func(dir string) func(string) string {
		return func(k string) string {
			if k == "XDG_RUNTIME_DIR" {
				return dir
			}
			return ""
		}
	}
	_, err := service.RuntimeDir(env(base))
	if err == nil || !strings.Contains(err.Error(), "uid 65534") || !strings.Contains(err.Error(), "cannot remove it") || !strings.Contains(err.Error(), "XDG_RUNTIME_DIR") {
		t.Fatalf("a squatted runtime folder: %v; want refused with the way out", err)
	}
	own := t.TempDir()
	if dir, err := service.RuntimeDir(env(own)); err != nil || dir != filepath.Join(own, "locator") {
		t.Errorf("with XDG_RUNTIME_DIR a folder of one's own: %q, %v", dir, err)
	}
}
