// Package demo runs locator's main job end to end for a newcomer: the
// embedded simulator of the broker on a sped-up clock it shares with the
// account's owner, and six narrated workflows through the account API that
// every command uses, one of each kind of outcome.
package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/internal/service"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/internal/wire"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// Config is how the demo runs.
type Config struct {
	// Out receives the narration.
	Out io.Writer
	// Speed runs the shared clock this many times faster than real time.
	Speed float64
	// DB, when set, keeps the demo's database at this path (default: a
	// temporary file, removed at the end).
	DB string
}

// step is one narrated request.
type step struct {
	title, why string
	run        func(ctx context.Context, a account.Account) (string, error)
}

// Run runs the demo; it fails when a workflow did not end as designed.
func Run(ctx context.Context, cfg Config) error {
	out, speed := cfg.Out, cfg.Speed
	start := time.Now()
	clk := clock.NewScaled(start, speed)

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
	acct := key.Accounts[0]
	client, err := brokerclient.NewClient(brokerclient.WithBaseURL(baseURL),
		brokerclient.WithCredentials(key.KeyID, key.Secret), brokerclient.WithClock(clk))
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "locator-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	dbPath := cfg.DB
	if dbPath == "" {
		dbPath = filepath.Join(dir, "demo.db")
	}
	st, err := store.Open(ctx, dbPath, clk)
	if err != nil {
		return err
	}
	defer st.Close()
	owner, err := service.Own(ctx, service.OwnerConfig{
		Engine: engine.Config{Client: client, Store: st, Clock: clk, Account: acct, Env: brokerclient.EnvLive},
		DB:     dbPath, BaseURL: baseURL, RuntimeDir: dir, Role: wire.RoleCommand,
	})
	if err != nil {
		return err
	}
	defer owner.Close()
	a := owner.Local().As(account.Caller{Name: fmt.Sprintf("%d demo", os.Getpid()), Env: brokerclient.EnvLive})

	fmt.Fprintf(out, "locator demo: the simulated broker at %s, its clock shared with the account's owner at %gx speed.\n", baseURL, speed)
	fmt.Fprintf(out, "Account %s (live margin). Every step below is real HTTP to the simulator, persisted in %s.\n\n", acct, dbPath)
	t0 := clk.Now()
	finals, err := runSteps(ctx, out, clk, t0, a)
	if err != nil {
		return err
	}
	printSummary(out, finals)
	printTraffic(out, sim.Requests())
	fmt.Fprintf(out, "Simulated time %.0fs, wall time %.1fs.\n", clk.Now().Sub(t0).Seconds(), time.Since(start).Seconds())
	want := []states.State{states.NotNeeded, states.Filled, states.Filled, states.Declined, states.Covered, states.Credited}
	for i, w := range finals {
		if w.State != want[i] {
			return errors.New("the demo did not end as designed; see the summary")
		}
	}
	return nil
}

// steps are the demo's six requests, one of each kind of outcome.
func steps() []step {
	return []step{
		{"AAPL 500", "easy to borrow: the engine checks and sends no quote", locate("AAPL", 500, capPrice("0.05"))},
		{"HTBX 300, max 0.0200/share", "a hard-to-borrow symbol: quote, wait for the offer, accept inside the 30 s window", locate("HTBX", 300, capPrice("0.02"))},
		{"RSHO 1000, SingleUse allowed", "Reg SHO threshold symbol: one quote, two offers (PreBorrow id, SingleUse id.SU); the cheaper allowed side is taken", locate("RSHO", 1000, workflow.Policy{AutoAccept: true, AllowSingleUse: true, MaxPrice: decimal.RequireFromString("0.10")})},
		{"HTBY 1000, max 0.0200/share", "the offer (0.0300) is above the cap: declined and cancelled, not left to expire", locate("HTBY", 1000, capPrice("0.02"))},
		{"HTBX 200", "inventory already holds 300 HTBX: covered, no quote", locate("HTBX", 200, capPrice("0.02"))},
		{"credit back 300 HTBX (Locate)", "return the unused shares; the credit clears a few seconds later", func(ctx context.Context, a account.Account) (string, error) {
			res, err := a.CreditBack(ctx, account.CreditBackRequest{Symbol: "HTBX", Quantity: 300, Type: brokercode.LocateTypeLocate})
			if err != nil {
				return "", err
			}
			return res.Started[0].ID, nil
		}},
	}
}

// capPrice is a policy that accepts an offer up to price p a share.
func capPrice(p string) workflow.Policy {
	return workflow.Policy{AutoAccept: true, MaxPrice: decimal.RequireFromString(p)}
}

