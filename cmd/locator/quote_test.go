package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/states"
)

// Spec "Price checks": `locator quote` on five symbols, one a Reg
// SHO pair (RSHO: PreBorrow and SingleUse priced) and one Reg SHO with
// its SingleUse side alone (RSSU), with and without `locator serve`
// owning the account: every price is shown with its type and side, every
// quote is cancelled at the broker (history status 52 for each row), no
// accept is sent and no 429 comes; a symbol the broker rejects exits 3.
// `locator shortable` then shows the offers seen from the database.
func TestQuoteFiveSymbolsWithAndWithoutServe(t *testing.T) {
	t.Parallel()
	for _, withServe := range []bool{false, true} {
		t.Run(map[bool]string{false: "alone", true: "serve"}[withServe], func(t *testing.T) {
			t.Parallel()
			b := setupOwners(t, 1) // OW00, a Locate pool at 0.0100
			if withServe {
				b.serve(t)
			}
			code, out := b.run(t, nil, "quote", "HTBX", "HTBY", "RSHO", "RSSU", "OW00", "--quantity", "500", "-o", "json")
			if code != 0 {
				t.Fatalf("quote: exit %d\n%s", code, out)
			}
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
				var r console.QuoteRow
				if err := json.Unmarshal([]byte(l), &r); err != nil {
					t.Fatalf("line %q: %v", l, err)
				}
				got = append(got, strings.Join([]string{r.Symbol, r.State, r.LocateType, r.RegSHOSide, console.Int(r.Shares), r.PricePerShare, r.Total, r.LocateStatus.String()}, " "))
			}
			want := []string{
				"HTBX priced Locate  500 0.0150 7.50 52 Canceled",
				"HTBY priced Locate  500 0.0300 15.00 52 Canceled",
				"RSHO priced PreBorrow PreBorrow 500 0.0900 45.00 52 Canceled",
				"RSHO priced SingleUse SingleUse (.SU) 500 0.0400 20.00 52 Canceled",
				"RSSU priced SingleUse SingleUse (.SU) 500 0.0500 25.00 52 Canceled",
				"OW00 priced Locate  500 0.0100 5.00 52 Canceled",
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("prices:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}

			if code, out := b.run(t, nil, "quote", "NOINV"); code != 3 || !strings.Contains(out, "rejected by the broker") {
				t.Errorf("quote NOINV: exit %d, want 3 (rejected)\n%s", code, out)
			}

			var quotes, accepts, cancels int
			for _, r := range b.requests(t) {
				switch {
				case r.Status == http.StatusTooManyRequests:
					t.Errorf("429 on %s %s", r.Method, r.Path)
				case r.Method == "POST" && r.Path == "/v1/api/accounts/locates/quote":
					quotes++
				case r.Method == "POST" && r.Path == "/v1/api/accounts/locates/accept":
					accepts++
				case r.Method == "DELETE" && strings.Contains(r.Path, "/locates/cancel/"):
					cancels++
				}
			}
			if quotes != 6 || accepts != 0 || cancels < 5 {
				t.Errorf("%d quotes, %d accepts, %d cancels; want 6 quotes (NOINV's too), 0 accepts, a cancel for each of the 5 priced", quotes, accepts, cancels)
			}
			hist, err := b.command(t.Context(), "history", "--json").Output()
			if err != nil {
				t.Fatal(err)
			}
			canceled := 0
			for _, l := range strings.Split(strings.TrimSpace(string(hist)), "\n") {
				var r brokerclient.HistoryRow
				if err := json.Unmarshal([]byte(l), &r); err != nil {
					t.Fatalf("history line %q: %v", l, err)
				}
				switch {
				case r.Symbol == "NOINV" && r.LocateStatus == 56:
				case r.LocateStatus == 52:
					canceled++
				default:
					t.Errorf("history row %s %s: status %d, want 52", r.Symbol, r.QuoteReqID, r.LocateStatus)
				}
			}
			if canceled != 7 { // HTBX, HTBY, OW00, and both rows of RSHO and of RSSU
				t.Errorf("%d rows cancelled, want 7", canceled)
			}
			b.noBrokerTrouble(t)
			b.workflows(t) // all ended

			code, out = b.run(t, nil, "shortable", "RSHO", "AAPL", "-o", "json")
			if code != 0 {
				t.Fatalf("shortable: exit %d\n%s", code, out)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			var rsho, aapl console.ShortableRow
			if len(lines) != 2 || json.Unmarshal([]byte(lines[0]), &rsho) != nil || json.Unmarshal([]byte(lines[1]), &aapl) != nil {
				t.Fatalf("shortable: %s", out)
			}
			if rsho.EasyToBorrow || len(rsho.Located) != 0 || len(rsho.Offers) != 2 || rsho.Offers[1].PricePerShare != "0.0400" ||
				rsho.OfferState != "priced" || rsho.OfferedAt.IsZero() {
				t.Errorf("shortable RSHO %+v, want both sides of its price check, nothing located", rsho)
			}
			if !aapl.EasyToBorrow || len(aapl.Offers) != 0 {
				t.Errorf("shortable AAPL %+v, want easy to borrow, no offers", aapl)
			}
		})
	}
}

// docs/design.md rule 8: Ctrl-C while a price check's quote is open at the
// broker (RSDRY: a Reg SHO pair with no inventory, both rows Pending)
// cancels it on a context that outlives the interrupt and waits for the
// broker to show it: exit 130, both rows 52, nothing accepted.
func TestQuoteInterruptedLeavesNothingOpen(t *testing.T) {
	t.Parallel()
	b := setupCLIAt(t, testStart, personSpeed) // interrupted inside a window of the broker's
	var stdout, stderr syncBuffer
	m := NewMain(&stdout, &stderr, func(k string) string { return b.env[k] })
	ctx, interrupt := context.WithCancel(t.Context())
	done := make(chan int, 1)
	go func() { done <- m.Run(ctx, []string{"quote", "RSDRY"}) }()
	history := func() []brokerclient.HistoryRow {
		rows, _, err := b.brokerClient(t).Locates.History(t.Context(), "LV100001")
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	// The price check's record says when the broker holds the quote
	// Pending (the broker's own history is not read here: it shares the
	// command's key pair and its pace).
	st, err := store.Open(t.Context(), b.env["LOCATOR_DB"], clock.Real{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ws, err := st.List(t.Context(), store.Filter{Symbol: "RSDRY"})
		if err == nil && len(ws) == 1 && ws[0].State == states.Pending {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the quote never reached Pending (%v)\n%s", err, stderr.String())
		}
		time.Sleep(20 * time.Millisecond) // watching the command's record, not waiting out a window
	}
	interrupt()
	select {
	case code := <-done:
		if code != 130 {
			t.Errorf("exit %d, want 130\n%s", code, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the command did not end after the interrupt:\n%s", stderr.String())
	}
	for _, r := range history() {
		if r.LocateStatus != brokercode.LocateStatusCanceled {
			t.Errorf("%s: status %d, want 52 Canceled", r.QuoteReqID, r.LocateStatus)
		}
	}
	for _, r := range b.sim.Requests() {
		if strings.HasSuffix(r.Path, "/locates/accept") {
			t.Errorf("an accept was sent: %+v", r)
		}
	}
}
