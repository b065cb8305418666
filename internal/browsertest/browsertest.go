// Package browsertest starts a headless Chromium for tests that drive a
// page in a real browser (chromedp), and keeps a screenshot of the page
// when one fails.
package browsertest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// New starts a headless Chromium for the test and returns its context.
// Without chromium it skips, except under CI (CI=true), where the browser
// tests must run (.ci/run installs Debian's chromium package when it is
// missing). A failed test leaves a screenshot (see Screenshot).
func New(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is not installed; .ci/run installs Debian's chromium package")
		}
		t.Skip("chromium is not installed (apt-get install chromium); CI runs this test")
	}
	// Root needs --no-sandbox; the machine has no internet, so everything
	// that would call out (background networking, component updates, sync,
	// QUIC) is off, and each test gets a fresh profile.
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.Headless,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.WindowSize(1280, 860),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	// Not t.Context(): that ends before the cleanups, and the screenshot of
	// a failure is taken in one.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	bctx, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(cancelBrowser)
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			Screenshot(t, bctx)
		}
	})
	return bctx
}

// Screenshot writes the whole page as a PNG to $LOCATOR_ARTIFACT_DIR (or
// a directory under the temp dir) so a failure can be seen, not guessed.
func Screenshot(t *testing.T, ctx context.Context) {
	dir := os.Getenv("LOCATOR_ARTIFACT_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "locator-browser-artifacts")
	}
	shot, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	png, err := chromedp.Run(shot, chromedp.FullScreenshot(100))
	if err != nil {
		t.Logf("screenshot: %v", err)
		return
	}
	name := filepath.Join(dir, strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())+".png")
	if err := errors.Join(os.MkdirAll(dir, 0o755), os.WriteFile(name, png, 0o644)); err != nil {
		t.Logf("screenshot: %v", err)
		return
	}
	t.Logf("screenshot of the page: %s", name)
}
