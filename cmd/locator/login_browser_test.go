package main

import (
	"context"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/locatorhq/locator/brokerclient"
)

// browser starts a headless Chromium for the test. Without chromium it
// skips, except under CI (CI=true), where the browser tests must run.
func browser(t *testing.T) context.Context {
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
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	// Not t.Context(): that ends before the cleanups, and the screenshot of
	// a failure is taken in one.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
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
			screenshot(t, bctx)
		}
	})
	return bctx
}

// screenshot writes the page as a PNG to $LOCATOR_ARTIFACT_DIR (or the
// temp dir) so a failure can be seen, not guessed.
func screenshot(t *testing.T, ctx context.Context) {
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

// The whole login in a real browser: the CLI prints the authorize address,
// Chromium opens it, fills username, password and code, submits, and the
// hosted page redirects to the CLI's loopback callback. Then the flow's
// checks (tokens encrypted, commands over Bearer, logout) and a replay of
// the code the browser carried, which the token endpoint refuses.
func TestBrowserPartnerLogin(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	b := setupPartnerCLI(t)
	var callback string
	b.checkPartnerFlow(t, func(authURL string) {
		err := chromedp.Do(ctx,
			chromedp.Navigate(authURL),
			chromedp.WaitVisible(chromedp.ID("username")),
			chromedp.SendKeys(chromedp.ID("username"), "alice"),
			chromedp.SendKeys(chromedp.ID("password"), "alice-pass"),
			chromedp.SendKeys(chromedp.ID("code"), "123456"),
			chromedp.Click(chromedp.ID("submit")),
			chromedp.WaitVisible(chromedp.ID("result")),
		)
		if err != nil {
			t.Fatalf("browser: %v", err)
		}
		result, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("result")))
		if err != nil {
			t.Fatalf("browser: %v", err)
		}
		if callback, err = chromedp.Run(ctx, chromedp.Location()); err != nil {
			t.Fatalf("browser: %v", err)
		}
		if !strings.Contains(result, "Signed in") {
			t.Errorf("callback page says %q", result)
		}
	})
	cb, err := url.Parse(callback)
	if err != nil || cb.Query().Get("code") == "" {
		t.Fatalf("browser ended at %q", callback)
	}
	replay := b.sim.PartnerClient(t, b.sim.Partner.LiveClientID)
	_, err = replay.Partner.Exchange(t.Context(), cb.Query().Get("code"))
	var te *brokerclient.TokenError
	if !errors.As(err, &te) || te.StatusCode != 400 {
		t.Errorf("replayed code: %v", err)
	}
}

// A wrong client id shows the invalid-client-id message on the page, and
// no form.
func TestBrowserWrongClientID(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	b := setupPartnerCLI(t)
	login := b.startLogin(t, map[string]string{"LOCATOR_CLIENT_ID": "not-a-client"})
	if err := chromedp.Do(ctx, chromedp.Navigate(login.authURL), chromedp.WaitVisible(chromedp.ID("error"))); err != nil {
		t.Fatalf("browser: %v", err)
	}
	msg, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("error")))
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	forms, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.forms.length`))
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	if !strings.Contains(msg, "Invalid client_id") || forms != 0 {
		t.Errorf("page says %q with %d forms", msg, forms)
	}
	login.cancel()
	if code, _, _ := login.wait(t); code == 0 {
		t.Error("login succeeded without a sign-in")
	}
}
