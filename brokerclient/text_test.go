package brokerclient_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/locatorhq/locator/brokerclient"
)

func TestCleanText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"16 Insufficient shares.", "16 Insufficient shares."},
		{"line one\n\tline two", "line one line two"},
		{"a\r\nb\u2028c\u2029d", "a b c d"},
		// Bidi controls and other format characters disguise
		// text (U+202E turns "exe.txt" into what reads as "txt.exe").
		{"file\u202Etxt.exe", "filetxt.exe"},
		{"\u202Aa\u202Bb\u202Cc\u202Dd\u2066e\u2067f\u2068g\u2069h", "abcdefgh"},
		{"l\u200Er\u200Fa\u061Cz\u200Bw\u200Dj\uFEFFb\u00ADs", "lrazwjbs"},
		{"\x1b[31mred\x1b[0m", "red"},
		{"\x1b[2J\x1b[1;1Hcleared", "cleared"},
		{"\x1b]0;pwned\x07title", "title"},
		{"\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\", "link"},
		{"\x1bPdcs\x1b\\after", "after"},
		{"a\x1b7b\x1b", "ab"},
		{"\u009b31mC1 csi", "C1 csi"},
		{"\u009d0;t\u009ctitle", "title"},
		{"bell\x07 back\x08space\r cr \x00nul\x7f del \u0085nel", "bell backspace  cr nul del nel"},
		{"bad \xff\xfe bytes", "bad \uFFFD bytes"},
		{"ünïcødé €", "ünïcødé €"},
	} {
		if got := brokerclient.CleanText(tc.in); got != tc.want {
			t.Errorf("CleanText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// Escape sequences in a rejection's text changed the terminal's
// title and colours. Broker text is cleaned where the client decodes it:
// a history row's text, a JSON error's message and detail, a problem's
// title and errors, a stream message, over real HTTP.
func TestBrokerTextCleanedWhereDecoded(t *testing.T) {
	t.Parallel()
	const evil = "\x1b]0;pwned\x07\x1b[31m"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/locates/history"):
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`[{"quoteReqID":"q1","symbol":"HT\u001b[2JBX","status":"Rejected","locateError":67,"text":"` + jsonEsc(evil) + `R67: lots of 100\u001b[0m"}]`))
		case strings.HasSuffix(r.URL.Path, "/locates/inventory"):
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"statusCode":"BadRequest","message":"` + jsonEsc(evil) + `no","detail":"d\u009b1m"}`))
		default:
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"title":"` + jsonEsc(evil) + `One or more errors","status":400,"errors":{"Quantity\u001b[1m":["` + jsonEsc(evil) + `too small"]}}`))
		}
	}))
	t.Cleanup(srv.Close)
	c, err := brokerclient.NewClient(brokerclient.WithBaseURL(srv.URL), brokerclient.WithCredentials("k", "s"))
	if err != nil {
		t.Fatal(err)
	}
	rows, _, err := c.Locates.History(t.Context(), "LV100001")
	if err != nil || len(rows) != 1 {
		t.Fatalf("history: %v %v", rows, err)
	}
	if rows[0].TextValue() != "R67: lots of 100" || rows[0].Symbol != "HTBX" {
		t.Errorf("history row: text %q, symbol %q", rows[0].TextValue(), rows[0].Symbol)
	}
	_, _, err = c.Locates.Inventory(t.Context(), "LV100001")
	var er *brokerclient.ErrorResponse
	if !errors.As(err, &er) || er.Message != "no" || er.Detail != "d" {
		t.Errorf("JSON error: %#v", err)
	}
	_, _, err = c.Locates.Quote(t.Context(), brokerclient.QuoteRequest{Account: "LV100001", Symbol: "HTBX", Quantity: 100})
	var pd *brokerclient.ProblemDetails
	if !errors.As(err, &pd) || pd.Title != "One or more errors" || pd.Errors["Quantity"][0] != "too small" {
		t.Errorf("problem details: %#v", err)
	}
	if strings.ContainsAny(err.Error(), "\x1b\x07\u009b") {
		t.Errorf("error text %q carries control characters", err)
	}
	if _, err := brokerclient.DecodeStreamMessage([]byte("{\"@system\": \x1b[31m}")); err == nil {
		t.Error("a message that is not JSON decoded")
	} else if se := new(brokerclient.StreamDecodeError); !errors.As(err, &se) || strings.Contains(se.Raw, "\x1b") {
		t.Errorf("undecodable stream message kept as %q", se.Raw)
	}
	m, err := brokerclient.DecodeStreamMessage([]byte(`{"@system":true,"status":"FAILED_AUTH","message":"` + jsonEsc(evil) + `bad key"}`))
	if sys, ok := m.(*brokerclient.SystemMessage); err != nil || !ok || sys.Message != "bad key" {
		t.Errorf("stream message: %#v %v", m, err)
	}
}

// jsonEsc writes s's control characters as JSON escapes.
func jsonEsc(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) {
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[r>>4])
			b.WriteByte("0123456789abcdef"[r&15])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// A rejection text with a line break and U+202E forged a row of
