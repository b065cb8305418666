package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/store"
	"github.com/locatorhq/locator/workflow"
)

// demoCommand runs the engine against the embedded simulator, on a sped-up
// clock they share, through every kind of outcome, with narration.
type demoCommand struct {
	m     *Main
	speed float64
	keep  string
}

func (c *demoCommand) synopsis() string {
	return "run the locate engine against the embedded simulator: six workflows, narrated"
}

func (c *demoCommand) flags(fs *pflag.FlagSet) {
	fs.Float64Var(&c.speed, "speed", 10, "run the shared clock N times faster than real time")
	fs.StringVar(&c.keep, "db", "", "keep the demo's database at this path (default: a temporary file)")
}

// demoStep is one narrated request.
type demoStep struct {
	title  string
	why    string
	run    func(ctx context.Context, e *engine.Engine) (*engine.Handle, error)
	symbol string
	asked  int64
}

func (c *demoCommand) run(ctx context.Context, args []string) error {
	if len(args) > 0 {
		return usagef("unexpected argument %q", args[0])
	}
	if c.speed <= 0 || c.speed > 100 {
		return usagef("--speed must be in (0, 100]")
	}
	out := c.m.Stdout
	start := time.Now()
	clk := clock.NewScaled(start, c.speed)

	sc := brokersim.DefaultScenario()
	sim, err := brokersim.New(sc, brokersim.WithClock(clk))
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: sim, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	baseURL := "http://" + ln.Addr().String()

	key := sc.Keys[0] // the live key pair; it owns the Active margin account first
	account := key.Accounts[0]
	client, err := brokerclient.NewClient(brokerclient.WithBaseURL(baseURL),
		brokerclient.WithCredentials(key.KeyID, key.Secret), brokerclient.WithClock(clk))
	if err != nil {
		return err
	}
	dbPath := c.keep
	if dbPath == "" {
		dir, err := os.MkdirTemp("", "locator-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		dbPath = filepath.Join(dir, "demo.db")
	}
	st, err := store.Open(ctx, dbPath, clk)
	if err != nil {
		return err
	}
	defer st.Close()

	t0 := clk.Now()
	stamp := func() string { return fmt.Sprintf("[%5.1fs]", clk.Now().Sub(t0).Seconds()) }
	eng, err := engine.New(engine.Config{
		Client: client, Store: st, Clock: clk, Account: account, Env: brokerclient.EnvLive,
		OnUpdate: func(u engine.Update) {
			w := u.Workflow
			if w == nil {
				return // the demo places no orders
			}
			line := fmt.Sprintf("  %s %-10s → %-10s", stamp(), u.From, w.State)
			switch {
			case !u.QueuedUntil.IsZero():
				line += fmt.Sprintf(" queued: its quote leaves in %.0fs (same-symbol spacing)", u.QueuedUntil.Sub(clk.Now()).Seconds())
			case u.Offer != nil:
				line += fmt.Sprintf(" offer %s", describeLegs(*w, clk.Now()))
			case u.Reason != "" && w.State != states.Quoting:
				line += " " + u.Reason
			case w.State == states.Quoting && w.Kind == states.Locate:
				line += fmt.Sprintf(" quote %d shares, quoteReqID %s…", w.Quantity, w.QuoteReqID[:8])
			}
			fmt.Fprintln(out, line)
		},
	})
	if err != nil {
		return err
	}
	if err := eng.Start(ctx); err != nil {
		return err
	}
	defer eng.Close()

	fmt.Fprintf(out, "locator demo: the simulated broker at %s, its clock shared with the engine at %gx speed.\n", baseURL, c.speed)
	fmt.Fprintf(out, "Account %s (live margin). Every step below is real HTTP to the simulator, persisted in %s.\n\n", account, dbPath)

	capPrice := func(p string) workflow.Policy {
		return workflow.Policy{AutoAccept: true, MaxPrice: decimal.RequireFromString(p)}
	}
	locate := func(symbol string, qty int64, p workflow.Policy) func(context.Context, *engine.Engine) (*engine.Handle, error) {
		return func(ctx context.Context, e *engine.Engine) (*engine.Handle, error) {
			return e.Locate(ctx, engine.Request{Symbol: symbol, Quantity: qty, Policy: p})
		}
	}
	steps := []demoStep{
		{"AAPL 500", "easy to borrow: the engine checks and sends no quote", locate("AAPL", 500, capPrice("0.05")), "AAPL", 500},
		{"HTBX 300, max 0.0200/share", "a hard-to-borrow symbol: quote, wait for the offer, accept inside the 30 s window", locate("HTBX", 300, capPrice("0.02")), "HTBX", 300},
		{"RSHO 1000, SingleUse allowed", "Reg SHO threshold symbol: one quote, two offers (PreBorrow id, SingleUse id.SU); the cheaper allowed side is taken", locate("RSHO", 1000, workflow.Policy{AutoAccept: true, AllowSingleUse: true, MaxPrice: decimal.RequireFromString("0.10")}), "RSHO", 1000},
		{"HTBY 1000, max 0.0200/share", "the offer (0.0300) is above the cap: declined and cancelled, not left to expire", locate("HTBY", 1000, capPrice("0.02")), "HTBY", 1000},
		{"HTBX 200", "inventory already holds 300 HTBX: covered, no quote", locate("HTBX", 200, capPrice("0.02")), "HTBX", 200},
		{"credit back 300 HTBX (Locate)", "return the unused shares; the credit clears a few seconds later", func(ctx context.Context, e *engine.Engine) (*engine.Handle, error) {
			return e.CreditBack(ctx, "HTBX", 300, brokerclient.LocateTypeLocate)
		}, "HTBX", 300},
	}
	var finals []*workflow.Workflow
	for i, s := range steps {
		fmt.Fprintf(out, "%d. %s — %s\n", i+1, s.title, s.why)
		h, err := s.run(ctx, eng)
		if err != nil {
			return fmt.Errorf("step %d: %w", i+1, err)
		}
		w, err := h.Wait(ctx)
		if err != nil {
			return fmt.Errorf("step %d: %w", i+1, err)
		}
		finals = append(finals, w)
		fmt.Fprintf(out, "   ⇒ %s\n\n", summarize(w))
	}

	fmt.Fprintln(out, "Summary")
	p := printer{w: out}
	var rows [][]string
	for i, w := range finals {
		o := outcomeOf(w)
		rows = append(rows, []string{fmt.Sprint(i + 1), string(w.Kind), w.Symbol, i64(w.Requested), i64(w.Quantity), string(w.State), locatePrice(w.Price), o.Total, w.LocateType})
	}
	p.table([]string{"#", "KIND", "SYMBOL", "ASKED", "SENT", "STATE", "PRICE", "TOTAL", "TYPE"}, rows, nil)

	count := func(sub string) (n int) {
		for _, r := range sim.Requests() {
			if strings.Contains(r.Method+" "+r.Path, sub) {
				n++
			}
		}
		return n
	}
	throttled := 0
	for _, r := range sim.Requests() {
		if r.Status == http.StatusTooManyRequests {
			throttled++
		}
	}
	fmt.Fprintf(out, "\nBroker traffic: %d quotes, %d accepts, %d cancels, %d credit-backs, %d history polls, %d requests throttled (429).\n",
		count("POST /v1/api/accounts/locates/quote"), count("POST /v1/api/accounts/locates/accept"),
		count("DELETE /v1/api/accounts/locates/cancel"), count("POST /v1/api/accounts/locates/sell"),
		count("/locates/history"), throttled)
	fmt.Fprintf(out, "Simulated time %.0fs, wall time %.1fs.\n", clk.Now().Sub(t0).Seconds(), time.Since(start).Seconds())
	want := []states.State{states.NotNeeded, states.Filled, states.Filled, states.Declined, states.Covered, states.Credited}
	for i, w := range finals {
		if w.State != want[i] {
			return errors.New("the demo did not end as designed; see the summary")
		}
	}
	return nil
}

// describeLegs shows the offers of a workflow: one leg, or both sides of a
// Reg SHO pair.
func describeLegs(w workflow.Workflow, now time.Time) string {
	var parts []string
	for _, id := range []string{w.QuoteReqID, w.QuoteReqID + ".SU"} {
		l, ok := w.Legs[id]
		if !ok {
			continue
		}
		side := brokerclient.LocateTypeForCode(l.Type)
		if l.Status == 65 {
			parts = append(parts, fmt.Sprintf("%s %s × %d = %s", side, price4(l.Price), w.Quantity, money(l.Price.Mul(decimal.NewFromInt(w.Quantity)))))
		} else {
			parts = append(parts, fmt.Sprintf("%s not priced", side))
		}
	}
	return strings.Join(parts, "; ") + fmt.Sprintf(" (%.0fs left)", w.ExpiresAt.Sub(now).Seconds())
}

func summarize(w *workflow.Workflow) string {
	switch w.State {
	case states.Filled:
		return fmt.Sprintf("filled: %d shares at %s (%s), total %s", w.Quantity, price4(w.Price), w.LocateType, outcomeOf(w).Total)
	case states.Credited:
		return fmt.Sprintf("credited back: %d %s shares", w.Quantity, w.LocateType)
	}
	return fmt.Sprintf("%s: %s", w.State, w.Reason)
}
