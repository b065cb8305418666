package brokerclient_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/simtest"
)

// These benchmarks measure the client's own cost per call (request
// building, pacing bookkeeping, decoding) against the simulator over
// loopback, with the simulator's rate limits lifted so nothing waits. Two
// variants: pacing off (WithoutPacing), and pacing on but never binding
// (the shared fake clock moves past the route's refill interval between
// calls, so every call finds a token and the bucket's bookkeeping is all
// that runs).

// benchBundle starts a simulator without rate limits, at 09:30 ET so a long
// run of paced calls stays inside one trading day (history is per day).
func benchBundle(b *testing.B) *simtest.Bundle {
	return simtest.New(b,
		simtest.WithStart(time.Date(2026, 11, 25, 14, 30, 0, 0, time.UTC)),
		simtest.WithScenario(func(sc *brokersim.Scenario) { sc.RateLimits = false }))
}

// seedHistory gives LV100001 a realistic day of locate rows: offers, a Reg
// SHO pair, rejections of both families and a fill.
func seedHistory(b *testing.B, sb *simtest.Bundle) {
	c := sb.Client(b, sb.Live, brokerclient.WithoutPacing())
	ctx := b.Context()
	var first string
	for _, sym := range []string{"HTBX", "HTBY", "RSHO", "RSSU", "RSDRY", "NOINV", "AAPL", "RSTR"} {
		ack, _, err := c.Locates.Quote(ctx, brokerclient.QuoteRequest{Account: "LV100001", Symbol: sym, Quantity: 500})
		if err != nil {
			b.Fatal(err)
		}
		if first == "" {
			first = ack.QuoteReqID
		}
	}
	sb.Advance(3 * time.Second)
	if _, _, err := c.Locates.Accept(ctx, "LV100001", first); err != nil {
		b.Fatal(err)
	}
	rows, _, err := c.Locates.History(ctx, "LV100001")
	if err != nil || len(rows) < 9 {
		b.Fatalf("seeded history: %d rows, %v", len(rows), err)
	}
}

// benchCalls runs call b.N times; with paced set, the clock moves by step
// before each call so the route's bucket always holds a token.
func benchCalls(b *testing.B, sb *simtest.Bundle, paced bool, step time.Duration, call func(*brokerclient.Client) error) {
	// Identity encoding: the simulator would otherwise build a gzip writer
	// per response (about 800 KB, nine tenths of all allocations per call),
	// which is the server's cost, not the client's.
	tr := sb.Server.Client().Transport.(*http.Transport).Clone()
	tr.DisableCompression = true
	opts := []brokerclient.Option{brokerclient.WithHTTPClient(&http.Client{Transport: tr, Timeout: 15 * time.Second})}
	if !paced {
		opts = append(opts, brokerclient.WithoutPacing())
	}
	c := sb.Client(b, sb.Live, opts...)
	if err := call(c); err != nil { // warm the connection and the bucket
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if paced {
			sb.Clock.Advance(step)
		}
		if err := call(c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkClientHistory: GET .../locates/history with about ten rows.
func BenchmarkClientHistory(b *testing.B) {
	history := func(c *brokerclient.Client) error {
		_, _, err := c.Locates.History(b.Context(), "LV100001")
		return err
	}
	for _, paced := range []bool{false, true} {
		name := "pacing-off"
		if paced {
			name = "pacing-on-not-binding"
		}
		b.Run(name, func(b *testing.B) {
			sb := benchBundle(b)
			seedHistory(b, sb)
			// 2/s, the history route's whole rate (marginOf), refills a
			// token every 500 ms.
			benchCalls(b, sb, paced, 550*time.Millisecond, history)
		})
	}
}

// BenchmarkClientAccounts: GET /v1/api/accounts.
func BenchmarkClientAccounts(b *testing.B) {
	accounts := func(c *brokerclient.Client) error {
		_, _, err := c.Accounts.List(b.Context())
		return err
	}
	for _, paced := range []bool{false, true} {
		name := "pacing-off"
		if paced {
			name = "pacing-on-not-binding"
		}
		b.Run(name, func(b *testing.B) {
			// The account list is paced at 1/s less 5%: ~1.05 s per token.
			benchCalls(b, benchBundle(b), paced, 1100*time.Millisecond, accounts)
		})
	}
}

// BenchmarkDecodeHistory is the pure decode of a recorded history payload
// (both id spellings, null and empty texts, 3- to 7-digit timestamps).
func BenchmarkDecodeHistory(b *testing.B) {
	payload, err := os.ReadFile(filepath.Join("testdata", "locates_history_spec.json"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	for b.Loop() {
		var env struct {
			LocateHistory []brokerclient.HistoryRow `json:"locateHistory"`
		}
		if err := json.Unmarshal(payload, &env); err != nil {
			b.Fatal(err)
		}
		if len(env.LocateHistory) != 7 {
			b.Fatalf("%d rows", len(env.LocateHistory))
		}
	}
}
