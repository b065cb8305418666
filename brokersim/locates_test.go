package brokersim_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/simtest"
)

// locAcct is the Active live margin account of the default scenario, owned by b.Live.
const locAcct = "LV100001"

// locToday is the trading day of simtest.Start.
const locToday = "2026-11-25"

// locSettle is the upper bound of the seeded quote settle delay (spec:
// "Locate statuses": "settles in about 1.5 to 3 seconds").
const locSettle = 3 * time.Second

// locSim starts the default scenario with the rate limits lifted, so the
// workflow tests can poll history and inventory as often as they assert;
// TestLocateQuoteRateLimit checks the limits themselves.
func locSim(t *testing.T) *simtest.Bundle {
	t.Helper()
	return simtest.New(t, simtest.WithScenario(func(sc *brokersim.Scenario) { sc.RateLimits = false }))
}

// locHistRow is the spec's "Locate history row".
type locHistRow struct {
	AccountID    string      `json:"accountId"`
	Symbol       string      `json:"symbol"`
	QuoteReqID   string      `json:"quoteReqID"`
	LocateShares int64       `json:"locateShares"`
	FilledShares int64       `json:"filledShares"`
	LocateStatus int         `json:"locateStatus"`
	LocateType   int         `json:"locateType"`
	LocatePrice  json.Number `json:"locatePrice"`
	PreBorrow    bool        `json:"preBorrow"`
	LocateError  int         `json:"locateError"`
	Text         *string     `json:"text"`
	CreatedDate  string      `json:"createdDate"`
	UpdatedDate  string      `json:"updatedDate"`
}

// locState is the part of a history row the workflow tests compare.
type locState struct {
	Status, Type, Error int
	Shares, Filled      int64
	Price               string
	PreBorrow           bool
	Text                *string
}

func (r locHistRow) state() locState {
	return locState{
		Status: r.LocateStatus, Type: r.LocateType, Error: r.LocateError,
		Shares: r.LocateShares, Filled: r.FilledShares, Price: r.LocatePrice.String(),
		PreBorrow: r.PreBorrow, Text: r.Text,
	}
}

// locInvRow is the spec's "Locate inventory row".
type locInvRow struct {
	AccountID   string `json:"accountId"`
	Symbol      string `json:"symbol"`
	Available   int64  `json:"available"`
	Sold        int64  `json:"sold"`
	ToBeSold    int64  `json:"toBeSold"`
	Unavailable int64  `json:"unavailable"`
	LocateType  int    `json:"locateType"`
}

// locCashRow is the part of a cash ledger row the fee checks read.
type locCashRow struct {
	CashType  string      `json:"cashType"`
	Deposit   json.Number `json:"deposit"`
	Withdraw  json.Number `json:"withdraw"`
	Note      string      `json:"note"`
	EntryDate string      `json:"entryDate"`
}

func locTextPtr(s string) *string { return &s }

// locWrite sends a locate write and requires the spec's string-valued ack.
func locWrite(t *testing.T, b *simtest.Bundle, key simtest.Key, method, path string, body any, ackKey string) {
	t.Helper()
	r := b.Do(t, key, method, path, body)
	if r.Status != http.StatusOK {
		t.Fatalf("%s %s: status %d, body %q", method, path, r.Status, r.Body)
	}
	if want := `{"` + ackKey + `":"true"}`; string(r.Body) != want {
		t.Fatalf("%s %s: body %s, want %s", method, path, r.Body, want)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("%s %s: content type %q", method, path, ct)
	}
}

func locQuote(t *testing.T, b *simtest.Bundle, key simtest.Key, acct, symbol string, qty int64, id string) {
	t.Helper()
	locWrite(t, b, key, "POST", "/v1/api/accounts/locates/quote",
		map[string]any{"account": acct, "symbol": symbol, "quantity": qty, "quoteReqID": id}, "locateQuoteSent")
}

func locAccept(t *testing.T, b *simtest.Bundle, id string) {
	t.Helper()
	locWrite(t, b, b.Live, "POST", "/v1/api/accounts/locates/accept",
		map[string]any{"accountId": locAcct, "quoteReqID": id}, "locateAcceptSent")
}

func locSell(t *testing.T, b *simtest.Bundle, symbol string, qty int64, typ, id string) {
	t.Helper()
	locWrite(t, b, b.Live, "POST", "/v1/api/accounts/locates/sell",
		map[string]any{"account": locAcct, "symbol": symbol, "quantity": qty, "locateType": typ, "quoteReqID": id}, "locateSellbackSent")
}

func locCancel(t *testing.T, b *simtest.Bundle, id string) {
	t.Helper()
	locWrite(t, b, b.Live, "DELETE", "/v1/api/accounts/locates/cancel/accounts/"+locAcct+"/quoteReqID/"+id, nil, "locateCancelSent")
}

// locGet reads a JSON endpoint into v, requiring 200.
func locGet(t *testing.T, b *simtest.Bundle, key simtest.Key, path string, v any) {
	t.Helper()
	r := b.Do(t, key, "GET", path, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("GET %s: status %d, body %q", path, r.Status, r.Body)
	}
	r.JSON(t, v)
}

func locHistory(t *testing.T, b *simtest.Bundle, key simtest.Key, acct string) []locHistRow {
	t.Helper()
	var out struct {
		LocateHistory []locHistRow `json:"locateHistory"`
	}
	locGet(t, b, key, "/v1/api/accounts/"+acct+"/locates/history", &out)
	return out.LocateHistory
}

// locRow returns the live account's history row with id, failing when absent.
func locRow(t *testing.T, b *simtest.Bundle, id string) locHistRow {
	t.Helper()
	for _, r := range locHistory(t, b, b.Live, locAcct) {
		if r.QuoteReqID == id {
			return r
		}
	}
	t.Fatalf("no history row %q", id)
	return locHistRow{}
}

// locWantRow compares the state of history row id.
func locWantRow(t *testing.T, b *simtest.Bundle, id string, want locState) {
	t.Helper()
	if diff := cmp.Diff(want, locRow(t, b, id).state()); diff != "" {
		t.Errorf("history row %s (-want +got):\n%s", id, diff)
	}
}

func locInventory(t *testing.T, b *simtest.Bundle) []locInvRow {
	t.Helper()
	var out struct {
		LocateInventory []locInvRow `json:"locateInventory"`
	}
	locGet(t, b, b.Live, "/v1/api/accounts/"+locAcct+"/locates/inventory", &out)
	return out.LocateInventory
}

func locWantInventory(t *testing.T, b *simtest.Bundle, want []locInvRow) {
	t.Helper()
	if want == nil {
		want = []locInvRow{}
	}
	got := locInventory(t, b)
	if got == nil {
		got = []locInvRow{}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("inventory (-want +got):\n%s", diff)
	}
}

// locFees returns today's `Locate Fees` ledger rows of the live account.
func locFees(t *testing.T, b *simtest.Bundle) []locCashRow {
	t.Helper()
	var out struct {
		CashHistory []locCashRow `json:"cashHistory"`
	}
	locGet(t, b, b.Live, "/v1/api/accounts/"+locAcct+"/cash-transactions/start-date/"+locToday, &out)
	var fees []locCashRow
	for _, r := range out.CashHistory {
		if r.CashType == "Locate Fees" {
			fees = append(fees, r)
		}
	}
	return fees
}