// locate is a step that locates qty shares of symbol under policy p.
func locate(symbol string, qty int64, p workflow.Policy) func(context.Context, account.Account) (string, error) {
	return func(ctx context.Context, a account.Account) (string, error) {
		res, err := a.Locate(ctx, account.LocateRequest{Items: []account.LocateItem{{Symbol: symbol, Quantity: qty, Policy: p}}})
		if err != nil {
			return "", err
		}
		if s := res.Started[0]; s.Refused != nil {
			return "", s.Refused
		}
		return res.Started[0].ID, nil
	}
}

// runSteps runs the steps one after the other, narrating each workflow's
// changes until it ends, and returns their final records.
func runSteps(ctx context.Context, out io.Writer, clk clock.Clock, t0 time.Time, a account.Account) ([]*workflow.Workflow, error) {
	updates, err := a.Subscribe(ctx)
	if err != nil {
		return nil, err
	}
	narrate := narrator(out, clk, t0)
	var finals []*workflow.Workflow
	for i, s := range steps() {
		fmt.Fprintf(out, "%d. %s — %s\n", i+1, s.title, s.why)
		id, err := s.run(ctx, a)
		if err != nil {
			return nil, fmt.Errorf("step %d: %w", i+1, err)
		}
		w, err := narrated(ctx, a, updates, id, narrate)
		if err != nil {
			return nil, fmt.Errorf("step %d: %w", i+1, err)
		}
		finals = append(finals, w)
		fmt.Fprintf(out, "   ⇒ %s\n\n", account.OutcomeOf(w).Words)
	}
	return finals, nil
}

// narrator writes one line per workflow change, stamped with the
// simulated seconds since t0.
func narrator(out io.Writer, clk clock.Clock, t0 time.Time) func(account.Update) {
	return func(u account.Update) {
		w := u.Workflow
		line := fmt.Sprintf("  [%5.1fs] %-10s → %-10s", clk.Now().Sub(t0).Seconds(), u.From, w.State)
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
	}
}

// printSummary tables the steps' final records.
func printSummary(out io.Writer, finals []*workflow.Workflow) {
	fmt.Fprintln(out, "Summary")
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tKIND\tSYMBOL\tASKED\tSENT\tSTATE\tPRICE\tTOTAL\tTYPE")
	for i, w := range finals {
		// A declined offer keeps the price it was offered at; only a fill has a total.
		price, total := "", ""
		if p := w.OfferPrice(); p.IsPositive() && w.Kind == states.Locate {
			price = p.StringFixed(4)
		}
		if !w.Price.IsZero() {
			total = w.Total().StringFixed(2)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\n", i+1, w.Kind, w.Symbol, w.Requested, w.Quantity, w.State, price, total, w.LocateType)
	}
	tw.Flush()
}

// printTraffic counts the broker requests the demo made, from the
// simulator's log.
func printTraffic(out io.Writer, log []brokersim.RequestRecord) {
	count := func(sub string) (n int) {
		for _, r := range log {
			if strings.Contains(r.Method+" "+r.Path, sub) {
				n++
			}
		}
		return n
	}
	throttled := 0
	for _, r := range log {
		if r.Status == http.StatusTooManyRequests {
			throttled++
		}
	}
	fmt.Fprintf(out, "\nBroker traffic: %d quotes, %d accepts, %d cancels, %d credit-backs, %d history polls, %d requests throttled (429).\n",
		count("POST /v1/api/accounts/locates/quote"), count("POST /v1/api/accounts/locates/accept"),
		count("DELETE /v1/api/accounts/locates/cancel"), count("POST /v1/api/accounts/locates/sell"),
		count("/locates/history"), throttled)
}

// narrated narrates workflow id's changes from the account's updates
// (subscribed before it started, so none is missed) until it ends, and
// returns its final record.
func narrated(ctx context.Context, a account.Account, updates <-chan account.Update, id string, narrate func(account.Update)) (*workflow.Workflow, error) {
	for {
		select {
		case u, ok := <-updates:
			if !ok {
				return a.Follow(ctx, account.FollowRequest{ID: id}, nil)
			}
			if u.Workflow == nil || u.Workflow.ID != id {
				continue
			}
			narrate(u)
			if u.Workflow.Terminal() {
				return u.Workflow, nil
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
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
		side := brokercode.LocateTypeForCode(l.Type)
		if l.Status == 65 {
			parts = append(parts, fmt.Sprintf("%s %s × %d = %s", side, l.Price.StringFixed(4), w.Quantity, l.Price.Mul(decimal.NewFromInt(w.Quantity)).StringFixed(2)))
		} else {
			parts = append(parts, fmt.Sprintf("%s not priced", side))
		}
	}
	return strings.Join(parts, "; ") + fmt.Sprintf(" (%.0fs left)", w.ExpiresAt.Sub(now).Seconds())
}