// `status`. A history row's text (spec: GET .../locates/history, `text`)
// and an order's text decode as one line without bidi controls.
func TestBrokerTextOneLineWithoutBidi(t *testing.T) {
	t.Parallel()
	const forged = `R67: lots of 100\nq-forged  HTBX  Filled  \u202E001 derahs`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`[{"quoteReqID":"q1","symbol":"HTBX\u2066","status":"Rejected","locateError":67,"text":"` + forged + `"}]`))
	}))
	t.Cleanup(srv.Close)
	c, err := brokerclient.NewClient(brokerclient.WithBaseURL(srv.URL), brokerclient.WithCredentials("k", "s"))
	if err != nil {
		t.Fatal(err)
	}
	rows, _, err := c.Locates.History(t.Context(), "LV100001")
	if err != nil || len(rows) != 1 {
		t.Fatalf("history: %v %v", rows, err)
	}
	if got, want := rows[0].TextValue(), "R67: lots of 100 q-forged  HTBX  Filled  001 derahs"; got != want {
		t.Errorf("history text %q, want %q", got, want)
	}
	if rows[0].Symbol != "HTBX" {
		t.Errorf("symbol %q kept its isolate", rows[0].Symbol)
	}
}

// A broker answer echoing the secret header printed the secret.
// Every error quoting a broker body (a JSON error, a problem, a text body,
// a 2xx that did not decode) and every decoded string show
// secretMask in its place, even when the echo is split by a control
// character CleanText drops or cut where the body is truncated.
func TestEchoedSecretMasked(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t-K3Y-0123456789"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var sent string
		for name, v := range r.Header {
			if strings.HasSuffix(name, "-Api-Secret-Key") {
				sent = v[0]
			}
		}
		if sent != secret {
			t.Errorf("request carried secret %q", sent)
		}
		split := sent[:4] + `\u0000` + sent[4:]
		switch {
		case strings.HasSuffix(r.URL.Path, "/locates/history"):
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`[{"quoteReqID":"q1","symbol":"HTBX","status":"Rejected","text":"bad key ` + sent + `"}]`))
		case strings.HasSuffix(r.URL.Path, "/locates/inventory"):
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"statusCode":"Unauthorized","message":"bad key ` + sent + `","detail":"` + split + `"}`))
		case strings.HasSuffix(r.URL.Path, "/routes"):
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(strings.Repeat(" ", 500) + `"` + sent + `"`))
		case strings.HasSuffix(r.URL.Path, "/orders"):
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte("upstream refused header TZ-API-SECRET-KEY: " + sent))
		default:
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"title":"` + split + `","status":400,"errors":{"` + sent + `":["` + sent + `"]}}`))
		}
	}))
	t.Cleanup(srv.Close)
	c, err := brokerclient.NewClient(brokerclient.WithBaseURL(srv.URL), brokerclient.WithCredentials("k", secret),
		brokerclient.WithoutPacing())
	if err != nil {
		t.Fatal(err)
	}
	shown := func(what string, err error) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: no error", what)
			return
		}
		for _, s := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)} {
			if strings.Contains(s, secret) {
				t.Errorf("%s: %s", what, s)
			}
		}
		if s := fmt.Sprintf("%#v", err); !strings.Contains(s, "[REDACTED]") {
			t.Errorf("%s: no mask in %s", what, s)
		}
	}
	rows, _, err := c.Locates.History(t.Context(), "LV100001")
	if err != nil || len(rows) != 1 || rows[0].TextValue() != "bad key [REDACTED]" {
		t.Errorf("history: %#v %v", rows, err)
	}
	_, _, err = c.Locates.Inventory(t.Context(), "LV100001")
	shown("JSON error", err)
	_, _, err = c.Locates.Quote(t.Context(), brokerclient.QuoteRequest{Account: "LV100001", Symbol: "HTBX", Quantity: 100})
	shown("problem", err)
	_, _, err = c.Orders.Routes(t.Context(), "LV100001")
	shown("undecodable 2xx", err)
	_, _, err = c.Orders.Book(t.Context(), "LV100001")
	shown("text error", err)
}

// A stream's FAILED_AUTH message echoing the secret of the
// handshake (spec: "P&L stream", authentication) keeps [REDACTED] in the
// StreamAuthError in its place.
func TestStreamAuthEchoMasked(t *testing.T) {
	t.Parallel()
	const secret = "stream-s3cr3t-0123456"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			t.Error(err)
			return
		}
		defer ws.CloseNow()
		ws.Write(r.Context(), websocket.MessageText, []byte(`{"@system":true,"status":"PENDING_AUTH"}`))
		_, got, err := ws.Read(r.Context())
		if err != nil {
			t.Error(err)
			return
		}
		var auth struct{ Secret string }
		json.Unmarshal(got, &auth)
		ws.Write(r.Context(), websocket.MessageText, []byte(`{"@system":true,"status":"FAILED_AUTH","message":"bad secret `+auth.Secret+`"}`))
		ws.Read(r.Context()) // until the client hangs up
	}))
	t.Cleanup(srv.Close)
	c, err := brokerclient.NewClient(brokerclient.WithBaseURL(srv.URL), brokerclient.WithCredentials("k", secret),
		brokerclient.WithStreamURL("ws"+strings.TrimPrefix(srv.URL, "http")))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Streams.Dial(t.Context(), brokerclient.StreamPnL)
	var ae *brokerclient.StreamAuthError
	if !errors.As(err, &ae) || ae.Message != "bad secret [REDACTED]" {
		t.Fatalf("dial: %#v", err)
	}
	if s := fmt.Sprintf("%v %+v", err, err); strings.Contains(s, secret) {
		t.Errorf("secret printed: %s", s)
	}
}