// locFilled quotes, settles and accepts qty of symbol under id, leaving the
// account with located inventory.
func locFilled(t *testing.T, b *simtest.Bundle, symbol string, qty int64, id, acceptID string) {
	t.Helper()
	locQuote(t, b, b.Live, locAcct, symbol, qty, id)
	b.Advance(locSettle)
	locAccept(t, b, acceptID)
	if r := locRow(t, b, acceptID); r.LocateStatus != 50 {
		t.Fatalf("setup: %s not filled: %+v", acceptID, r)
	}
}

var (
	locFmt7Re = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z$`)
	locFmt3Re = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)
)

// TestLocateHappyPath walks the spec's "Short locates" rule 1 lifecycle:
// easy-to-borrow check, quote (81 Quoting, then 65 Offered, "Locate
// statuses"), accept (50 Filled), the inventory row ("Locate inventory row",
// exactly seven fields) and the delayed `Locate Fees` row ("Cash ledger").
func TestLocateHappyPath(t *testing.T) {
	t.Parallel()
	b := locSim(t)
	etb := func() string {
		r := b.Do(t, b.Live, "GET", "/v1/api/accounts/"+locAcct+"/is-easy-to-borrow/symbol/HTBX", nil)
		return string(r.Body)
	}
	if got := etb(); got != `{"isEasyToBorrow":false}` {
		t.Fatalf("easy-to-borrow: %s", got)
	}

	locQuote(t, b, b.Live, locAcct, "HTBX", 500, "q1")
	// Spec "Locate history row": text null and price 0 while Quoting.
	locWantRow(t, b, "q1", locState{Status: 81, Shares: 500, Price: "0"})

	b.Advance(locSettle)
	offered := locRow(t, b, "q1")
	if diff := cmp.Diff(locState{Status: 65, Type: 1, Shares: 500, Price: "0.015", Text: locTextPtr("")}, offered.state()); diff != "" {
		t.Fatalf("offered row (-want +got):\n%s", diff)
	}
	if offered.AccountID != locAcct || offered.Symbol != "HTBX" {
		t.Errorf("row echoes %s/%s", offered.AccountID, offered.Symbol)
	}
	if !locFmt7Re.MatchString(offered.CreatedDate) || !locFmt3Re.MatchString(offered.UpdatedDate) {
		t.Errorf("timestamps %q / %q: want ISO-8601 UTC with 7 and 3 fractional digits", offered.CreatedDate, offered.UpdatedDate)
	}

	locAccept(t, b, "q1")
	locWantRow(t, b, "q1", locState{Status: 50, Type: 1, Shares: 500, Filled: 500, Price: "0.015", Text: locTextPtr("")})

	// Exactly the thirteen documented history keys and seven inventory keys.
	var raw struct {
		LocateHistory   []map[string]json.RawMessage `json:"locateHistory"`
		LocateInventory []map[string]json.RawMessage `json:"locateInventory"`
	}
	locGet(t, b, b.Live, "/v1/api/accounts/"+locAcct+"/locates/history", &raw)
	locGet(t, b, b.Live, "/v1/api/accounts/"+locAcct+"/locates/inventory", &raw)
	keys := func(m map[string]json.RawMessage) []string {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return ks
	}
	wantHist := []string{"accountId", "createdDate", "filledShares", "locateError", "locatePrice", "locateShares", "locateStatus", "locateType", "preBorrow", "quoteReqID", "symbol", "text", "updatedDate"}
	if len(raw.LocateHistory) != 1 || !slices.Equal(keys(raw.LocateHistory[0]), wantHist) {
		t.Errorf("history rows %v: want one row with keys %v", raw.LocateHistory, wantHist)
	}
	wantInv := []string{"accountId", "available", "locateType", "sold", "symbol", "toBeSold", "unavailable"}
	if len(raw.LocateInventory) != 1 || !slices.Equal(keys(raw.LocateInventory[0]), wantInv) {
		t.Errorf("inventory rows %v: want one row with exactly keys %v", raw.LocateInventory, wantInv)
	}
	locWantInventory(t, b, []locInvRow{{AccountID: locAcct, Symbol: "HTBX", Available: 500, LocateType: 1}})

	// Spec "Orders" rule 6: the easy-to-borrow result does not change after a locate.
	if got := etb(); got != `{"isEasyToBorrow":false}` {
		t.Errorf("easy-to-borrow after the locate: %s", got)
	}

	// Spec "Cash ledger": the fee row may appear later than the fill.
	if fees := locFees(t, b); len(fees) != 0 {
		t.Fatalf("fee rows right after the accept: %+v", fees)
	}
	b.Advance(5 * time.Second)
	fees := locFees(t, b)
	if len(fees) != 1 {
		t.Fatalf("fee rows after 5 s: %+v", fees)
	}
	f := fees[0]
	if f.Withdraw.String() != "7.5" || f.Deposit.String() != "0" {
		t.Errorf("fee withdraw %s deposit %s, want 7.5 and 0 (500 × 0.015)", f.Withdraw, f.Deposit)
	}
	for _, part := range []string{"HTBX", "500", "0.015", "q1"} {
		if !strings.Contains(f.Note, part) {
			t.Errorf("fee note %q does not name %s", f.Note, part)
		}
	}
}

// TestLocateOfferExpiry checks the 30-second window of "Locate limits" and
// the 65 → 67 transition of "Locate statuses", and that an accept after
// expiry changes nothing ("Short locates" rule 3).
func TestLocateOfferExpiry(t *testing.T) {
	t.Parallel()
	// settledAt is when the row reached 65, to millisecond precision (the
	// updatedDate truncates, so the true instant is at most 1 ms later).
	settledAt := func(t *testing.T, b *simtest.Bundle) time.Time {
		r := locRow(t, b, "q1")
		if r.LocateStatus != 65 {
			t.Fatalf("not offered: %+v", r)
		}
		at, err := time.Parse(time.RFC3339Nano, r.UpdatedDate)
		if err != nil {
			t.Fatal(err)
		}
		return at
	}
	cases := []struct {
		name      string
		acceptAt  time.Duration // after settledAt
		wantState locState
		wantInv   []locInvRow
	}{
		{"accept just inside the window fills", 30*time.Second - time.Millisecond,
			locState{Status: 50, Type: 1, Shares: 500, Filled: 500, Price: "0.015", Text: locTextPtr("")},
			[]locInvRow{{AccountID: locAcct, Symbol: "HTBX", Available: 500, LocateType: 1}}},
		{"accept after the window changes nothing", 30*time.Second + time.Millisecond,
			locState{Status: 67, Type: 1, Shares: 500, Price: "0.015", Text: locTextPtr("Quote expired.")}, nil},
		{"accept long after expiry changes nothing", time.Hour,
			locState{Status: 67, Type: 1, Shares: 500, Price: "0.015", Text: locTextPtr("Quote expired.")}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := locSim(t)
			locQuote(t, b, b.Live, locAcct, "HTBX", 500, "q1")
			b.Advance(locSettle)
			at := settledAt(t, b)
			b.Advance(at.Add(tc.acceptAt).Sub(b.Sim.Now()))
			locAccept(t, b, "q1")
			locWantRow(t, b, "q1", tc.wantState)
			locWantInventory(t, b, tc.wantInv)
		})
	}
}

// TestLocateQuoteRejections covers every asynchronous quote rejection of the
// spec's "Locate errors" table and "Locate limits" (one open quote per
// symbol, same-symbol spacing): 200 at once, a row at 81, then 56 with
// locateType 0 and the reason.
func TestLocateQuoteRejections(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		setup      func(t *testing.T, b *simtest.Bundle)
		paper      bool
		symbol     string
		qty        int64
		wantError  int
		wantText   string // exact
		wantPrefix string // or a prefix
		wantSubstr string
	}{
		{name: "easy to borrow (R56)", symbol: "AAPL", qty: 500, wantError: 56, wantPrefix: "R56: "},
		{name: "restricted (R06)", symbol: "RSTR", qty: 500, wantError: 4, wantPrefix: "R06: ", wantSubstr: "restricted at this price"},
		{name: "quantity not a multiple of 100 (R67)", symbol: "HTBX", qty: 150, wantError: 67, wantText: "R67: You can only offer for credit in lots of 100"},
		{name: "Reg SHO quantity not a multiple of 100 (R67)", symbol: "RSHO", qty: 250, wantError: 67, wantText: "R67: You can only offer for credit in lots of 100"},
		{name: "no inventory (11)", symbol: "NOINV", qty: 500, wantError: 11, wantText: "11 No shares available. Please try again later."},
		{name: "more than the pool holds (11)", symbol: "HTBX", qty: 200000, wantError: 11, wantText: "11 No shares available. Please try again later."},
		{name: "missing symbol is malformed (1)", symbol: "", qty: 500, wantError: 1, wantPrefix: "1 "},
		{name: "paper account (Paper versus live)", paper: true, symbol: "HTBX", qty: 500, wantError: 1, wantPrefix: "1 "},
		{name: "earlier quote still quoting (14)", symbol: "HTBX", qty: 500, wantError: 14, wantText: "14 Locate is already pending.",
			setup: func(t *testing.T, b *simtest.Bundle) {
				locQuote(t, b, b.Live, locAcct, "HTBX", 100, "first")
				b.Advance(time.Second)
			}},
		{name: "earlier quote offered (14)", symbol: "HTBX", qty: 500, wantError: 14, wantText: "14 Locate is already pending.",
			setup: func(t *testing.T, b *simtest.Bundle) {
				locQuote(t, b, b.Live, locAcct, "HTBX", 100, "first")
				b.Advance(locSettle)
			}},
		{name: "Reg SHO pair pending (14)", symbol: "RSDRY", qty: 500, wantError: 14, wantText: "14 Locate is already pending.",
			setup: func(t *testing.T, b *simtest.Bundle) {
				locQuote(t, b, b.Live, locAcct, "RSDRY", 100, "first")
				b.Advance(locSettle)
			}},
		// The spec gives no text for a spacing violation; the simulator
		// uses the generic code 1 with a bare-number text saying why.
		{name: "same symbol sooner than 30 s (spacing)", symbol: "HTBX", qty: 500, wantError: 1, wantPrefix: "1 Quotes for the same symbol must be at least 30 seconds apart.",
			setup: func(t *testing.T, b *simtest.Bundle) {
				locQuote(t, b, b.Live, locAcct, "HTBX", 100, "first")
				b.Advance(locSettle)
				locCancel(t, b, "first")
				b.Advance(time.Second)
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := locSim(t)
			if tc.setup != nil {
				tc.setup(t, b)
			}
			key, acct := b.Live, locAcct
			if tc.paper {
				key, acct = b.Paper, "PP200001"
			}
			locQuote(t, b, key, acct, tc.symbol, tc.qty, "rej")
			find := func() []locHistRow {
				var rows []locHistRow
				for _, r := range locHistory(t, b, key, acct) {
					if strings.HasPrefix(r.QuoteReqID, "rej") {
						rows = append(rows, r)
					}
				}
				return rows
			}
			rows := find()
			if len(rows) != 1 || rows[0].LocateStatus != 81 || rows[0].Text != nil {
				t.Fatalf("right after the quote: %+v, want one row at 81 with null text", rows)
			}
			b.Advance(locSettle)
			rows = find()
			if len(rows) != 1 {
				t.Fatalf("rows %+v, want exactly one (no .SU row on a rejection)", rows)
			}
			r := rows[0]
			text := ""
			if r.Text != nil {
				text = *r.Text
			}
			want := locState{Status: 56, Type: 0, Error: tc.wantError, Shares: tc.qty, Price: "0", Text: r.Text}
			if diff := cmp.Diff(want, r.state()); diff != "" {
				t.Errorf("rejected row (-want +got):\n%s", diff)
			}
			switch {
			case r.Text == nil:
				t.Errorf("text is null on a rejected row")
			case tc.wantText != "" && text != tc.wantText:
				t.Errorf("text %q, want %q", text, tc.wantText)
			case tc.wantPrefix != "" && !strings.HasPrefix(text, tc.wantPrefix):
				t.Errorf("text %q, want prefix %q", text, tc.wantPrefix)
			case tc.wantSubstr != "" && !strings.Contains(text, tc.wantSubstr):
				t.Errorf("text %q does not mention %q", text, tc.wantSubstr)
			}
			if r.Symbol != tc.symbol || r.AccountID != acct {
				t.Errorf("row echoes %s/%s", r.AccountID, r.Symbol)
			}
		})
	}
}

// TestLocateQuoteSpacingRespected checks the other side of "Locate limits":
// a same-symbol quote 30 seconds after the previous one is processed, and a
// quote on another symbol is never held back.
func TestLocateQuoteSpacingRespected(t *testing.T) {
	t.Parallel()
	b := locSim(t)
	locQuote(t, b, b.Live, locAcct, "HTBX", 100, "first")
	locQuote(t, b, b.Live, locAcct, "HTBY", 100, "other")
	b.Advance(locSettle)
	locCancel(t, b, "first")
	b.Advance(30*time.Second - locSettle)
	locQuote(t, b, b.Live, locAcct, "HTBX", 100, "second")
	b.Advance(locSettle)
	locWantRow(t, b, "other", locState{Status: 67, Type: 2, Shares: 100, Price: "0.03", Text: locTextPtr("Quote expired.")})
	locWantRow(t, b, "second", locState{Status: 65, Type: 1, Shares: 100, Price: "0.015", Text: locTextPtr("")})
}

// TestLocateRegSHO covers "Short locates" rule 2 and the Reg SHO rows of
// "Locate statuses": one quote yields id (PreBorrow, type 3) and id.SU
// (SingleUse, type 4, cheaper); accepting one side expires the other; a side
// without a pool stays 54 at price 0; both expire together otherwise.
func TestLocateRegSHO(t *testing.T) {
	t.Parallel()
	expired := func(typ int, price string) locState {
		return locState{Status: 67, Type: typ, Shares: 500, Price: price, PreBorrow: typ == 3, Text: locTextPtr("Quote expired.")}
	}
	offered := func(typ int, price string) locState {
		return locState{Status: 65, Type: typ, Shares: 500, Price: price, PreBorrow: typ == 3, Text: locTextPtr("")}
	}
	filled := func(typ int, price string) locState {
		return locState{Status: 50, Type: typ, Shares: 500, Filled: 500, Price: price, PreBorrow: typ == 3, Text: locTextPtr("")}
	}
	pending := func(typ int) locState {
		return locState{Status: 54, Type: typ, Shares: 500, Price: "0", PreBorrow: typ == 3, Text: locTextPtr("")}
	}
	cases := []struct {
		name             string
		symbol           string
		settledPB, setSU locState
		act              func(t *testing.T, b *simtest.Bundle)
		wantPB, wantSU   locState
		wantInv          []locInvRow
	}{
		{
			name: "RSHO both priced, accept .SU", symbol: "RSHO",
			settledPB: offered(3, "0.09"), setSU: offered(4, "0.04"),
			act:    func(t *testing.T, b *simtest.Bundle) { locAccept(t, b, "q.SU") },
			wantPB: expired(3, "0.09"), wantSU: filled(4, "0.04"),
			wantInv: []locInvRow{{AccountID: locAcct, Symbol: "RSHO", Available: 500, LocateType: 4}},
		},
		{
			name: "RSHO both priced, accept PreBorrow", symbol: "RSHO",
			settledPB: offered(3, "0.09"), setSU: offered(4, "0.04"),
			act:    func(t *testing.T, b *simtest.Bundle) { locAccept(t, b, "q") },
			wantPB: filled(3, "0.09"), wantSU: expired(4, "0.04"),
			wantInv: []locInvRow{{AccountID: locAcct, Symbol: "RSHO", Available: 500, LocateType: 3}},
		},
		{
			name: "RSHO both expire together", symbol: "RSHO",
			settledPB: offered(3, "0.09"), setSU: offered(4, "0.04"),
			act:    func(t *testing.T, b *simtest.Bundle) { b.Advance(30 * time.Second) },
			wantPB: expired(3, "0.09"), wantSU: expired(4, "0.04"),
		},
		{
			name: "RSSU only SingleUse priced; accepting the pending side does nothing", symbol: "RSSU",
			settledPB: pending(3), setSU: offered(4, "0.05"),
			act: func(t *testing.T, b *simtest.Bundle) {
				locAccept(t, b, "q")
				if r := locRow(t, b, "q"); r.LocateStatus != 54 {
					t.Errorf("accepting the pending side moved it to %d", r.LocateStatus)
				}
				locAccept(t, b, "q.SU")
			},
			wantPB: expired(3, "0"), wantSU: filled(4, "0.05"),
			wantInv: []locInvRow{{AccountID: locAcct, Symbol: "RSSU", Available: 500, LocateType: 4}},
		},
		{
			name: "RSDRY no pool: both pending, then expired", symbol: "RSDRY",
			settledPB: pending(3), setSU: pending(4),
			act: func(t *testing.T, b *simtest.Bundle) {
				b.Advance(29 * time.Second)
				locWantRow(t, b, "q", pending(3))
				b.Advance(locSettle)
				locAccept(t, b, "q")
				locAccept(t, b, "q.SU")
			},
			wantPB: expired(3, "0"), wantSU: expired(4, "0"),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := locSim(t)
			locQuote(t, b, b.Live, locAcct, tc.symbol, 500, "q")
			rows := locHistory(t, b, b.Live, locAcct)
			var ids []string
			for _, r := range rows {
				ids = append(ids, r.QuoteReqID)
				if r.LocateStatus != 81 || r.Text != nil {
					t.Errorf("row %s right after the quote: status %d text %v, want 81 and null", r.QuoteReqID, r.LocateStatus, r.Text)
				}
			}
			if !slices.Equal(ids, []string{"q", "q.SU"}) {
				t.Fatalf("rows %v, want q and q.SU", ids)
			}
			b.Advance(locSettle)
			locWantRow(t, b, "q", tc.settledPB)
			locWantRow(t, b, "q.SU", tc.setSU)
			if tc.settledPB.Status == 65 && tc.setSU.Status == 65 {
				pb := decimal.RequireFromString(tc.settledPB.Price)
				su := decimal.RequireFromString(tc.setSU.Price)
				if !su.LessThan(pb) {
					t.Errorf("SingleUse %s not cheaper than PreBorrow %s", su, pb)
				}
			}
			tc.act(t, b)
			locWantRow(t, b, "q", tc.wantPB)
			locWantRow(t, b, "q.SU", tc.wantSU)
			locWantInventory(t, b, tc.wantInv)
		})
	}
}

// TestLocateCancel covers cancel in "Locate statuses" (65 → 52, a Reg SHO
// pair by either id) and "Short locates" rule 6 (no existence check: always
// acknowledged; terminal ids change nothing).
func TestLocateCancel(t *testing.T) {
	t.Parallel()
	canceled := func(typ int, price string, text *string) locState {
		return locState{Status: 52, Type: typ, Shares: 500, Price: price, PreBorrow: typ == 3, Text: text}
	}
	cases := []struct {
		name    string
		symbol  string
		before  func(t *testing.T, b *simtest.Bundle)
		cancel  string
		after   func(t *testing.T, b *simtest.Bundle)
		want    map[string]locState
		wantInv []locInvRow
	}{
		{
			name: "offered quote, accept afterwards does nothing", symbol: "HTBX",
			before: func(t *testing.T, b *simtest.Bundle) { b.Advance(locSettle) },
			cancel: "q",
			after:  func(t *testing.T, b *simtest.Bundle) { locAccept(t, b, "q"); b.Advance(time.Minute) },
			want:   map[string]locState{"q": canceled(1, "0.015", locTextPtr(""))},
		},
		{
			name: "Reg SHO pair by the .SU id", symbol: "RSHO",
			before: func(t *testing.T, b *simtest.Bundle) { b.Advance(locSettle) },
			cancel: "q.SU",
			after:  func(t *testing.T, b *simtest.Bundle) { b.Advance(time.Minute) },
			want:   map[string]locState{"q": canceled(3, "0.09", locTextPtr("")), "q.SU": canceled(4, "0.04", locTextPtr(""))},
		},
		{
			name: "Reg SHO pair by the base id while still quoting", symbol: "RSSU",
			before: func(t *testing.T, b *simtest.Bundle) {},
			cancel: "q",
			after:  func(t *testing.T, b *simtest.Bundle) { b.Advance(time.Minute) },
			want:   map[string]locState{"q": canceled(3, "0", locTextPtr("")), "q.SU": canceled(4, "0", locTextPtr(""))},
		},
		{
			name: "Reg SHO pair with both sides pending", symbol: "RSDRY",
			before: func(t *testing.T, b *simtest.Bundle) { b.Advance(locSettle) },
			cancel: "q",
			want:   map[string]locState{"q": canceled(3, "0", locTextPtr("")), "q.SU": canceled(4, "0", locTextPtr(""))},
		},
		{
			name: "unknown id is acknowledged", symbol: "HTBX",
			before: func(t *testing.T, b *simtest.Bundle) { b.Advance(locSettle) },
			cancel: "nope",
			want:   map[string]locState{"q": {Status: 65, Type: 1, Shares: 500, Price: "0.015", Text: locTextPtr("")}},
		},
		{
			name: "filled quote stays filled", symbol: "HTBX",
			before:  func(t *testing.T, b *simtest.Bundle) { b.Advance(locSettle); locAccept(t, b, "q") },
			cancel:  "q",
			want:    map[string]locState{"q": {Status: 50, Type: 1, Shares: 500, Filled: 500, Price: "0.015", Text: locTextPtr("")}},
			wantInv: []locInvRow{{AccountID: locAcct, Symbol: "HTBX", Available: 500, LocateType: 1}},
		},
		{
			name: "expired quote stays expired", symbol: "HTBX",
			before: func(t *testing.T, b *simtest.Bundle) { b.Advance(time.Minute) },
			cancel: "q",
			want:   map[string]locState{"q": {Status: 67, Type: 1, Shares: 500, Price: "0.015", Text: locTextPtr("Quote expired.")}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := locSim(t)
			locQuote(t, b, b.Live, locAcct, tc.symbol, 500, "q")
			tc.before(t, b)
			locCancel(t, b, tc.cancel)
			if tc.after != nil {
				tc.after(t, b)
			}
			for id, want := range tc.want {
				locWantRow(t, b, id, want)
			}
			locWantInventory(t, b, tc.wantInv)
		})
	}
}

// TestLocateCreditBack covers the sell rows of "Locate statuses" (48 with
// negative shares, inventory frozen, then cleared and the row gone), the
// "Locate inventory row" fields along the way, and the `Locate Fees`
// credit in the cash ledger ("Cash ledger row").
func TestLocateCreditBack(t *testing.T) {
	t.Parallel()
	b := locSim(t)
	locFilled(t, b, "HTBX", 500, "q1", "q1")
	b.Advance(5 * time.Second) // the fee row

	locSell(t, b, "HTBX", 300, "Locate", "s1")
	locWantRow(t, b, "s1", locState{Status: 48, Type: 1, Shares: -300, Price: "0.015", Text: locTextPtr("")})
	locWantInventory(t, b, []locInvRow{{AccountID: locAcct, Symbol: "HTBX", Available: 0, ToBeSold: 300, Unavailable: 500, LocateType: 1}})

	b.Advance(9 * time.Second)
	locWantRow(t, b, "s1", locState{Status: 48, Type: 1, Shares: -300, Price: "0.015", Text: locTextPtr("")})
	b.Advance(time.Second)
	locWantRow(t, b, "s1", locState{Status: 50, Type: 1, Shares: -300, Filled: -300, Price: "0.015", Text: locTextPtr("")})
	locWantInventory(t, b, []locInvRow{{AccountID: locAcct, Symbol: "HTBX", Available: 200, Sold: 300, LocateType: 1}})

	// IntraDay is the deprecated alias of Locate ("Versioning" rule 4).
	locSell(t, b, "HTBX", 200, "IntraDay", "s2")
	locWantInventory(t, b, []locInvRow{{AccountID: locAcct, Symbol: "HTBX", Available: 0, Sold: 300, ToBeSold: 200, Unavailable: 200, LocateType: 1}})
	b.Advance(10 * time.Second)
	locWantRow(t, b, "s2", locState{Status: 50, Type: 1, Shares: -200, Filled: -200, Price: "0.015", Text: locTextPtr("")})
	locWantInventory(t, b, nil) // nothing left: the row disappears

	var got []string
	for _, f := range locFees(t, b) {
		got = append(got, fmt.Sprintf("deposit %s withdraw %s", f.Deposit, f.Withdraw))
		if f.Deposit.String() != "0" && !strings.Contains(f.Note, "HTBX") {
			t.Errorf("credit note %q does not name the symbol", f.Note)
		}
	}
	want := []string{"deposit 0 withdraw 7.5", "deposit 4.5 withdraw 0", "deposit 3 withdraw 0"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Locate Fees rows (-want +got):\n%s", diff)
	}
}

// TestLocateCreditBackKeepsQuotesOpen checks "Short locates" rule 4: a
// pending credit-back does not block a new quote on the symbol.
func TestLocateCreditBackKeepsQuotesOpen(t *testing.T) {
	t.Parallel()
	b := locSim(t)
	locFilled(t, b, "HTBX", 500, "q1", "q1")
	b.Advance(30 * time.Second) // past the same-symbol spacing
	locSell(t, b, "HTBX", 500, "Locate", "s1")
	locQuote(t, b, b.Live, locAcct, "HTBX", 100, "q2")
	b.Advance(locSettle)
	locWantRow(t, b, "s1", locState{Status: 48, Type: 1, Shares: -500, Price: "0.015", Text: locTextPtr("")})
	locWantRow(t, b, "q2", locState{Status: 65, Type: 1, Shares: 100, Price: "0.015", Text: locTextPtr("")})
}

// TestLocateSellCancel covers the last row of "Locate statuses": cancelling
// a pending sell-back (48 → 52) restores available ("Short locates" rule 6).
func TestLocateSellCancel(t *testing.T) {
	t.Parallel()
	b := locSim(t)
	locFilled(t, b, "HTBX", 500, "q1", "q1")
	locSell(t, b, "HTBX", 300, "Locate", "s1")
	locCancel(t, b, "s1")
	locWantRow(t, b, "s1", locState{Status: 52, Type: 1, Shares: -300, Price: "0.015", Text: locTextPtr("")})
	full := []locInvRow{{AccountID: locAcct, Symbol: "HTBX", Available: 500, LocateType: 1}}
	locWantInventory(t, b, full)
	b.Advance(time.Minute)
	locWantRow(t, b, "s1", locState{Status: 52, Type: 1, Shares: -300, Price: "0.015", Text: locTextPtr("")})
	locWantInventory(t, b, full)
	for _, f := range locFees(t, b) {
		if f.Deposit.String() != "0" {
			t.Errorf("a cancelled credit-back paid %s", f.Deposit)
		}
	}
	// The restored shares can be credited back again.
	locSell(t, b, "HTBX", 500, "Locate", "s2")
	locWantRow(t, b, "s2", locState{Status: 48, Type: 1, Shares: -500, Price: "0.015", Text: locTextPtr("")})
}

// TestLocateCreditBackTypes covers "Locate types" (which /sell string
// credits which row) and the sell rejections of "Locate errors": 16 for
// more than available, an unowned symbol or the wrong type string, R67 for
// odd lots; rejections leave the inventory untouched.
func TestLocateCreditBackTypes(t *testing.T) {
	t.Parallel()
	insufficient := func(qty int64) locState {
		return locState{Status: 56, Error: 16, Shares: -qty, Price: "0", Text: locTextPtr("16 Insufficient shares.")}
	}
	cases := []struct {
		name            string
		symbol, accept  string // quote id q, accepted as accept
		invType         int
		sellSym, typ    string
		qty             int64
		want            locState
		wantLockedTotal bool // inventory frozen by a 48 row
	}{
		{name: "Locate credits type 1", symbol: "HTBX", accept: "q", invType: 1, sellSym: "HTBX", typ: "Locate", qty: 500,
			want: locState{Status: 48, Type: 1, Shares: -500, Price: "0.015", Text: locTextPtr("")}, wantLockedTotal: true},
		{name: "Locate credits type 2", symbol: "HTBY", accept: "q", invType: 2, sellSym: "HTBY", typ: "Locate", qty: 500,
			want: locState{Status: 48, Type: 2, Shares: -500, Price: "0.03", Text: locTextPtr("")}, wantLockedTotal: true},
		{name: "PreBorrow credits type 3", symbol: "RSHO", accept: "q", invType: 3, sellSym: "RSHO", typ: "PreBorrow", qty: 500,
			want: locState{Status: 48, Type: 3, Shares: -500, Price: "0.09", PreBorrow: true, Text: locTextPtr("")}, wantLockedTotal: true},
		{name: "SingleUse never used credits type 4", symbol: "RSHO", accept: "q.SU", invType: 4, sellSym: "RSHO", typ: "SingleUse", qty: 200,
			want: locState{Status: 48, Type: 4, Shares: -200, Price: "0.04", Text: locTextPtr("")}, wantLockedTotal: true},
		{name: "above available (16)", symbol: "HTBX", accept: "q", invType: 1, sellSym: "HTBX", typ: "Locate", qty: 600, want: insufficient(600)},
		{name: "wrong type string PreBorrow on a Locate row (16)", symbol: "HTBX", accept: "q", invType: 1, sellSym: "HTBX", typ: "PreBorrow", qty: 500, want: insufficient(500)},
		{name: "wrong type string SingleUse on a Locate row (16)", symbol: "HTBX", accept: "q", invType: 1, sellSym: "HTBX", typ: "SingleUse", qty: 500, want: insufficient(500)},
		{name: "Unknown matches no row (16)", symbol: "HTBX", accept: "q", invType: 1, sellSym: "HTBX", typ: "Unknown", qty: 500, want: insufficient(500)},
		{name: "PreBorrow on a SingleUse row (16)", symbol: "RSHO", accept: "q.SU", invType: 4, sellSym: "RSHO", typ: "PreBorrow", qty: 500, want: insufficient(500)},
		{name: "symbol not held (16)", symbol: "HTBX", accept: "q", invType: 1, sellSym: "NOINV", typ: "Locate", qty: 500, want: insufficient(500)},
		{name: "odd lot (R67)", symbol: "HTBX", accept: "q", invType: 1, sellSym: "HTBX", typ: "Locate", qty: 150,
			want: locState{Status: 56, Error: 67, Shares: -150, Price: "0", Text: locTextPtr("R67: You can only offer for credit in lots of 100")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := locSim(t)
			locFilled(t, b, tc.symbol, 500, "q", tc.accept)
			locSell(t, b, tc.sellSym, tc.qty, tc.typ, "s")
			locWantRow(t, b, "s", tc.want)
			inv := locInvRow{AccountID: locAcct, Symbol: tc.symbol, Available: 500, LocateType: tc.invType}
			if tc.wantLockedTotal {
				inv.Available, inv.ToBeSold, inv.Unavailable = 0, tc.qty, 500
			}
			locWantInventory(t, b, []locInvRow{inv})
		})
	}
}

// TestLocateAcceptIdempotent checks "Short locates" rule 3: accept always
// answers 200, and re-sending it neither duplicates inventory nor fees.
func TestLocateAcceptIdempotent(t *testing.T) {
	t.Parallel()
	b := locSim(t)
	locQuote(t, b, b.Live, locAcct, "HTBX", 500, "q1")
	locAccept(t, b, "q1") // still quoting: nothing to accept yet
	locWantRow(t, b, "q1", locState{Status: 81, Shares: 500, Price: "0"})
	b.Advance(locSettle)
	locAccept(t, b, "q1")
	locAccept(t, b, "q1")
	b.Advance(time.Second)
	locAccept(t, b, "q1")
	locAccept(t, b, "never-quoted")
	// Another account of the same key does not own q1.
	locWrite(t, b, b.Live, "POST", "/v1/api/accounts/locates/accept",
		map[string]any{"accountId": "LV100002", "quoteReqID": "q1"}, "locateAcceptSent")
	locWantInventory(t, b, []locInvRow{{AccountID: locAcct, Symbol: "HTBX", Available: 500, LocateType: 1}})
	b.Advance(10 * time.Second)
	if fees := locFees(t, b); len(fees) != 1 {
		t.Errorf("fee rows %+v, want one", fees)
	}
}

// TestLocateSyncErrors covers the synchronous 400s of "Locate errors" and
// their content types ("HTTP status map": clients branch on Content-Type);
// none of them leaves a history row.
func TestLocateSyncErrors(t *testing.T) {
	t.Parallel()
	b := locSim(t)
	const (
		quote  = "/v1/api/accounts/locates/quote"
		accept = "/v1/api/accounts/locates/accept"
		sell   = "/v1/api/accounts/locates/sell"
		cancel = "/v1/api/accounts/locates/cancel/accounts/"
	)
	const (
		problem  = "problem"
		mismatch = "mismatch"
		lines    = "lines"
	)
	q := func(qty any) string {
		return fmt.Sprintf(`{"account":"LV100001","symbol":"HTBX","quantity":%v,"quoteReqID":"x"}`, qty)
	}
	s := func(qty any) string {
		return fmt.Sprintf(`{"account":"LV100001","symbol":"HTBX","quantity":%v,"locateType":"Locate","quoteReqID":"x"}`, qty)
	}
	typeLine := `- locateType: locateType must be one of the following: "Unknown", "Locate", "IntraDay", "PreBorrow", "SingleUse"`
	cases := []struct {
		name         string
		key          simtest.Key
		method, path string
		body         string
		kind         string
		text         string // exact body for lines
	}{
		{name: "quote quantity 0", path: quote, body: q(0), kind: problem},
		{name: "quote quantity 99", path: quote, body: q(99), kind: problem},
		{name: "quote negative quantity", path: quote, body: q(-100), kind: problem},
		{name: "quote quantity above 2147483647", path: quote, body: q(2147483648), kind: problem},
		{name: "quote huge quantity", path: quote, body: q("99999999999999999999999"), kind: problem},
		{name: "quote fractional quantity", path: quote, body: q(100.5), kind: problem},
		{name: "quote quantity as a string", path: quote, body: q(`"500"`), kind: problem},
		{name: "quote without quantity", path: quote, body: `{"account":"LV100001","symbol":"HTBX","quoteReqID":"x"}`, kind: problem},
		{name: "quote without account", path: quote, body: `{"symbol":"HTBX","quantity":500,"quoteReqID":"x"}`, kind: mismatch},
		{name: "quote paper account with a live key", path: quote, body: `{"account":"PP200001","symbol":"HTBX","quantity":500,"quoteReqID":"x"}`, kind: mismatch},
		{name: "quote live account with a paper key", key: b.Paper, path: quote, body: q(500), kind: mismatch},
		{name: "quote another key's account", path: quote, body: `{"account":"LV300001","symbol":"HTBX","quantity":500,"quoteReqID":"x"}`, kind: mismatch},
		{name: "quote without credentials", key: simtest.Key{ID: "none"}, path: quote, body: q(500), kind: mismatch},
		{name: "quote without quoteReqID", path: quote, body: `{"account":"LV100001","symbol":"HTBX","quantity":500}`, kind: lines, text: "- (root): quoteReqID is required"},
		{name: "quote malformed JSON", path: quote, body: `{"account":`, kind: lines},
		{name: "accept empty body object", path: accept, body: `{}`, kind: lines,
			text: "- (root): accountId is required\n- (root): quoteReqID is required"},
		{name: "accept with account instead of accountId", path: accept, body: `{"account":"LV100001","quoteReqID":"x"}`, kind: lines,
			text: "- (root): accountId is required"},
		{name: "accept without quoteReqID", path: accept, body: `{"accountId":"LV100001"}`, kind: lines, text: "- (root): quoteReqID is required"},
		{name: "accept another key's account", path: accept, body: `{"accountId":"LV300001","quoteReqID":"x"}`, kind: mismatch},
		{name: "accept malformed JSON", path: accept, body: `nope`, kind: lines},
		{name: "sell empty body object", path: sell, body: `{}`, kind: lines,
			text: "- (root): account is required\n- (root): symbol is required\n- (root): quantity is required\n- (root): locateType is required\n- (root): quoteReqID is required"},
		{name: "sell unknown locateType", path: sell, body: `{"account":"LV100001","symbol":"HTBX","quantity":500,"locateType":"Borrow","quoteReqID":"x"}`, kind: lines, text: typeLine},
		{name: "sell numeric locateType", path: sell, body: `{"account":"LV100001","symbol":"HTBX","quantity":500,"locateType":1,"quoteReqID":"x"}`, kind: lines, text: typeLine},
		{name: "sell lower-case locateType", path: sell, body: `{"account":"LV100001","symbol":"HTBX","quantity":500,"locateType":"locate","quoteReqID":"x"}`, kind: lines, text: typeLine},
		{name: "sell quantity 50", path: sell, body: s(50), kind: problem},
		{name: "sell quantity 0", path: sell, body: s(0), kind: problem},
		{name: "sell quantity above 2147483647", path: sell, body: s(2147483648), kind: problem},
		{name: "sell another key's account", path: sell, body: `{"account":"LV300001","symbol":"HTBX","quantity":500,"locateType":"Locate","quoteReqID":"x"}`, kind: mismatch},
		{name: "cancel another key's account", method: "DELETE", path: cancel + "LV300001/quoteReqID/x", kind: mismatch},
		{name: "cancel live account with a paper key", key: b.Paper, method: "DELETE", path: cancel + "LV100001/quoteReqID/x", kind: mismatch},
		{name: "cancel without credentials", key: simtest.Key{ID: "none"}, method: "DELETE", path: cancel + "LV100001/quoteReqID/x", kind: mismatch},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key := tc.key
			switch {
			case key.ID == "none":
				key = simtest.Key{}
			case key.ID == "":
				key = b.Live
			}
			method := tc.method
			if method == "" {
				method = "POST"
			}
			var body any
			if tc.body != "" {
				body = tc.body
			}
			r := b.Do(t, key, method, tc.path, body)
			if r.Status != http.StatusBadRequest {
				t.Fatalf("status %d, want 400 (body %q)", r.Status, r.Body)
			}
			ct := r.Header.Get("Content-Type")
			switch tc.kind {
			case problem:
				if !strings.HasPrefix(ct, "application/problem+json") {
					t.Errorf("content type %q, want application/problem+json", ct)
				}
				var pd struct {
					Errors  map[string][]string `json:"errors"`
					Type    string              `json:"type"`
					Title   string              `json:"title"`
					Status  int                 `json:"status"`
					TraceID string              `json:"traceId"`
				}
				r.JSON(t, &pd)
				if len(pd.Errors["Quantity"]) == 0 || pd.Status != 400 || pd.Type == "" || pd.Title == "" || pd.TraceID == "" {
					t.Errorf("ProblemDetails %+v: want errors.Quantity, type, title, status 400, traceId", pd)
				}
			case mismatch:
				if !strings.HasPrefix(ct, "application/json") {
					t.Errorf("content type %q, want application/json", ct)
				}
				var e map[string]json.RawMessage
				r.JSON(t, &e)
				if string(e["statusCode"]) != `"BadRequest"` || len(e["message"]) < 3 || string(e["detail"]) != "null" {
					t.Errorf("body %s: want statusCode BadRequest, a message and detail null", r.Body)
				}
			case lines:
				if !strings.HasPrefix(ct, "text/plain") {
					t.Errorf("content type %q, want text/plain", ct)
				}
				if tc.text != "" && string(r.Body) != tc.text {
					t.Errorf("body %q, want %q", r.Body, tc.text)
				}
				if !strings.HasPrefix(string(r.Body), "- ") {
					t.Errorf("body %q: want \"- <field>: <message>\" lines", r.Body)
				}
			}
		})
	}
	if rows := locHistory(t, b, b.Live, locAcct); len(rows) != 0 {
		t.Errorf("synchronous errors left history rows: %+v", rows)
	}
}

// TestLocateQuantityBounds checks the accepted edges of "Locate limits":
// 100 and the largest multiple of 100 not above 2147483647 are queued.
func TestLocateQuantityBounds(t *testing.T) {
	t.Parallel()
	b := locSim(t)
	locQuote(t, b, b.Live, locAcct, "HTBX", 100, "low")
	locQuote(t, b, b.Live, locAcct, "HTBY", 2147483600, "high")
	b.Advance(locSettle)
	locWantRow(t, b, "low", locState{Status: 65, Type: 1, Shares: 100, Price: "0.015", Text: locTextPtr("")})
	locWantRow(t, b, "high", locState{Status: 56, Error: 11, Shares: 2147483600, Price: "0", Text: locTextPtr("11 No shares available. Please try again later.")})
}

// TestLocatePaper covers the locate row of "Paper versus live": inventory is
// a bare empty array, easy-to-borrow is always true.
func TestLocatePaper(t *testing.T) {
	t.Parallel()
	b := locSim(t)
	r := b.Do(t, b.Paper, "GET", "/v1/api/accounts/PP200001/locates/inventory", nil)
	if r.Status != http.StatusOK || string(r.Body) != "[]" || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Errorf("paper inventory: %d %q %q, want 200 [] JSON", r.Status, r.Header.Get("Content-Type"), r.Body)
	}
	for _, sym := range []string{"NOINV", "HTBX", "aapl", "RSDRY"} {
		r := b.Do(t, b.Paper, "GET", "/v1/api/accounts/PP200001/is-easy-to-borrow/symbol/"+sym, nil)
		if string(r.Body) != `{"isEasyToBorrow":true}` {
			t.Errorf("paper easy-to-borrow %s: %s", sym, r.Body)
		}
	}
}

// TestLocateEasyToBorrow checks "Orders" rule 6: an exact, case-sensitive
// match against the platform list; anything else is false.
func TestLocateEasyToBorrow(t *testing.T) {
	t.Parallel()
	b := locSim(t)
	cases := []struct {
		symbol string
		want   bool
	}{
		{"AAPL", true}, {"MSFT", true}, {"SPY", true},
		{"aapl", false}, {"AAPL.", false}, {"HTBX", false}, {"RSHO", false}, {"NOINV", false},
	}
	for _, tc := range cases {
		t.Run(tc.symbol, func(t *testing.T) {
			r := b.Do(t, b.Live, "GET", "/v1/api/accounts/"+locAcct+"/is-easy-to-borrow/symbol/"+tc.symbol, nil)
			var got struct {
				IsEasyToBorrow *bool `json:"isEasyToBorrow"`
			}
			r.JSON(t, &got)
			if r.Status != http.StatusOK || got.IsEasyToBorrow == nil || *got.IsEasyToBorrow != tc.want {
				t.Errorf("status %d body %s, want isEasyToBorrow %v", r.Status, r.Body, tc.want)
			}
		})
	}
}

// TestLocateHistoryTradingDay checks the "Short locates" endpoint table:
// history holds the current trading day only, oldest first.
func TestLocateHistoryTradingDay(t *testing.T) {
	t.Parallel()
	b := locSim(t)
	locQuote(t, b, b.Live, locAcct, "HTBX", 100, "a")
	b.Advance(time.Second)
	locQuote(t, b, b.Live, locAcct, "HTBY", 100, "b")
	var ids []string
	for _, r := range locHistory(t, b, b.Live, locAcct) {
		ids = append(ids, r.QuoteReqID)
	}
	if !slices.Equal(ids, []string{"a", "b"}) {
		t.Errorf("history %v, want a then b", ids)
	}
	if rows := locHistory(t, b, b.Live, "LV100002"); len(rows) != 0 {
		t.Errorf("another account's history shows %+v", rows)
	}
	b.Advance(24 * time.Hour)
	if rows := locHistory(t, b, b.Live, locAcct); len(rows) != 0 {
		t.Errorf("next trading day still shows %+v", rows)
	}
}

// TestLocateQuoteRateLimit checks the quote row of "Rate limits" (1 per
// second, burst 1: 429 with an empty body) with the default scenario's
// limits on, and "Locate limits": a same-symbol quote inside the spacing is
// a 200 and a later history rejection, never a 429.
func TestLocateQuoteRateLimit(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	locQuote(t, b, b.Live, locAcct, "HTBX", 100, "q1")
	r := b.Do(t, b.Live, "POST", "/v1/api/accounts/locates/quote",
		map[string]any{"account": locAcct, "symbol": "HTBY", "quantity": 100, "quoteReqID": "q2"})
	if r.Status != http.StatusTooManyRequests || len(r.Body) != 0 {
		t.Fatalf("second immediate quote: %d %q, want 429 with an empty body", r.Status, r.Body)
	}
	b.Advance(time.Second)
	locQuote(t, b, b.Live, locAcct, "HTBY", 100, "q2")
	b.Advance(time.Second)
	locQuote(t, b, b.Live, locAcct, "HTBX", 100, "q3")
	b.Advance(locSettle)
	ids := map[string]int{}
	for _, row := range locHistory(t, b, b.Live, locAcct) {
		ids[row.QuoteReqID] = row.LocateStatus
	}
	if diff := cmp.Diff(map[string]int{"q1": 65, "q2": 65, "q3": 56}, ids); diff != "" {
		t.Errorf("statuses by id (-want +got):\n%s", diff)
	}
}

// locOrder places a market equity order on SMART and lets it settle,
// returning the order's final status.
func locOrder(t *testing.T, b *simtest.Bundle, symbol, side, openClose string, qty int64, id string) string {
	t.Helper()
	r := b.Do(t, b.Live, "POST", "/v1/api/accounts/"+locAcct+"/order", map[string]any{
		"clientOrderId": id, "symbol": symbol, "side": side, "openClose": openClose, "orderType": "Market",
		"securityType": "Stock", "timeInForce": "Day", "orderQuantity": qty, "route": "SMART",
	})
	if r.Status != http.StatusOK {
		t.Fatalf("order %s: %d %q", id, r.Status, r.Body)
	}
	b.Advance(time.Second)
	var o struct {
		OrderStatus string `json:"orderStatus"`
	}
	locGet(t, b, b.Live, "/v1/api/accounts/"+locAcct+"/order/"+id, &o)
	return o.OrderStatus
}

// TestLocateShortSale covers the inventory side of shorting ("Locate
// inventory row": size shorts from available, unavailable counts shares tied
// to open shorts; "Locate types": Locate and PreBorrow are credited back in
// full unless tied to an open short, even after a covered short; SingleUse
// only if never used to open a short, and not reusable once covered).
func TestLocateShortSale(t *testing.T) {
	t.Parallel()
	inv := func(sym string, typ int, avail, sold, unavail int64) []locInvRow {
		return []locInvRow{{AccountID: locAcct, Symbol: sym, Available: avail, Sold: sold, Unavailable: unavail, LocateType: typ}}
	}
	t.Run("no locate, no short", func(t *testing.T) {
		t.Parallel()
		b := locSim(t)
		if st := locOrder(t, b, "HTBX", "Sell", "Open", 100, "short"); st != "Rejected" {
			t.Errorf("short without a locate: %s, want Rejected", st)
		}
	})
	t.Run("Locate shares tied to a short, then reusable", func(t *testing.T) {
		t.Parallel()
		b := locSim(t)
		locFilled(t, b, "HTBX", 500, "q", "q")
		if st := locOrder(t, b, "HTBX", "Sell", "Open", 300, "short"); st != "Filled" {
			t.Fatalf("short: %s", st)
		}
		locWantInventory(t, b, inv("HTBX", 1, 200, 0, 300))
		if st := locOrder(t, b, "HTBX", "Sell", "Open", 300, "short2"); st != "Rejected" {
			t.Errorf("short above available: %s, want Rejected", st)
		}
		locSell(t, b, "HTBX", 300, "Locate", "s-tied")
		locWantRow(t, b, "s-tied", locState{Status: 56, Error: 16, Shares: -300, Price: "0", Text: locTextPtr("16 Insufficient shares.")})
		locSell(t, b, "HTBX", 200, "Locate", "s-free")
		locWantInventory(t, b, []locInvRow{{AccountID: locAcct, Symbol: "HTBX", ToBeSold: 200, Unavailable: 500, LocateType: 1}})
		b.Advance(10 * time.Second)
		locWantInventory(t, b, inv("HTBX", 1, 0, 200, 300))
		if st := locOrder(t, b, "HTBX", "Buy", "Close", 300, "cover"); st != "Filled" {
			t.Fatalf("cover: %s", st)
		}
		locWantInventory(t, b, inv("HTBX", 1, 300, 200, 0))
		locSell(t, b, "HTBX", 300, "Locate", "s-after")
		b.Advance(10 * time.Second)
		locWantRow(t, b, "s-after", locState{Status: 50, Type: 1, Shares: -300, Filled: -300, Price: "0.015", Text: locTextPtr("")})
		locWantInventory(t, b, nil)
	})
	t.Run("SingleUse used for a short", func(t *testing.T) {
		t.Parallel()
		b := locSim(t)
		locFilled(t, b, "RSHO", 500, "q", "q.SU")
		if st := locOrder(t, b, "RSHO", "Sell", "Open", 100, "short"); st != "Filled" {
			t.Fatalf("short: %s", st)
		}
		locWantInventory(t, b, inv("RSHO", 4, 400, 0, 100))
		locSell(t, b, "RSHO", 400, "SingleUse", "s-used")
		locWantRow(t, b, "s-used", locState{Status: 56, Error: 16, Shares: -400, Price: "0", Text: locTextPtr("16 Insufficient shares.")})
		if st := locOrder(t, b, "RSHO", "Buy", "Close", 100, "cover"); st != "Filled" {
			t.Fatalf("cover: %s", st)
		}
		// The covered SingleUse shares are spent; the untouched 400 remain.
		locWantInventory(t, b, inv("RSHO", 4, 400, 0, 0))
	})
}

// TestLocateFloatPrices: with FloatPrices the broker writes locatePrice as
// a float it computed (this simulator's choice where the spec shows only
// JSON numbers): the shortest text of the nearest float64, or of the one
// an ulp above it, and never anything but those two; the fee charged is
// still the exact price.
func TestLocateFloatPrices(t *testing.T) {
	t.Parallel()
	b := simtest.New(t, simtest.WithScenario(func(sc *brokersim.Scenario) {
		sc.RateLimits = false
		sc.FloatPrices = true
		for i := range sc.Pools {
			if sc.Pools[i].Symbol == "HTBX" {
				sc.Pools[i].Price = brokersim.Dec(decimal.RequireFromString("0.013"))
			}
		}
	}))
	seen := map[string]bool{}
	for i := range 12 {
		id := fmt.Sprintf("f%d", i)
		locQuote(t, b, b.Live, locAcct, "HTBX", 100, id)
		b.Advance(locSettle)
		p := locRow(t, b, id).LocatePrice.String()
		if p != "0.013" && p != "0.013000000000000001" {
			t.Fatalf("quote %s: locatePrice %s, want 0.013 or 0.013000000000000001", id, p)
		}
		seen[p] = true
		if i == 0 {
			locAccept(t, b, id)
		} else {
			locCancel(t, b, id)
		}
		b.Advance(30 * time.Second)
	}
	if len(seen) != 2 {
		t.Errorf("12 quotes wrote only %v: want both texts", seen)
	}
	fees := locFees(t, b)
	if len(fees) != 1 || fees[0].Withdraw.String() != "1.3" {
		t.Errorf("fee rows %+v, want one of 1.30 (100 × 0.013)", fees)
	}
}
