package notify

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

// A webhook URL is a secret, host included: a dial or DNS error names the
// bare host name even when the URL carries a port, and neither may reach a
// log line.
func TestRedactHostWithPort(t *testing.T) {
	raw := "https://hooks.secret-example.test:8443/T0/B1/s3cret"
	tg, err := newTarget(Webhook{URLEnv: "HOOK", Format: FormatJSON}, raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []error{
		&url.Error{Op: "Post", URL: raw, Err: errors.New("dial tcp: lookup hooks.secret-example.test on 10.0.0.53:53: no such host")},
		&url.Error{Op: "Post", URL: raw, Err: errors.New("tls: failed to verify certificate: x509: certificate is valid for other.test, not hooks.secret-example.test")},
		errors.New("Post " + raw + ": dial tcp hooks.secret-example.test:8443: connect: connection refused"),
	} {
		got := tg.redact(e)
		if strings.Contains(got, "secret-example") || strings.Contains(got, "s3cret") {
			t.Errorf("redact(%v) = %q: the host or URL is left", e, got)
		}
		if !strings.Contains(got, "[HOOK") {
			t.Errorf("redact(%v) = %q: want the variable named instead", e, got)
		}
	}
}
