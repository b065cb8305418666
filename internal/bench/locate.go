package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// Quantity is what each benchmark symbol asks for, and maxPrice the cap
// that lets every offer be accepted without a person.
const Quantity = 100

var maxPrice = decimal.RequireFromString("0.05")

// Run is one runner's figures for one watchlist. Times are seconds on the
// simulator's clock.
type Run struct {
	Runner string `json:"runner"` // "engine" or "naive"
	N      int    `json:"n"`
	// Wall runs from the first call to the last fill seen; Floor is
	// (N−1) × 1 s of quote spacing plus the last offer's settle.
	Wall       float64 `json:"wallSeconds"`
	Floor      float64 `json:"floorSeconds"`
	Ratio      float64 `json:"wallOverFloor"`
	LastSettle float64 `json:"lastSettleSeconds"`
	// QuoteGapP50 is the median gap between consecutive quotes.
	QuoteGapP50 float64 `json:"quoteGapP50Seconds"`
	// OfferToAccept: from the instant the offer settled at the broker
	// (the simulator's record of it, GET /_sim/locates) to the accept
	// reaching the broker (its request log): how long an offer waits for
	// the read that shows it, and then for the accept.
	OfferToAcceptP50 float64 `json:"offerToAcceptP50Seconds"`
	OfferToAcceptP99 float64 `json:"offerToAcceptP99Seconds"`
	Filled           int     `json:"filled"`
	// CallsPerFill is broker calls per filled locate, by route.
	CallsPerFill map[string]float64 `json:"callsPerFill"`
	Status429    int                `json:"responses429"`
	// Expired counts offers lost to their 30-second window.
	Expired int `json:"offersExpired"`
}

// result is what a runner saw of one symbol.
type result struct {
	quoteReqID string
	filledAt   time.Time // when the runner saw it filled
	state      states.State
}

// RunEngine locates symbols with the engine (LocateAll), on a fresh store in
// dir, and measures it.
func RunEngine(ctx context.Context, t *Target, dir string, symbols []string) (Run, error) {
	client, err := t.Client()
	if err != nil {
		return Run{}, err
	}
	st, err := store.Open(ctx, filepath.Join(dir, fmt.Sprintf("engine-%d.db", len(symbols))), t.Clock)
	if err != nil {
		return Run{}, err
	}
	defer st.Close()
	e, err := engine.New(engine.Config{Client: client, Store: st, Clock: t.Clock, Account: Account, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return Run{}, err
	}
	if err := e.Start(ctx); err != nil {
		return Run{}, err
	}
	defer e.Close()
	return measure(ctx, t, "engine", symbols, func() ([]result, error) {
		reqs := make([]engine.Request, len(symbols))
		for i, s := range symbols {
			reqs[i] = engine.Request{Symbol: s, Quantity: Quantity, Policy: workflow.Policy{MaxPrice: maxPrice, AutoAccept: true}}
		}
		hs, err := e.LocateAll(ctx, reqs)
		if err != nil {
			return nil, err
		}
		out := make([]result, len(hs))
		for i, h := range hs {
			w, err := h.Wait(ctx)
			if err != nil {
				return nil, err
			}
			out[i] = result{quoteReqID: w.QuoteReqID, filledAt: w.UpdatedAt, state: w.State}
		}
		return out, nil
	})
}

// RunNaive locates symbols one at a time as the spec's guidance reads:
// check easy-to-borrow, quote, poll history every second until the offer,
// accept, poll every second until it fills.
func RunNaive(ctx context.Context, t *Target, symbols []string) (Run, error) {
	c, err := t.Client()
	if err != nil {
		return Run{}, err
	}
	return measure(ctx, t, "naive", symbols, func() ([]result, error) {
		out := make([]result, len(symbols))
		for i, s := range symbols {
			r, err := naiveOne(ctx, t, c, s)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", s, err)
			}
			out[i] = r
		}
		return out, nil
	})
}

func naiveOne(ctx context.Context, t *Target, c *brokerclient.Client, symbol string) (result, error) {
	r := result{quoteReqID: fmt.Sprintf("naive-%s-%d", symbol, t.Clock.Now().UnixNano())}
	if etb, _, err := c.Orders.EasyToBorrow(ctx, Account, symbol); err != nil || etb {
		return r, fmt.Errorf("easy-to-borrow %v: %w", etb, err)
	}
	if _, _, err := c.Locates.Quote(ctx, brokerclient.QuoteRequest{Account: Account, Symbol: symbol, Quantity: Quantity, QuoteReqID: r.quoteReqID}); err != nil {
		return r, err
	}
	accepted := false
	for {
		if err := clock.Sleep(ctx, t.Clock, time.Second); err != nil {
			return r, err
		}
		rows, _, err := c.Locates.History(ctx, Account)
		if err != nil {
			return r, err
		}
		i := slices.IndexFunc(rows, func(h brokerclient.HistoryRow) bool { return h.QuoteReqID == r.quoteReqID })
		if i < 0 {
			continue
		}
		row := rows[i]
		switch row.LocateStatus {
		case brokercode.LocateStatusOffered:
			if !accepted {
				if _, _, err := c.Locates.Accept(ctx, Account, r.quoteReqID); err != nil {
					return r, err
				}
				accepted = true
			}
		case brokercode.LocateStatusFilled:
			r.filledAt, r.state = t.Clock.Now(), states.Filled
			return r, nil
		case brokercode.LocateStatusExpired:
			r.state = states.Expired
			return r, nil
		case brokercode.LocateStatusRejected, brokercode.LocateStatusCanceled:
			r.state = states.Rejected
			return r, nil
		}
	}
}

