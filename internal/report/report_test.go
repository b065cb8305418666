package report_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/internal/report"
	"github.com/locatorhq/locator/internal/report/chart"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/ledger"
	"github.com/locatorhq/locator/market"
	"github.com/locatorhq/locator/simtest"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

const accountID = "LV100001"

// updateDocs rewrites docs/report from the generated month: the charts and
// the samples docs/trading.md shows.
var updateDocs = flag.Bool("update-docs", false, "rewrite docs/report from the generated month")

// monthStart is the first generated day: Thursday 2026-10-01, a month with
// no NYSE holiday, so the simulator's weekdays are the calendar's trading
// days.
var monthStart = time.Date(2026, 10, 1, 0, 0, 0, 0, market.NewYork)

// world is a run of simulated trading days driven through the engine.
type world struct {
	sim   *simtest.Bundle
	store *store.Store
	days  []time.Time // the trade dates generated
	// direct are the short sales the test sent through the client, not
	// through locator; uncovered are those of them sent without cover.
	direct, uncovered map[string]bool
	// covers are the workflow each locator short sale was covered by.
	covers map[string]string
	// loops are the days' engines: virtual time waits while one holds an
	// event (an offer's row), which real time never runs past.
	loops simtest.Loops
}

// generate runs n trading days from monthStart. Each day, at 10:00 New
// York, with the day's locate prices of HTBX and HTBY: a short of HTBX through the engine (its locate, then the sale),
// covered at a lower or higher price; a locate of HTBY, on even days a
// short against it, and a credit-back of part of it; an offer of RSSU
// declined by the policy; every fourth day a Reg SHO locate of RSDRY that
// no pool answers, which expires. On the last day, locator shorts AAPL
// (easy to borrow, checked), and the test sends three short sales through
// the client directly: HTBX within the day's free located shares (covered),
// HTBY beyond them and SPY with no easy-to-borrow check (both uncovered).
func generate(t *testing.T, n int) *world {
	t.Helper()
	sim := simtest.New(t, simtest.WithStart(monthStart.Add(10*time.Hour)))
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "locator.db"), sim.Clock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	w := &world{sim: sim, store: st, direct: map[string]bool{}, uncovered: map[string]bool{}, covers: map[string]string{}}
	sim.RunClockWhile(t, 2, w.loops.Idle)
	for d := monthStart; len(w.days) < n; d = d.AddDate(0, 0, 1) {
		if !market.IsTradingDay(d) {
			continue
		}
		open := time.Date(d.Year(), d.Month(), d.Day(), 10, 0, 0, 0, market.NewYork)
		if gap := open.Sub(sim.Clock.Now()); gap > 0 {
			sim.Advance(gap)
		}
		w.day(t, len(w.days), len(w.days) == n-1)
		w.days = append(w.days, ledger.TradeDate(open))
	}
	sim.Advance(time.Minute) // the last fees and credits post
	return w
}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func (w *world) day(t *testing.T, i int, last bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	// No portfolio stream (its address answers 404): orders are followed by
	// REST lookups, which virtual time cannot outrun.
	client := w.sim.Client(t, w.sim.Live, brokerclient.WithStreamURL("ws"+strings.TrimPrefix(w.sim.URL, "http")+"/no-stream"))
	e, err := engine.New(engine.Config{Client: client, Store: w.store, Clock: w.sim.Clock, Account: accountID,
		Env: brokerclient.EnvLive, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	w.loops.Add(e)
	auto := workflow.Policy{AutoAccept: true}
	filled := map[string]string{} // the day's filled locate of each symbol
	short := func(symbol string, qty int64, limit decimal.Decimal) *account.ShortResult {
		t.Helper()
		// The trader's reference price for the fat-finger guard: the day's
		// first short has no fill or position to measure against.
		res, err := e.Short(ctx, account.ShortRequest{Symbol: symbol, Quantity: qty, Limit: limit, Policy: auto, Guard: workflow.Guard{RefPrice: limit}}, engine.ShortAnswers{})
		if err != nil || res.Order == nil {
			t.Fatalf("day %d: short %s %d: %v %+v", i, symbol, qty, err, res)
		}
		res.Order = settle(t, e, res.Order)
		// A short the day's inventory already covered is covered by the
		// locate that filled it.
		w.covers[res.Order.ClientOrderID] = res.Locate.ID
		if res.Locate.State == states.Covered {
			w.covers[res.Order.ClientOrderID] = filled[symbol]
		}
		return res
	}
	locate := func(symbol string, qty int64, p workflow.Policy, want states.State) *workflow.Workflow {
		t.Helper()
		h, err := e.Locate(ctx, engine.Request{Symbol: symbol, Quantity: qty, Policy: p})
		if err != nil {
			t.Fatal(err)
		}
		wf, err := h.Wait(ctx)
		if err != nil || wf.State != want {
			t.Fatalf("day %d: locate %s: %v %+v, want %s", i, symbol, err, wf, want)
		}
		filled[symbol] = wf.ID
		return wf
	}

	// What locating costs moves from day to day.
	w.sim.Sim.SetLocatePrice("HTBX", dec("0.0150").Add(decimal.New(int64(5*(i%7)), -4)))
	w.sim.Sim.SetLocatePrice("HTBY", dec("0.0300").Sub(decimal.New(int64(4*(i%5)), -4)))

	// HTBX: shorted at p, covered at c.
	p := dec("12.50").Add(decimal.New(int64(5*(i%5)), -2))
	c := p.Sub(dec("0.20")).Add(decimal.New(int64(15*(i%3)), -2))
	w.sim.Sim.SetPrice("HTBX", p)
	qty := int64(100 * (2 + i%3))
	short("HTBX", qty, p.Sub(dec("0.10")))
	w.sim.Sim.SetPrice("HTBX", c)
	lim := c.Add(dec("0.10"))
	cover := &engine.Order{ClientOrderID: uuid.NewString(), Account: accountID, Symbol: "HTBX", Side: "Buy", OpenClose: "Close",
		OrderType: "Limit", TimeInForce: "Day", Quantity: qty, LimitPrice: lim, Route: "SMART"}
	o, err := e.PlaceOrder(ctx, cover, workflow.Guard{})
	if err != nil {
		t.Fatalf("day %d: cover: %v", i, err)
	}
	settle(t, e, o)

	// HTBY: located, sometimes shorted, partly credited back.
	locate("HTBY", 300, auto, states.Filled)
	if i%2 == 0 {
		short("HTBY", 100, dec("8.30"))
	}
	h, err := e.CreditBack(ctx, engine.CreditBackRequest{Symbol: "HTBY", Shares: int64(100 * (1 + i%2)), Type: brokercode.LocateTypeLocate})
	if err != nil {
		t.Fatal(err)
	}
	if cb, err := h.Wait(ctx); err != nil || cb.State != states.Credited {
		t.Fatalf("day %d: credit-back: %v %+v", i, err, cb)
	}

	// Offers not taken: declined by the cap, and one no pool answers.
	locate("RSSU", 200, workflow.Policy{MaxPrice: dec("0.01")}, states.Declined)
	if i%4 == 0 {
		locate("RSDRY", 100, auto, states.Expired)
	}
	if !last {
		return
	}
	short("AAPL", 10, dec("189.00"))
	for _, o := range []struct {
		symbol  string
		qty     int64
		covered bool
	}{{"HTBX", 100, true}, {"HTBY", 1000, false}, {"SPY", 10, false}} {
		id := "direct-" + o.symbol
		sendShort(t, ctx, client, id, o.symbol, o.qty)
		w.direct[id] = true
		if !o.covered {
			w.uncovered[id] = true
		}
	}
}

// settle waits until the engine's record of the order is filled. The
// engine follows the order by REST lookups here (see day): on the portfolio
// stream, with virtual time jumping while a push is in flight, it sometimes
// recorded a marketable order as working and never saw its fill.
func settle(t *testing.T, e *engine.Engine, o *engine.Order) *engine.Order {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	got, err := e.WaitOrder(ctx, o.ClientOrderID, false)
	if err != nil || got.State != states.Filled {
		t.Fatalf("order %s %s %d: %v %+v", o.Side, o.Symbol, o.Quantity, err, got)
	}
	return got
}

// bucket is one report bucket computed from the simulator alone.
type bucket struct {
	located, shorted, credited int64
	spend, recovery, forgone   decimal.Decimal
	pnl                        decimal.Decimal
	feeRows                    int
}

func (b *bucket) add(o *bucket) {
	b.located += o.located
	b.shorted += o.shorted
	b.credited += o.credited
	b.spend = b.spend.Add(o.spend)
	b.recovery = b.recovery.Add(o.recovery)
	b.forgone = b.forgone.Add(o.forgone)
	b.pnl = b.pnl.Add(o.pnl)
	b.feeRows += o.feeRows
}

var (
	feeNote    = regexp.MustCompile(`^Locate fee (\S+) (\d+) shares @ \S+ \(quoteReqID (\S+)\)$`)
	creditNote = regexp.MustCompile(`^Locate credit-back (\S+) (\d+) shares @ `)
)

// independent computes what the report must say from what the simulator
// recorded: its request log (quotes, short sales), its cash ledger (fees,
// credits) and its closed positions (the P&L of covered shorts), with the
// scenario's pool prices for the offers that were not taken. None of it
// comes from locator's database.
func (w *world) independent(t *testing.T) []report.Record {
	t.Helper()
	cells := map[[2]string]*bucket{}
	rng := locator.DateRange{From: w.days[0], To: w.days[len(w.days)-1]}
	cell := func(symbol string, d time.Time) *bucket {
		if !rng.Contains(d) {
			return nil
		}
		k := [2]string{d.Format(time.DateOnly), symbol}
		if cells[k] == nil {
			cells[k] = &bucket{}
		}
		return cells[k]
	}
	type quote struct {
		symbol string
		qty    int64
		date   time.Time
	}
	quotes := map[string]quote{}
	for _, r := range w.sim.Sim.Requests() {
		var body struct {
			Symbol        string `json:"symbol"`
			Quantity      int64  `json:"quantity"`
			QuoteReqID    string `json:"quoteReqID"`
			ClientOrderID string `json:"clientOrderId"`
			Side          string `json:"side"`
			OpenClose     string `json:"openClose"`
			OrderQuantity int64  `json:"orderQuantity"`
		}
		if r.Method != "POST" || r.Status != 200 {
			continue
		}
		json.Unmarshal([]byte(r.Body), &body)
		switch {
		case r.Path == "/v1/api/accounts/locates/quote":
			quotes[body.QuoteReqID] = quote{body.Symbol, body.Quantity, ledger.TradeDate(r.Time)}
		case strings.HasSuffix(r.Path, "/order") && body.Side == "Sell" && body.OpenClose == "Open" && !w.direct[body.ClientOrderID]:
			if b := cell(body.Symbol, ledger.TradeDate(r.Time)); b != nil {
				b.shorted += body.OrderQuantity
			}
		}
	}
	var cash struct {
		CashHistory []struct {
			CashType  string      `json:"cashType"`
			Deposit   json.Number `json:"deposit"`
			Withdraw  json.Number `json:"withdraw"`
			EntryDate string      `json:"entryDate"`
			Note      string      `json:"note"`
		} `json:"cashHistory"`
	}
	w.sim.Do(t, w.sim.Live, "GET", "/v1/api/accounts/"+accountID+"/cash-transactions/start-date/"+
		rng.From.Format(time.DateOnly)+"?numberOfDays=60&limit=10000", nil).JSON(t, &cash)
	filled := map[string]bool{}
	for _, r := range cash.CashHistory {
		if r.CashType != "Locate Fees" {
			continue
		}
		d, _ := time.Parse("2006-01-02T15:04:05", r.EntryDate)
		if m := feeNote.FindStringSubmatch(r.Note); m != nil {
			filled[strings.TrimSuffix(m[3], ".SU")] = true
			if b := cell(m[1], d); b != nil {
				n, _ := strconv.ParseInt(m[2], 10, 64)
				b.located += n
				b.spend = b.spend.Add(dec(r.Withdraw.String()))
				b.feeRows++
			}
		} else if m := creditNote.FindStringSubmatch(r.Note); m != nil {
			if b := cell(m[1], d); b != nil {
				n, _ := strconv.ParseInt(m[2], 10, 64)
				b.credited += n
				b.recovery = b.recovery.Add(dec(r.Deposit.String()))
				b.feeRows++
			}
		}
	}
	poolPrice := map[string]decimal.Decimal{}
	for _, p := range brokersim.DefaultScenario().Pools {
		if _, ok := poolPrice[p.Symbol]; !ok {
			poolPrice[p.Symbol] = p.Price.Decimal
		}
	}
	for id, q := range quotes {
		if b := cell(q.symbol, q.date); b != nil && !filled[id] {
			b.forgone = b.forgone.Add(poolPrice[q.symbol].Mul(decimal.NewFromInt(q.qty)))
		}
	}
	var closed struct {
		ClosedPositions []struct {
			Symbol     string      `json:"symbol"`
			Realized   json.Number `json:"realized"`
			OpenedDate string      `json:"openedDate"`
			ClosedDate string      `json:"closedDate"`
		} `json:"closedPositions"`
	}
	w.sim.Do(t, w.sim.Live, "GET", "/v1/api/accounts/"+accountID+"/positions/closed", nil).JSON(t, &closed)
	for _, r := range closed.ClosedPositions {
		opened, err1 := time.Parse(time.RFC3339, r.OpenedDate)
		at, err2 := time.Parse(time.RFC3339, r.ClosedDate)
		if err1 != nil || err2 != nil || ledger.TradeDate(opened).Before(rng.From) {
			continue // the scenario's seeded rows, dated only
		}
		if b := cell(r.Symbol, ledger.TradeDate(at)); b != nil {
			b.pnl = b.pnl.Add(dec(r.Realized.String()))
		}
	}
	return records(cells)
}

// records turns the buckets into the report's records: day rows, then the
// symbols', the dates' and the total, each figure derived here.
func records(cells map[[2]string]*bucket) []report.Record {
	bySymbol, byDate, total := map[string]*bucket{}, map[string]*bucket{}, &bucket{}
	var dayKeys [][2]string
	for k := range cells {
		dayKeys = append(dayKeys, k)
	}
	slices.SortFunc(dayKeys, func(x, y [2]string) int {
		return cmp.Or(strings.Compare(x[0], y[0]), strings.Compare(x[1], y[1]))
	})
	type series struct {
		first, last *decimal.Decimal
		n           int
	}
	trends := map[string]*series{}
	rec := func(typ, date, symbol string, b *bucket) report.Record {
		r := report.Record{Type: typ, Account: accountID, Date: date, Symbol: symbol, Located: b.located, Shorted: b.shorted,
			Credited: b.credited, Spend: b.spend.StringFixed(2), Recovery: b.recovery.StringFixed(2),
			NetSpend: b.spend.Sub(b.recovery).StringFixed(2), ForgoneSpend: b.forgone.StringFixed(2),
			ShortPnL: b.pnl.StringFixed(2), NetPnL: b.pnl.Sub(b.spend.Sub(b.recovery)).StringFixed(2), Fees: map[string]int{}}
		if b.located > 0 {
			u := decimal.NewFromInt(b.shorted).DivRound(decimal.NewFromInt(b.located), 4).StringFixed(4)
			p := b.spend.Mul(decimal.NewFromInt(100)).DivRound(decimal.NewFromInt(b.located), 4).StringFixed(4)
			r.Utilisation, r.PricePer100 = &u, &p
		}
		if b.feeRows > 0 {
			r.FeeStatus, r.Fees["matched"] = "matched", b.feeRows
		}
		return r
	}
	var out []report.Record
	track := func(key string, r report.Record) {
		if r.PricePer100 == nil {
			return
		}
		s := trends[key]
		if s == nil {
			s = &series{}
			trends[key] = s
		}
		v := dec(*r.PricePer100)
		if s.first == nil {
			s.first = &v
		}
		s.last = &v
		s.n++
	}
	for _, k := range dayKeys {
		b := cells[k]
		r := rec("day", k[0], k[1], b)
		out = append(out, r)
		track(k[1], r)
		for _, mk := range []struct {
			m   map[string]*bucket
			key string
		}{{bySymbol, k[1]}, {byDate, k[0]}} {
			if mk.m[mk.key] == nil {
				mk.m[mk.key] = &bucket{}
			}
			mk.m[mk.key].add(b)
		}
		total.add(b)
	}
	trend := func(key string) *string {
		s := trends[key]
		if s == nil || s.n < 2 {
			return nil
		}
		v := s.last.Sub(*s.first).StringFixed(4)
		return &v
	}
	for _, sym := range sortedKeys(bySymbol) {
		r := rec("symbol", "", sym, bySymbol[sym])
		r.PriceTrend = trend(sym)
		out = append(out, r)
	}
	for _, d := range sortedKeys(byDate) {
		r := rec("date", d, "", byDate[d])
		track("", r)
		out = append(out, r)
	}
	r := rec("total", "", "", total)
	r.PriceTrend = trend("")
	return append(out, r)
}

func sortedKeys(m map[string]*bucket) []string {
	return slices.Sorted(maps.Keys(m))
}

// Done when: twenty simulated trading days of locates, shorts,
// credit-backs, declined and expired offers, driven through the engine;
// every figure of the report (the records `locator report -o json`
// prints) equals the figure computed from the simulator's request log,
// cash ledger and closed positions; the audit flags exactly the short
// sales sent without cover and lists every other one with the workflow
// that covered it.
func TestReportMonth(t *testing.T) {
	t.Parallel()
	w := generate(t, 20)
	ctx := t.Context()
	client := w.sim.Client(t, w.sim.Live)
	rng := locator.DateRange{From: w.days[0], To: w.days[len(w.days)-1]}
	fees, _, err := ledger.Check(ctx, client, w.store, accountID, w.sim.Clock.Now(), report.FeeWindow(rng), ledger.FeeGrace)
	if err != nil {
		t.Fatal(err)
	}
	r, err := report.Run(ctx, w.store, accountID, fees, w.sim.Clock.Now(), rng)
	if err != nil {
		t.Fatal(err)
	}
	got, want := report.Records(r), w.independent(t)
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Errorf("report records (-independent +report):\n%s", diff)
	}
	total := got[len(got)-1]
	t.Logf("total over %s: located %d, shorted %d, credited %d, spend %s, recovery %s, net %s, forgone %s, short P&L %s, net P&L %s",
		rng, total.Located, total.Shorted, total.Credited, total.Spend, total.Recovery, total.NetSpend, total.ForgoneSpend, total.ShortPnL, total.NetPnL)
	if total.Located == 0 || total.Credited == 0 || total.Shorted == 0 || total.ForgoneSpend == "0.00" || total.ShortPnL == "0.00" {
		t.Errorf("the month lacks some activity: %+v", total)
	}

	book, _, err := client.Orders.Book(ctx, accountID)
	if err != nil {
		t.Fatal(err)
	}
	trail, err := report.AuditBook(ctx, w.store, accountID, book, client.ClockSkew(), w.sim.Clock.Now(), rng, 0)
	if err != nil {
		t.Fatal(err)
	}
	flagged := map[string]bool{}
	seen := map[string]bool{}
	for _, row := range trail.Rows {
		seen[row.ClientOrderID] = true
		if !row.Covered {
			flagged[row.ClientOrderID] = true
			continue
		}
		if want := w.covers[row.ClientOrderID]; row.Source == locator.SourceLocator && (len(row.Covers) == 0 || row.Covers[0].WorkflowID != want) {
			t.Errorf("short %s covered by %+v, want workflow %s", row.ClientOrderID, row.Covers, want)
		}
	}
	if !gocmp.Equal(flagged, w.uncovered) {
		t.Errorf("flagged %v, want exactly %v", flagged, w.uncovered)
	}
	for id := range w.covers {
		if !seen[id] {
			t.Errorf("locator's short %s is not in the audit", id)
		}
	}
	if !seen["direct-HTBX"] {
		t.Error("the covered short sent through the client is not in the audit")
	}
	t.Logf("audit: %d short sales, %d flagged", len(trail.Rows), trail.Flagged())
	if *updateDocs {
		writeDocs(t, r, trail)
	}
}

// writeDocs writes the charts of the month and the samples of docs/trading.md: the
// symbol and total records as `locator report -o json` prints them, and the
// audit's rows of the last day as `locator audit -o csv` does.
func writeDocs(t *testing.T, r *locator.Report, trail *locator.AuditTrail) {
	t.Helper()
	dir := filepath.Join("..", "..", "docs", "report")
	if _, err := chart.Write(r, dir); err != nil {
		t.Fatal(err)
	}
	var js bytes.Buffer
	enc := json.NewEncoder(&js)
	for _, rec := range report.Records(r) {
		if rec.Type == "symbol" || rec.Type == "total" {
			enc.Encode(rec)
		}
	}
	var cs bytes.Buffer
	cw := csv.NewWriter(&cs)
	cw.Write(report.AuditCSVHeader)
	last := r.Range.To.Format(time.DateOnly)
	for _, rec := range report.AuditRecords(trail) {
		if rec.Date == last {
			cw.Write(rec.CSV())
		}
	}
	cw.Flush()
	for name, b := range map[string][]byte{"report-summary.jsonl": js.Bytes(), "audit-last-day.csv": cs.Bytes()} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
