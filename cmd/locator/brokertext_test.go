package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/locatorhq/locator/internal/console"
)

// A rejection text carrying a line break and U+202E forged a row
// in `status`. A proxy in front of the simulator prefixes every broker
// `text` with "\n" + a forged row + U+202E; the rejected locate's status
// row and JSON record carry the text on one line without the override,
// and no line of the table is the forged one.
func TestStatusBrokerTextCannotForgeARow(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	target, err := url.Parse(b.env["LOCATOR_BASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	const forged = `FORGED  HTBX  5000  filled`
	proxy := httputil.NewSingleHostReverseProxy(target)
	direct := proxy.Director
	proxy.Director = func(r *http.Request) {
		direct(r)
		r.Header.Del("Accept-Encoding") // plain bodies to rewrite
	}
	proxy.ModifyResponse = func(resp *http.Response) error {
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		body = bytes.ReplaceAll(body, []byte(`"text":"`), []byte(`"text":"\n`+forged+`\n\u202E`))
		resp.Body = io.NopCloser(bytes.NewReader(body))
		resp.ContentLength = int64(len(body))
		resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
		return nil
	}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	env := map[string]string{"LOCATOR_BASE_URL": srv.URL}

	if code, out, errOut := b.MustRunMain(t, env, "locate", "RSTR", "100", "--yes"); code != console.ExitBroker {
		t.Fatalf("locate RSTR: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut := b.MustRunMain(t, env, "status")
	if code != console.ExitOK {
		t.Fatalf("status: exit %d\n%s", code, errOut)
	}
	if !strings.Contains(out, "FORGED") {
		t.Fatalf("the broker's text did not reach status, so the test proves nothing:\n%s", out)
	}
	if strings.Contains(out, "\u202e") {
		t.Errorf("the status table carries U+202E:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "FORGED") {
			t.Errorf("a row of its own from broker text: %q\n%s", line, out)
		}
	}
	code, out, errOut = b.MustRunMain(t, env, "status", "-o", "json")
	if code != console.ExitOK {
		t.Fatalf("status -o json: exit %d\n%s", code, errOut)
	}
	if strings.Contains(out, "\u202e") || strings.Contains(out, `\u202e`) || strings.Contains(out, `\n`) {
		t.Errorf("status records carry the line break or the override:\n%s", out)
	}
}