// measure runs one runner and reads its figures from the simulator's
// request log (only the requests made during the run), its record of when
// each quote settled, and what the runner saw.
func measure(ctx context.Context, t *Target, runner string, symbols []string, run func() ([]result, error)) (Run, error) {
	before, err := t.Requests(ctx)
	if err != nil {
		return Run{}, err
	}
	start := t.Clock.Now()
	results, err := run()
	if err != nil {
		return Run{}, fmt.Errorf("%s N=%d: %w", runner, len(symbols), err)
	}
	log, err := t.Requests(ctx)
	if err != nil {
		return Run{}, err
	}
	log = log[len(before):]
	rows, err := t.Locates(ctx)
	if err != nil {
		return Run{}, err
	}
	offered := map[string]time.Time{} // when the broker offered, by quoteReqID (a .SU side its own)
	for _, row := range rows {
		if !row.Offered.IsZero() {
			offered[row.QuoteReqID] = row.Offered
		}
	}
	seen := requestsOf(log)
	calls, quotes, quoted, accepted := seen.calls, seen.quotes, seen.quoted, seen.accepted
	out := Run{Runner: runner, N: len(symbols), CallsPerFill: map[string]float64{}, Status429: seen.status429}
	var end, lastQuote time.Time
	var lastSettle time.Duration
	var toAccept []time.Duration
	for id, at := range accepted {
		if o, ok := offered[id]; ok {
			toAccept = append(toAccept, at.Sub(o))
		}
	}
	for _, r := range results {
		switch r.state {
		case states.Filled:
			out.Filled++
		case states.Expired:
			out.Expired++
		}
		if r.filledAt.After(end) {
			end = r.filledAt
		}
		settled := offered[r.quoteReqID]
		if settled.IsZero() {
			settled = offered[r.quoteReqID+".SU"]
		}
		if q, ok := quoted[r.quoteReqID]; ok && !settled.IsZero() && q.After(lastQuote) {
			lastQuote, lastSettle = q, settled.Sub(q)
		}
	}
	out.Wall = end.Sub(start).Seconds()
	out.LastSettle = lastSettle.Seconds()
	out.Floor = float64(len(symbols)-1) + out.LastSettle
	out.Ratio = round(out.Wall/out.Floor, 3)
	var gaps []time.Duration
	for i := 1; i < len(quotes); i++ {
		gaps = append(gaps, quotes[i].Sub(quotes[i-1]))
	}
	out.QuoteGapP50 = percentile(gaps, 0.50)
	out.OfferToAcceptP50, out.OfferToAcceptP99 = percentile(toAccept, 0.50), percentile(toAccept, 0.99)
	for route, n := range calls {
		out.CallsPerFill[route] = round(float64(n)/float64(max(out.Filled, 1)), 3)
	}
	out.Wall, out.Floor, out.LastSettle = round(out.Wall, 3), round(out.Floor, 3), round(out.LastSettle, 3)
	return out, nil
}

// requestsSeen is what a run's requests show: the responses 429, the
// calls by route, and when each quote and each quote's first accept
// reached the broker (by quoteReqID).
type requestsSeen struct {
	status429        int
	calls            map[string]int
	quotes           []time.Time
	quoted, accepted map[string]time.Time
}

// requestsOf reads log, the simulator's record of a run's requests.
func requestsOf(log []brokersim.RequestRecord) requestsSeen {
	seen := requestsSeen{calls: map[string]int{}, quoted: map[string]time.Time{}, accepted: map[string]time.Time{}}
	for _, r := range log {
		if r.Status == 429 {
			seen.status429++
		}
		route := routeOf(r)
		seen.calls[route]++
		var body struct {
			QuoteReqID string `json:"quoteReqID"`
		}
		json.Unmarshal([]byte(r.Body), &body)
		switch route {
		case "quote":
			seen.quotes = append(seen.quotes, r.Time)
			seen.quoted[body.QuoteReqID] = r.Time
		case "accept":
			if _, ok := seen.accepted[body.QuoteReqID]; !ok {
				seen.accepted[body.QuoteReqID] = r.Time
			}
		}
	}
	return seen
}

// routeOf names a logged request by the spec's rate-limit route.
func routeOf(r brokersim.RequestRecord) string {
	p := r.Method + " " + r.Path
	for _, rt := range []struct{ sub, name string }{
		{"POST /v1/api/accounts/locates/quote", "quote"},
		{"POST /v1/api/accounts/locates/accept", "accept"},
		{"/locates/cancel/", "cancel"},
		{"/locates/history", "history"},
		{"/locates/inventory", "inventory"},
		{"/is-easy-to-borrow/", "easyToBorrow"},
	} {
		if strings.Contains(p, rt.sub) {
			return rt.name
		}
	}
	if r.Method == "GET" && strings.HasSuffix(r.Path, "/orders") {
		return "orderBook"
	}
	return p
}

// percentile is the nearest-rank percentile of ds, in seconds.
func percentile(ds []time.Duration, p float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return round(s[max(i, 0)].Seconds(), 3)
}

func round(v float64, places int) float64 {
	f := math.Pow(10, float64(places))
	return math.Round(v*f) / f
}
