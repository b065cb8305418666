package answerlink

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/locatorhq/locator/internal/browsertest"
)

// A link's page opened on a phone (390 px, in headless Chromium
// under the page's own CSP) has its style applied and a button a thumb
// presses: nearly the page's width and at least 48 px tall, with type
// larger than the browser's default.
func TestLinkPageOnAPhone(t *testing.T) {
	t.Parallel()
	ctx := browsertest.New(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		render(w, http.StatusOK, page{Title: "Decline this locate offer?", Button: "Decline", Decline: true, Lines: []string{
			"Locate 200 HTBX at 0.0150 a share (3.00 in all) on account LV100001, workflow 0b6f6f3e-5c2a-4a57-9d51-0d3c1f1b9a7e.",
			"Answer by 09:30:25 ET. Opening this page answered nothing; the button answers, once.",
		}})
	}))
	t.Cleanup(srv.Close)
	type box struct{ Width, Height, Font, Page float64 }
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844), chromedp.Navigate(srv.URL),
		chromedp.Poll[chromedp.Void](`document.querySelector("button") !== null`, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatal(err)
	}
	b, err := chromedp.Run(ctx, chromedp.Evaluate[box](`(() => { const b = document.querySelector("button"), r = b.getBoundingClientRect();
		return {Width: r.width, Height: r.height, Font: parseFloat(getComputedStyle(b).fontSize), Page: document.documentElement.clientWidth}; })()`))
	if err != nil {
		t.Fatal(err)
	}
	bg, err := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector("button")).backgroundColor`))
	if err != nil {
		t.Fatal(err)
	}
	if b.Width < 0.85*b.Page || b.Height < 48 || b.Font <= 16 {
		t.Errorf("button %.0f×%.0f px, type %.0f px on a %.0f px page; want nearly the page's width, 48 px tall, type over 16 px", b.Width, b.Height, b.Font, b.Page)
	}
	if bg != "rgb(180, 35, 24)" {
		t.Errorf("decline button background %s, want the decline red (style blocked?)", bg)
	}
}
