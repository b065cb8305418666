package service_test

import (
	"encoding/json"
	"os"
	"os/exec"
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

// TestPythonNamesTheSocketAsLocatorDoes holds clients/python's
// socket_path to the owner's own rule (api/README.md, "Finding the
// owner") for the spellings of one broker a person may write: 127.0.0.1
// and localhost, a trailing slash, the default port written or not. Each
// spelling names the socket locator names for it; the client reaches an
// owner of another spelling by its hello (the Python tests' FindingTest).
func TestPythonNamesTheSocketAsLocatorDoes(t *testing.T) {
	t.Parallel()
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("python3 is not installed (.ci/run installs Debian's)")
		}
		t.Skip("python3 is not installed")
	}
	spellings := []string{"http://127.0.0.1:8790", "http://127.0.0.1:8790/", "http://localhost:8790", "http://localhost:8790//",
		"http://127.0.0.1", "http://127.0.0.1:80", "https://broker.example", "https://broker.example:443/"}
	arg, err := json.Marshal(spellings)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	const script = `import json, sys
sys.path.insert(0, sys.argv[1])
from locator_client import socket_path
print(json.dumps([socket_path(sys.argv[2], "LV100001", u) for u in json.loads(sys.argv[3])]))`
	cmd := exec.CommandContext(t.Context(), py, "-c", script, "../../clients/python", dir, string(arg))
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	var named []string
	if err := json.Unmarshal(out, &named); err != nil || len(named) != len(spellings) {
		t.Fatalf("python3 answered %s (%v)", out, err)
	}
	for i, u := range spellings {
		if _, sock, err := service.Paths(dir, "LV100001", u); err != nil || named[i] != sock {
			t.Errorf("%s: locator names %s (%v), clients/python %s", u, sock, err, named[i])
		}
	}
}
