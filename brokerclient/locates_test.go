package brokerclient_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/simtest"
)

// ---- helpers shared by the locate, ledger, pacing and retry tests ----

// loggedRequests returns the simulator's log entries for method whose path
// contains substr, oldest first.
func loggedRequests(b *simtest.Bundle, method, substr string) []brokersim.RequestRecord {
	var out []brokersim.RequestRecord
	for _, r := range b.Sim.Requests() {
		if r.Method == method && strings.Contains(r.Path, substr) {
			out = append(out, r)
		}
	}
	return out
}

// goldenClient serves testdata payloads, by ServeMux pattern, on an
// httptest server and returns a client of it: the recorded-fixture side of
// the suite, next to the simulator.
func payloadClient(t *testing.T, routes map[string]string) *brokerclient.Client {
	t.Helper()
	mux := http.NewServeMux()
	for pattern, file := range routes {
		body, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.Write(body)
		})
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c, err := brokerclient.NewClient(brokerclient.WithBaseURL(srv.URL), brokerclient.WithCredentials("GOLDEN", "golden-secret"),
		brokerclient.WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// rowByID finds the history row with quoteReqID id.
func locRow(t *testing.T, rows []brokerclient.HistoryRow, id string) brokerclient.HistoryRow {
	t.Helper()
	for _, r := range rows {
		if r.QuoteReqID == id {
			return r
		}
	}
	t.Fatalf("no history row %q among %d rows", id, len(rows))
	return brokerclient.HistoryRow{}
}

// history reads the account's locate history, failing the test on error.
func locHistory(t *testing.T, c *brokerclient.Client, account string) []brokerclient.HistoryRow {
	t.Helper()
	rows, _, err := c.Locates.History(t.Context(), account)
	if err != nil {
		t.Fatalf("history: %v", err)
	}
	return rows
}

// inventory reads the account's locate inventory, failing the test on error.
func locInventory(t *testing.T, c *brokerclient.Client, account string) []brokerclient.InventoryRow {
	t.Helper()
	rows, _, err := c.Locates.Inventory(t.Context(), account)
	if err != nil {
		t.Fatalf("inventory: %v", err)
	}
	return rows
}

// bodyOf decodes a logged JSON request body.
func loggedBody(t *testing.T, r brokersim.RequestRecord) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(r.Body))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("%s %s body %q: %v", r.Method, r.Path, r.Body, err)
	}
	return m
}

func textp(s string) *string { return &s }

