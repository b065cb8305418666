package brokerclient_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/locatorhq/locator/brokerclient"
)

func TestCleanText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"16 Insufficient shares.", "16 Insufficient shares."},
		{"line one\n\tline two", "line one\n\tline two"},
		{"\x1b[31mred\x1b[0m", "red"},
		{"\x1b[2J\x1b[1;1Hcleared", "cleared"},
		{"\x1b]0;pwned\x07title", "title"},
		{"\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\", "link"},
		{"\x1bPdcs\x1b\\after", "after"},
		{"a\x1b7b\x1b", "ab"},
		{"\u009b31mC1 csi", "C1 csi"},
		{"\u009d0;t\u009ctitle", "title"},
		{"bell\x07 back\x08space\r cr \x00nul\x7f del \u0085nel", "bell backspace cr nul del nel"},
		{"bad \xff\xfe bytes", "bad \uFFFD bytes"},
		{"ünïcødé €", "ünïcødé €"},
	} {
		if got := brokerclient.CleanText(tc.in); got != tc.want {
			t.Errorf("CleanText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// Issue 21: escape sequences in a rejection's text changed the terminal's
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
