package answerlink_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/internal/answerlink"
)

const secret = "0123456789abcdef0123456789abcdef-test-secret"

var link = answerlink.Link{Account: "LV100001", Workflow: "wf-0001", Offer: "8a7f-quote", Price: decimal.RequireFromString("0.015"),
	Symbol: "HTBX", Shares: 200, Answer: answerlink.Approve, Deadline: time.Date(2026, 11, 25, 14, 30, 25, 0, time.UTC)}

func mustKey(t *testing.T, s string) *answerlink.Key {
	t.Helper()
	k, err := answerlink.NewKey(s)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// A token verifies to the link it was signed from until its deadline,
// and not from the deadline on.
func TestSignVerify(t *testing.T) {
	t.Parallel()
	k := mustKey(t, secret)
	tok := k.Sign(link)
	got, err := k.Verify(tok, link.Deadline.Add(-time.Millisecond))
	if err != nil || got.Account != link.Account || got.Workflow != link.Workflow || got.Offer != link.Offer ||
		!got.Price.Equal(link.Price) || got.Symbol != link.Symbol || got.Shares != link.Shares || got.Answer != link.Answer ||
		!got.Deadline.Equal(link.Deadline) {
		t.Fatalf("Verify = %+v, %v; want %+v", got, err, link)
	}
	if _, err := k.Verify(tok, link.Deadline); !errors.Is(err, answerlink.ErrExpired) {
		t.Errorf("at the deadline: %v, want ErrExpired", err)
	}
	if strings.ContainsAny(tok, "/?#%+= ") {
		t.Errorf("token %q holds a character a URL path escapes", tok)
	}
}

// Tampering is any changed character: every position of a token, changed
// to another character of its alphabet, is refused as invalid; so are a
// token cut short, one signed with another secret, and an empty one.
func TestVerifyRefusesEveryChangedCharacter(t *testing.T) {
	t.Parallel()
	k := mustKey(t, secret)
	tok := k.Sign(link)
	now := link.Deadline.Add(-time.Second)
	for i := range len(tok) {
		for _, c := range []byte{'A', 'B', '-', '_', '.'} {
			if tok[i] == c {
				continue
			}
			changed := tok[:i] + string(c) + tok[i+1:]
			if _, err := k.Verify(changed, now); !errors.Is(err, answerlink.ErrInvalid) {
				t.Fatalf("character %d changed to %q: %v, want ErrInvalid", i, c, err)
			}
		}
	}
	other := mustKey(t, strings.Repeat("x", answerlink.MinSecret))
	for name, bad := range map[string]string{
		"cut short":      tok[:len(tok)-1],
		"no signature":   strings.Split(tok, ".")[0],
		"another secret": other.Sign(link),
		"empty":          "",
		"too long":       tok + strings.Repeat("A", 4096),
	} {
		if _, err := k.Verify(bad, now); !errors.Is(err, answerlink.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
}

// A short secret is refused without being quoted.
func TestNewKeyRefusesShortSecret(t *testing.T) {
	t.Parallel()
	_, err := answerlink.NewKey("s3cret-too-short")
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("NewKey(short) = %v, want a refusal that does not quote it", err)
	}
}

// The base address is the dashboard's as a phone reaches it: https, or
// http on loopback only; nothing a link's path or an ntfy button would
// trip on.
func TestParseBase(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		"https://locator.example:8790":         "",
		"https://proxy.example/locator/":       "",
		"http://127.0.0.1:8790":                "",
		"http://locator.example:8790":          "http:// beyond this machine's loopback",
		"ftp://locator.example":                "want https://host",
		"https://me:pw@locator.example":        "no user, query or fragment",
		"https://locator.example/?a=1":         "no user, query or fragment",
		"https://locator.example/a,b":          "no ','",
		"locator.example":                      "want https://host",
		"https://locator.example/#fragment=ok": "no user, query or fragment",
	} {
		_, err := answerlink.ParseBase(raw)
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v, want it taken", raw, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: %v, want %q", raw, err, want)
		}
	}
}

// A config whose secretEnv holds a value rather than a name is refused
// without quoting it; an unset or short secret names the variable.
func TestOpenRefusesBadSecrets(t *testing.T) {
	t.Parallel()
	env := map[string]string{"SHORT": "s3cret"}
	get := func(k string) string { return env[k] }
	for _, c := range []struct {
		cfg  answerlink.Config
		want string
	}{
		{answerlink.Config{BaseURL: "https://l.example", SecretEnv: "s3cret value"}, "secretEnv must name an environment variable"},
		{answerlink.Config{BaseURL: "https://l.example", SecretEnv: "UNSET"}, "UNSET is not set"},
		{answerlink.Config{BaseURL: "https://l.example", SecretEnv: "SHORT"}, "SHORT: the answer link secret is 6 bytes"},
	} {
		_, err := answerlink.Open(&c.cfg, get, nil, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%+v: %v, want %q without the secret", c.cfg, err, c.want)
		}
	}
	if l, err := answerlink.Open(nil, get, nil, nil); l != nil || err != nil || l.Handler(nil) != nil || l.Notifier("LV100001", nil) != nil {
		t.Errorf("Open(nil) = %v, %v: want no links and nothing to mount", l, err)
	}
}