func mustDec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func mustParseTime(t *testing.T, s string) brokerclient.Time {
	t.Helper()
	v, err := brokerclient.ParseTime(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// ---- validation ----

// Spec: Limits, "Locate limits" (quantity 100..2147483647, multiple of 100);
// Orders rule 6 (exact uppercase symbols; "." is a router 404); Short locates
// ("quoteReqID", ".SU", the five locateType strings). Bad input is refused
// before the wire: the simulator's request log stays empty.
func TestLocateValidationSendsNothing(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	c := b.Client(t, b.Live)
	ok := brokerclient.QuoteRequest{Account: "LV100001", Symbol: "HTBX", Quantity: 500}
	quote := func(edit func(*brokerclient.QuoteRequest)) func(context.Context) error {
		return func(ctx context.Context) error {
			r := ok
			edit(&r)
			_, _, err := c.Locates.Quote(ctx, r)
			return err
		}
	}
	okSell := brokerclient.SellRequest{Account: "LV100001", Symbol: "HTBX", Quantity: 100, LocateType: brokercode.LocateTypeLocate}
	sell := func(edit func(*brokerclient.SellRequest)) func(context.Context) error {
		return func(ctx context.Context) error {
			r := okSell
			edit(&r)
			_, _, err := c.Locates.Sell(ctx, r)
			return err
		}
	}
	cases := []struct {
		name  string
		field string
		call  func(context.Context) error
	}{
		{"quote: empty account", "account", quote(func(r *brokerclient.QuoteRequest) { r.Account = "" })},
		{"quote: account with a slash", "account", quote(func(r *brokerclient.QuoteRequest) { r.Account = "LV1/2" })},
		{"quote: empty symbol", "symbol", quote(func(r *brokerclient.QuoteRequest) { r.Symbol = "" })},
		{"quote: lowercase symbol", "symbol", quote(func(r *brokerclient.QuoteRequest) { r.Symbol = "htbx" })},
		{"quote: mixed-case symbol", "symbol", quote(func(r *brokerclient.QuoteRequest) { r.Symbol = "Htbx" })},
		{"quote: symbol with a slash", "symbol", quote(func(r *brokerclient.QuoteRequest) { r.Symbol = "HT/BX" })},
		{"quote: symbol with a question mark", "symbol", quote(func(r *brokerclient.QuoteRequest) { r.Symbol = "HTBX?" })},
		{"quote: symbol with a hash", "symbol", quote(func(r *brokerclient.QuoteRequest) { r.Symbol = "HT#X" })},
		{"quote: symbol with a percent", "symbol", quote(func(r *brokerclient.QuoteRequest) { r.Symbol = "HT%20X" })},
		{"quote: symbol with a space", "symbol", quote(func(r *brokerclient.QuoteRequest) { r.Symbol = "HT BX" })},
		{"quote: symbol with a tab", "symbol", quote(func(r *brokerclient.QuoteRequest) { r.Symbol = "HTBX\t" })},
		{"quote: a lone dot", "symbol", quote(func(r *brokerclient.QuoteRequest) { r.Symbol = "." })},
		// The one symbol rule (brokercode.ValidateSymbol) is stricter than
		// the client's old one where the spec is silent: these were sent.
		{"quote: symbol starting with a digit", "symbol", quote(func(r *brokerclient.QuoteRequest) { r.Symbol = "1HTB" })},
		{"quote: doubled dot", "symbol", quote(func(r *brokerclient.QuoteRequest) { r.Symbol = "HT..BX" })},
		{"quote: trailing hyphen", "symbol", quote(func(r *brokerclient.QuoteRequest) { r.Symbol = "HTBX-" })},
		{"quote: symbol with a plus", "symbol", quote(func(r *brokerclient.QuoteRequest) { r.Symbol = "HT+BX" })},
		{"quote: 31-character symbol", "symbol", quote(func(r *brokerclient.QuoteRequest) { r.Symbol = strings.Repeat("H", 31) })},
		{"quote: quantity 0", "quantity", quote(func(r *brokerclient.QuoteRequest) { r.Quantity = 0 })},
		{"quote: quantity 99", "quantity", quote(func(r *brokerclient.QuoteRequest) { r.Quantity = 99 })},
		{"quote: quantity -100", "quantity", quote(func(r *brokerclient.QuoteRequest) { r.Quantity = -100 })},
		{"quote: quantity 150, not a lot of 100", "quantity", quote(func(r *brokerclient.QuoteRequest) { r.Quantity = 150 })},
		{"quote: quantity above 2147483647", "quantity", quote(func(r *brokerclient.QuoteRequest) { r.Quantity = 2147483700 })},
		{"quote: quoteReqID with a slash", "quoteReqID", quote(func(r *brokerclient.QuoteRequest) { r.QuoteReqID = "a/b" })},
		{"quote: quoteReqID ending .SU", "quoteReqID", quote(func(r *brokerclient.QuoteRequest) { r.QuoteReqID = "q-1.SU" })},
		{"sell: wrong-case locate type", "locateType", sell(func(r *brokerclient.SellRequest) { r.LocateType = "Intraday" })},
		{"sell: numeric locate type", "locateType", sell(func(r *brokerclient.SellRequest) { r.LocateType = "1" })},
		{"sell: missing locate type", "locateType", sell(func(r *brokerclient.SellRequest) { r.LocateType = "" })},
		{"sell: quantity 50", "quantity", sell(func(r *brokerclient.SellRequest) { r.Quantity = 50 })},
		{"sell: quantity 250", "quantity", sell(func(r *brokerclient.SellRequest) { r.Quantity = 250 })},
		{"sell: empty symbol", "symbol", sell(func(r *brokerclient.SellRequest) { r.Symbol = "" })},
		{"sell: empty account", "account", sell(func(r *brokerclient.SellRequest) { r.Account = "" })},
		{"sell: quoteReqID ending .SU", "quoteReqID", sell(func(r *brokerclient.SellRequest) { r.QuoteReqID = "s.SU" })},
		{"accept: empty account", "accountId", func(ctx context.Context) error {
			_, _, err := c.Locates.Accept(ctx, "", "q-1")
			return err
		}},
		{"accept: empty id", "quoteReqID", func(ctx context.Context) error {
			_, _, err := c.Locates.Accept(ctx, "LV100001", "")
			return err
		}},
		{"accept: id with a slash", "quoteReqID", func(ctx context.Context) error {
			_, _, err := c.Locates.Accept(ctx, "LV100001", "../q")
			return err
		}},
		{"cancel: empty id", "quoteReqID", func(ctx context.Context) error {
			_, _, err := c.Locates.Cancel(ctx, "LV100001", "")
			return err
		}},
		{"cancel: id with a slash", "quoteReqID", func(ctx context.Context) error {
			_, _, err := c.Locates.Cancel(ctx, "LV100001", "q/1")
			return err
		}},
		{"cancel: account with a space", "accountId", func(ctx context.Context) error {
			_, _, err := c.Locates.Cancel(ctx, "LV 100001", "q-1")
			return err
		}},
		{"inventory: empty account", "accountId", func(ctx context.Context) error {
			_, _, err := c.Locates.Inventory(ctx, "")
			return err
		}},
		{"history: account with a question mark", "accountId", func(ctx context.Context) error {
			_, _, err := c.Locates.History(ctx, "LV100001?x=1")
			return err
		}},
		{"resolve: empty id", "quoteReqID", func(ctx context.Context) error {
			_, _, err := c.Locates.ResolveQuote(ctx, "LV100001", "")
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call(t.Context())
			if !errors.Is(err, brokercode.ErrInput) {
				t.Fatalf("err = %v, want ErrInput", err)
			}
			var ie *brokercode.InputError
			if !errors.As(err, &ie) || ie.Field != tc.field {
				t.Errorf("err = %#v, want an *InputError on %q", err, tc.field)
			}
		})
	}
	if reqs := b.Sim.Requests(); len(reqs) != 0 {
		t.Errorf("validation sent %d requests, want none: %+v", len(reqs), reqs)
	}
}

// ---- wire shape of each method ----

// Spec: Endpoints, "Short locates": the account field is "account" on quote
// and sell, "accountId" on accept, a path segment on cancel; "Send only the
// documented fields"; every write answers a string-valued ack.
func TestLocateWriteRequests(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	b.RunClock(t)
	c := b.Client(t, b.Live)
	ctx := t.Context()
	keys := func(m map[string]any) []string {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return ks
	}

	t.Run("quote", func(t *testing.T) {
		ack, _, err := c.Locates.Quote(ctx, brokerclient.QuoteRequest{Account: "LV100001", Symbol: "HTBX", Quantity: 500, QuoteReqID: "q-wire-1"})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(&brokerclient.Ack{QuoteReqID: "q-wire-1", Sent: true}, ack); diff != "" {
			t.Errorf("ack (-want +got):\n%s", diff)
		}
		reqs := loggedRequests(b, "POST", "/v1/api/accounts/locates/quote")
		if len(reqs) != 1 {
			t.Fatalf("%d quote requests, want 1", len(reqs))
		}
		body := loggedBody(t, reqs[0])
		if diff := cmp.Diff([]string{"account", "quantity", "quoteReqID", "symbol"}, keys(body)); diff != "" {
			t.Errorf("quote body keys (-want +got):\n%s", diff)
		}
		want := map[string]any{"account": "LV100001", "symbol": "HTBX", "quantity": json.Number("500"), "quoteReqID": "q-wire-1"}
		if diff := cmp.Diff(want, body); diff != "" {
			t.Errorf("quote body (-want +got):\n%s", diff)
		}
	})

	t.Run("quote generates a uuid id when empty", func(t *testing.T) {
		ack, _, err := c.Locates.Quote(ctx, brokerclient.QuoteRequest{Account: "LV100001", Symbol: "HTBY", Quantity: 100})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := uuid.Parse(ack.QuoteReqID); err != nil {
			t.Errorf("generated id %q is not a uuid: %v", ack.QuoteReqID, err)
		}
		reqs := loggedRequests(b, "POST", "/v1/api/accounts/locates/quote")
		if got := loggedBody(t, reqs[len(reqs)-1])["quoteReqID"]; got != ack.QuoteReqID {
			t.Errorf("sent quoteReqID %v, ack says %q", got, ack.QuoteReqID)
		}
	})

	t.Run("accept", func(t *testing.T) {
		ack, _, err := c.Locates.Accept(ctx, "LV100001", "q-wire-1")
		if err != nil {
			t.Fatal(err)
		}
		if !ack.Sent || ack.QuoteReqID != "q-wire-1" {
			t.Errorf("ack = %+v", ack)
		}
		reqs := loggedRequests(b, "POST", "/v1/api/accounts/locates/accept")
		want := map[string]any{"accountId": "LV100001", "quoteReqID": "q-wire-1"}
		if diff := cmp.Diff(want, loggedBody(t, reqs[len(reqs)-1])); diff != "" {
			t.Errorf("accept body (-want +got):\n%s", diff)
		}
	})

	t.Run("sell", func(t *testing.T) {
		ack, _, err := c.Locates.Sell(ctx, brokerclient.SellRequest{Account: "LV100001", Symbol: "HTBX", Quantity: 200, LocateType: brokercode.LocateTypePreBorrow})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := uuid.Parse(ack.QuoteReqID); err != nil || !ack.Sent {
			t.Errorf("ack = %+v: want Sent and a fresh uuid id (%v)", ack, err)
		}
		reqs := loggedRequests(b, "POST", "/v1/api/accounts/locates/sell")
		body := loggedBody(t, reqs[len(reqs)-1])
		want := map[string]any{"account": "LV100001", "symbol": "HTBX", "quantity": json.Number("200"), "locateType": "PreBorrow", "quoteReqID": ack.QuoteReqID}
		if diff := cmp.Diff(want, body); diff != "" {
			t.Errorf("sell body (-want +got):\n%s", diff)
		}
	})

	t.Run("cancel", func(t *testing.T) {
		ack, _, err := c.Locates.Cancel(ctx, "LV100001", "q-wire-1.SU")
		if err != nil {
			t.Fatal(err)
		}
		if !ack.Sent {
			t.Errorf("ack = %+v", ack)
		}
		reqs := loggedRequests(b, "DELETE", "/v1/api/accounts/locates/cancel/")
		if len(reqs) != 1 {
			t.Fatalf("%d cancel requests, want 1", len(reqs))
		}
		if want := "/v1/api/accounts/locates/cancel/accounts/LV100001/quoteReqID/q-wire-1.SU"; reqs[0].Path != want || reqs[0].Body != "" {
			t.Errorf("cancel sent %s with body %q, want %s and no body", reqs[0].Path, reqs[0].Body, want)
		}
	})
}

// ---- workflows against the simulator ----

// Spec: States, "Locate statuses" (none → 81 Quoting → 65 Offered → accept →
// 50 Filled, "symbol appears in inventory with available equal to the
// shares"); "Locate history row" (text null while Quoting, "" once Offered,
// price 0 until Offered); Short locates rule 1.
func TestLocateQuoteOfferAcceptInventory(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	b.RunClock(t)
	c := b.Client(t, b.Live)
	ctx := t.Context()

	ack, _, err := c.Locates.Quote(ctx, brokerclient.QuoteRequest{Account: "LV100001", Symbol: "HTBX", Quantity: 500})
	if err != nil {
		t.Fatal(err)
	}
	id := ack.QuoteReqID

	row := locRow(t, locHistory(t, c, "LV100001"), id)
	if row.LocateStatus != brokercode.LocateStatusQuoting || row.Text != nil || !row.LocatePrice.IsZero() {
		t.Fatalf("fresh quote row = %+v; want Quoting, null text, price 0", row)
	}

	b.Advance(3 * time.Second) // the spec's 1.5 to 3 s settle
	row = locRow(t, locHistory(t, c, "LV100001"), id)
	want := brokerclient.HistoryRow{
		AccountID: "LV100001", Symbol: "HTBX", QuoteReqID: id, LocateShares: 500,
		LocateStatus: brokercode.LocateStatusOffered, LocateType: 1, LocatePrice: mustDec("0.015"),
		Text: textp(""), CreatedDate: row.CreatedDate, UpdatedDate: row.UpdatedDate,
	}
	if diff := cmp.Diff(want, row); diff != "" {
		t.Fatalf("offered row (-want +got):\n%s", diff)
	}
	if row.Type() != brokercode.LocateTypeLocate || row.LocateStatus.IsTerminal() || row.ErrorFamily() != brokerclient.ErrorFamilyNone {
		t.Errorf("offered row helpers: type %s terminal %v family %v", row.Type(), row.LocateStatus.IsTerminal(), row.ErrorFamily())
	}
	if !row.UpdatedDate.After(row.CreatedDate.Time) {
		t.Errorf("updatedDate %v not after createdDate %v", row.UpdatedDate, row.CreatedDate)
	}

	if _, _, err := c.Locates.Accept(ctx, "LV100001", id); err != nil {
		t.Fatal(err)
	}
	row = locRow(t, locHistory(t, c, "LV100001"), id)
	if row.LocateStatus != brokercode.LocateStatusFilled || row.FilledShares != 500 || !row.LocateStatus.IsTerminal() {
		t.Fatalf("accepted row = %+v; want Filled with 500 filled", row)
	}
	inv := locInventory(t, c, "LV100001")
	wantInv := []brokerclient.InventoryRow{{AccountID: "LV100001", Symbol: "HTBX", Available: 500, LocateType: 1}}
	if diff := cmp.Diff(wantInv, inv); diff != "" {
		t.Errorf("inventory (-want +got):\n%s", diff)
	}
	if n := brokerclient.Available(inv, "HTBX"); n != 500 {
		t.Errorf("Available(HTBX) = %d, want 500", n)
	}

	// Short locates rule 3: re-sending an accept is safe and does not
	// duplicate inventory.
	if _, _, err := c.Locates.Accept(ctx, "LV100001", id); err != nil {
		t.Fatal(err)
	}
	if n := brokerclient.Available(locInventory(t, c, "LV100001"), "HTBX"); n != 500 {
		t.Errorf("after a repeated accept Available(HTBX) = %d, want 500", n)
	}
}

// Spec: Short locates rule 2 (one quote of a Reg SHO threshold symbol yields
// the id, PreBorrow type 3, and id.SU, SingleUse type 4, lower price;
// accepting one expires the other); States ("a Reg SHO sibling row moves to
// 67 with text Quote expired.").
func TestLocateRegSHOPair(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	b.RunClock(t)
	c := b.Client(t, b.Live)
	ctx := t.Context()

	ack, _, err := c.Locates.Quote(ctx, brokerclient.QuoteRequest{Account: "LV100001", Symbol: "RSHO", Quantity: 100, QuoteReqID: "pair-1"})
	if err != nil {
		t.Fatal(err)
	}
	b.Advance(3 * time.Second)
	rows := locHistory(t, c, "LV100001")
	pre, su := locRow(t, rows, "pair-1"), locRow(t, rows, "pair-1.SU")
	if pre.LocateStatus != brokercode.LocateStatusOffered || pre.LocateType != 3 || pre.Type() != brokercode.LocateTypePreBorrow || !pre.LocatePrice.Equal(mustDec("0.09")) || !pre.PreBorrow {
		t.Errorf("PreBorrow side = %+v", pre)
	}
	if su.LocateStatus != brokercode.LocateStatusOffered || su.LocateType != 4 || su.Type() != brokercode.LocateTypeSingleUse || !su.LocatePrice.Equal(mustDec("0.04")) {
		t.Errorf("SingleUse side = %+v", su)
	}
	if pre.IsShadow() || !su.IsShadow() || pre.BaseID() != ack.QuoteReqID || su.BaseID() != ack.QuoteReqID {
		t.Errorf("IsShadow/BaseID: pre %v %q, su %v %q", pre.IsShadow(), pre.BaseID(), su.IsShadow(), su.BaseID())
	}
	if brokerclient.SiblingID(pre.QuoteReqID) != su.QuoteReqID || brokerclient.SiblingID(su.QuoteReqID) != pre.QuoteReqID {
		t.Errorf("SiblingID does not pair %q and %q", pre.QuoteReqID, su.QuoteReqID)
	}

	// ResolveQuote finds both sides, by either id.
	for _, id := range []string{"pair-1", "pair-1.SU"} {
		found, _, err := c.Locates.ResolveQuote(ctx, "LV100001", id)
		if err != nil {
			t.Fatalf("ResolveQuote(%s): %v", id, err)
		}
		var ids []string
		for _, r := range found {
			ids = append(ids, r.QuoteReqID)
		}
		if diff := cmp.Diff([]string{"pair-1", "pair-1.SU"}, ids); diff != "" {
			t.Errorf("ResolveQuote(%s) ids (-want +got):\n%s", id, diff)
		}
	}

	// Accept the cheaper Single Use side: it fills, its sibling expires.
	if _, _, err := c.Locates.Accept(ctx, "LV100001", brokerclient.SiblingID("pair-1")); err != nil {
		t.Fatal(err)
	}
	rows = locHistory(t, c, "LV100001")
	pre, su = locRow(t, rows, "pair-1"), locRow(t, rows, "pair-1.SU")
	if su.LocateStatus != brokercode.LocateStatusFilled {
		t.Errorf("accepted side status %v, want Filled", su.LocateStatus)
	}
	if pre.LocateStatus != brokercode.LocateStatusExpired || pre.TextValue() != "Quote expired." || pre.ErrorCode() != "" {
		t.Errorf("sibling = %v %q (code %q), want Expired \"Quote expired.\" without a code", pre.LocateStatus, pre.TextValue(), pre.ErrorCode())
	}
	inv := locInventory(t, c, "LV100001")
	if len(inv) != 1 || inv[0].Symbol != "RSHO" || inv[0].Type() != brokercode.LocateTypeSingleUse || inv[0].Available != 100 {
		t.Errorf("inventory = %+v, want one RSHO SingleUse row with 100 available", inv)
	}
}

// Spec: "Locate errors", asynchronous table and "Text prefixes fall in two
// families: R<n>: from the venue and bare numbers from the locate service";
// Short locates rule 4 (a second quote while the first is open: 14).
func TestLocateAsyncRejections(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	b.RunClock(t)
	c := b.Client(t, b.Live)
	ctx := t.Context()
	quotes := []struct {
		id, symbol string
		family     brokerclient.ErrorFamily
		code       string
		locateErr  int
	}{
		{"rej-etb", "AAPL", brokerclient.ErrorFamilyVenue, "R56", 56},
		{"rej-restricted", "RSTR", brokerclient.ErrorFamilyVenue, "R06", 4},
		{"rej-noinv", "NOINV", brokerclient.ErrorFamilyLocateService, "11", 11},
		{"ok-first", "HTBY", brokerclient.ErrorFamilyNone, "", 0},
		{"rej-pending", "HTBY", brokerclient.ErrorFamilyLocateService, "14", 14},
	}
	for _, q := range quotes {
		if _, _, err := c.Locates.Quote(ctx, brokerclient.QuoteRequest{Account: "LV100001", Symbol: q.symbol, Quantity: 100, QuoteReqID: q.id}); err != nil {
			t.Fatal(err)
		}
	}
	b.Advance(3 * time.Second)
	rows := locHistory(t, c, "LV100001")
	for _, q := range quotes {
		t.Run(q.id, func(t *testing.T) {
			r := locRow(t, rows, q.id)
			if q.code == "" {
				if r.LocateStatus != brokercode.LocateStatusOffered {
					t.Errorf("status %v, want Offered", r.LocateStatus)
				}
				return
			}
			if r.LocateStatus != brokercode.LocateStatusRejected || r.LocateError != q.locateErr {
				t.Errorf("status %v locateError %d, want Rejected %d", r.LocateStatus, r.LocateError, q.locateErr)
			}
			if r.ErrorFamily() != q.family || r.ErrorCode() != q.code {
				t.Errorf("family %v code %q (text %q), want %v %q", r.ErrorFamily(), r.ErrorCode(), r.TextValue(), q.family, q.code)
			}
		})
	}
}

// Spec: States, "POST sell → 48 New" (negative locateShares; available drops
// to 0, toBeSold rises, unavailable reflects the locked total) and "48 →
// DELETE cancel of the sell id → 52 Canceled" (shares return to available);
// Versioning rule 4 (IntraDay is a deprecated alias: send Locate).
func TestLocateCreditBackAndCancel(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	b.RunClock(t)
	var logBuf lockedBuffer
	c := b.Client(t, b.Live, brokerclient.WithLogger(slog.New(slog.NewTextHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelWarn}))))
	ctx := t.Context()

	ack, _, err := c.Locates.Quote(ctx, brokerclient.QuoteRequest{Account: "LV100001", Symbol: "HTBX", Quantity: 500})
	if err != nil {
		t.Fatal(err)
	}
	b.Advance(3 * time.Second)
	if _, _, err := c.Locates.Accept(ctx, "LV100001", ack.QuoteReqID); err != nil {
		t.Fatal(err)
	}
	inv := locInventory(t, c, "LV100001")
	if len(inv) != 1 {
		t.Fatalf("inventory = %+v", inv)
	}

	sold, _, err := c.Locates.Sell(ctx, brokerclient.SellRequest{
		Account: "LV100001", Symbol: "HTBX", Quantity: 200, LocateType: brokercode.LocateTypeIntraDay,
	})
	if err != nil {
		t.Fatal(err)
	}
	if sold.QuoteReqID == ack.QuoteReqID {
		t.Fatal("sell reused the buy-side id")
	}
	sells := loggedRequests(b, "POST", "/locates/sell")
	if got := loggedBody(t, sells[0])["locateType"]; got != "Locate" {
		t.Errorf("IntraDay sent as %v, want Locate", got)
	}
	if !strings.Contains(logBuf.String(), "level=WARN") || !strings.Contains(logBuf.String(), "IntraDay") {
		t.Errorf("no deprecation warning logged: %q", logBuf.String())
	}

	row := locRow(t, locHistory(t, c, "LV100001"), sold.QuoteReqID)
	if !row.IsCreditBack() || row.LocateShares != -200 || row.LocateStatus != brokercode.LocateStatusNew || row.LocateStatus.IsTerminal() {
		t.Errorf("credit-back row = %+v; want New with -200 shares", row)
	}
	got := locInventory(t, c, "LV100001")
	want := []brokerclient.InventoryRow{{AccountID: "LV100001", Symbol: "HTBX", Available: 0, ToBeSold: 200, Unavailable: 500, LocateType: 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("inventory with a pending credit-back (-want +got):\n%s", diff)
	}

	if _, _, err := c.Locates.Cancel(ctx, "LV100001", sold.QuoteReqID); err != nil {
		t.Fatal(err)
	}
	row = locRow(t, locHistory(t, c, "LV100001"), sold.QuoteReqID)
	if row.LocateStatus != brokercode.LocateStatusCanceled {
		t.Errorf("cancelled credit-back status %v, want Canceled", row.LocateStatus)
	}
	if n := brokerclient.Available(locInventory(t, c, "LV100001"), "HTBX"); n != 500 {
		t.Errorf("after cancelling the credit-back Available = %d, want 500", n)
	}
}

// Spec: "Paper versus live": locates on paper are accepted but settle as
// Rejected (56); inventory is a bare empty array (normalize both shapes).
func TestLocatePaper(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	b.RunClock(t)
	c := b.Client(t, b.Paper)
	ctx := t.Context()

	raw := b.Do(t, b.Paper, "GET", "/v1/api/accounts/PP200001/locates/inventory", nil)
	if got := strings.TrimSpace(string(raw.Body)); got != "[]" {
		t.Fatalf("simulator paper inventory body %q, want a bare []", got)
	}
	inv := locInventory(t, c, "PP200001")
	if inv == nil || len(inv) != 0 {
		t.Errorf("paper inventory = %#v, want an empty non-nil slice", inv)
	}

	ack, _, err := c.Locates.Quote(ctx, brokerclient.QuoteRequest{Account: "PP200001", Symbol: "HTBX", Quantity: 100})
	if err != nil {
		t.Fatal(err)
	}
	b.Advance(3 * time.Second)
	row := locRow(t, locHistory(t, c, "PP200001"), ack.QuoteReqID)
	if row.LocateStatus != brokercode.LocateStatusRejected || !row.LocateStatus.IsTerminal() {
		t.Errorf("paper quote row = %+v, want Rejected", row)
	}
}

// ---- decoding of recorded payloads ----

// Spec: Resources, "Locate history row" (every field; text null vs "";
// timestamps with 3 to 7 fractional digits), "Names that differ between
// surfaces" (quoteReqID, also seen as quoteReqId), "Locate inventory row"
// (exactly seven fields), Short locates ("paper returns a bare []").
func TestLocateDecodeGolden(t *testing.T) {
	t.Parallel()
	c := payloadClient(t, map[string]string{
		"GET /v1/api/accounts/SPEC/locates/history":    "locates_history_spec.json",
		"GET /v1/api/accounts/REF/locates/history":     "locates_history_reference.json",
		"GET /v1/api/accounts/SPEC/locates/inventory":  "locates_inventory_envelope.json",
		"GET /v1/api/accounts/PAPER/locates/inventory": "locates_inventory_bare.json",
	})
	ctx := t.Context()
	row := func(id, symbol string, shares, filled int64, status brokercode.LocateStatus, typ int, price string, pre bool, lerr int, text *string, created, updated string) brokerclient.HistoryRow {
		return brokerclient.HistoryRow{
			AccountID: "LV100001", Symbol: symbol, QuoteReqID: id, LocateShares: shares, FilledShares: filled,
			LocateStatus: status, LocateType: typ, LocatePrice: mustDec(price), PreBorrow: pre, LocateError: lerr, Text: text,
			CreatedDate: mustParseTime(t, created), UpdatedDate: mustParseTime(t, updated),
		}
	}

	t.Run("history, spec spelling", func(t *testing.T) {
		got, _, err := c.Locates.History(ctx, "SPEC")
		if err != nil {
			t.Fatal(err)
		}
		want := []brokerclient.HistoryRow{
			row("q-quoting", "HTBX", 500, 0, 81, 0, "0", false, 0, nil, "2026-11-25T15:00:01.1234567Z", "2026-11-25T15:00:01.123Z"),
			row("q-offered", "HTBY", 200, 0, 65, 2, "0.03", false, 0, textp(""), "2026-11-25T15:00:02.5Z", "2026-11-25T15:00:04.75Z"),
			row("q-regsho", "RSHO", 100, 0, 67, 3, "0.09", true, 0, textp("Quote expired."), "2026-11-25T15:01:00Z", "2026-11-25T15:01:10Z"),
			row("q-regsho.SU", "RSHO", 100, 100, 50, 4, "0.04", false, 0, textp(""), "2026-11-25T15:01:00Z", "2026-11-25T15:01:10Z"),
			row("q-etb", "AAPL", 100, 0, 56, 0, "0", false, 56, textp("R56: Symbol is easy to borrow, no need to locate"), "2026-11-25T15:02:00Z", "2026-11-25T15:02:02Z"),
			row("q-pending", "HTBX", 100, 0, 56, 0, "0", false, 14, textp("14 Locate is already pending."), "2026-11-25T15:02:30Z", "2026-11-25T15:02:32Z"),
			row("s-credit", "HTBX", -500, 0, 48, 1, "0.015", false, 0, textp(""), "2026-11-25T15:03:00Z", "2026-11-25T15:03:00Z"),
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("rows (-want +got):\n%s", diff)
		}
		if got[0].CreatedDate.Nanosecond() != 123456700 {
			t.Errorf("7-digit fraction lost: %v", got[0].CreatedDate)
		}
		if !got[3].IsShadow() || got[3].BaseID() != "q-regsho" || got[2].IsShadow() {
			t.Error("Reg SHO pair not told apart")
		}
		if got[4].ErrorCode() != "R56" || got[5].ErrorCode() != "14" || !got[6].IsCreditBack() {
			t.Errorf("codes %q %q, credit-back %v", got[4].ErrorCode(), got[5].ErrorCode(), got[6].IsCreditBack())
		}
	})

	t.Run("history, reference spelling quoteReqId", func(t *testing.T) {
		got, _, err := c.Locates.History(ctx, "REF")
		if err != nil {
			t.Fatal(err)
		}
		want := []brokerclient.HistoryRow{
			row("ref-1", "HTBX", 300, 300, 50, 1, "0.015", false, 0, textp(""), "2026-11-25T14:30:00.12345Z", "2026-11-25T14:30:03.1234567Z"),
			row("ref-2", "NOINV", 100, 0, 56, 0, "0", false, 11, textp("11 No shares available. Please try again later."), "2026-11-25T14:31:00Z", "2026-11-25T14:31:02Z"),
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("rows (-want +got):\n%s", diff)
		}
	})

	t.Run("inventory envelope", func(t *testing.T) {
		got, _, err := c.Locates.Inventory(ctx, "SPEC")
		if err != nil {
			t.Fatal(err)
		}
		want := []brokerclient.InventoryRow{
			{AccountID: "LV100001", Symbol: "HTBX", Available: 500, LocateType: 1},
			{AccountID: "LV100001", Symbol: "RSHO", Available: 300, Sold: 100, Unavailable: 200, LocateType: 3},
			{AccountID: "LV100001", Symbol: "RSHO", Available: 100, LocateType: 4},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("rows (-want +got):\n%s", diff)
		}
		if n := brokerclient.Available(got, "RSHO"); n != 400 {
			t.Errorf("Available(RSHO) over two pools = %d, want 400", n)
		}
		if n := brokerclient.Available(got, "NONE"); n != 0 {
			t.Errorf("Available(NONE) = %d", n)
		}
	})

	t.Run("inventory bare array", func(t *testing.T) {
		got, _, err := c.Locates.Inventory(ctx, "PAPER")
		if err != nil {
			t.Fatal(err)
		}
		if got == nil || len(got) != 0 {
			t.Errorf("bare [] decoded as %#v, want an empty non-nil slice", got)
		}
	})
}

// Spec: "Locate errors" (two text families; locateError and locateStatus
// independent), "Locate history row" (.SU shadow rows, negative shares on
// credit-backs).
func TestHistoryRowHelpers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		text   *string
		family brokerclient.ErrorFamily
		code   string
	}{
		{nil, brokerclient.ErrorFamilyNone, ""},
		{textp(""), brokerclient.ErrorFamilyNone, ""},
		{textp("Quote expired."), brokerclient.ErrorFamilyNone, ""},
		{textp("R56: Symbol is easy to borrow, no need to locate"), brokerclient.ErrorFamilyVenue, "R56"},
		{textp("R06: Symbol restricted at this price"), brokerclient.ErrorFamilyVenue, "R06"},
		{textp("R67: You can only offer for credit in lots of 100"), brokerclient.ErrorFamilyVenue, "R67"},
		{textp("14 Locate is already pending."), brokerclient.ErrorFamilyLocateService, "14"},
		{textp("11 No shares available. Please try again later."), brokerclient.ErrorFamilyLocateService, "11"},
		{textp("16 Insufficient shares."), brokerclient.ErrorFamilyLocateService, "16"},
		{textp("1"), brokerclient.ErrorFamilyLocateService, "1"},
		{textp("Rejected: Broker Rejected"), brokerclient.ErrorFamilyNone, ""},
		{textp("R2D2 is not a code"), brokerclient.ErrorFamilyNone, ""},
	}
	for _, tc := range cases {
		r := brokerclient.HistoryRow{Text: tc.text}
		if r.ErrorFamily() != tc.family || r.ErrorCode() != tc.code {
			t.Errorf("text %q: family %v code %q, want %v %q", r.TextValue(), r.ErrorFamily(), r.ErrorCode(), tc.family, tc.code)
		}
	}
	for id, sib := range map[string]string{"q": "q.SU", "q.SU": "q", "a.b": "a.b.SU"} {
		if got := brokerclient.SiblingID(id); got != sib {
			t.Errorf("SiblingID(%q) = %q, want %q", id, got, sib)
		}
	}
	if (brokerclient.HistoryRow{LocateShares: -100}).IsCreditBack() != true || (brokerclient.HistoryRow{LocateShares: 100}).IsCreditBack() {
		t.Error("IsCreditBack")
	}
}

// lockedBuffer is a bytes.Buffer safe for a logger and a test to share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *lockedBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *lockedBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
