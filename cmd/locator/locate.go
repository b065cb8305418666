package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// locateCommand ensures located shares of a symbol.
type locateCommand struct {
	conn           connFlags
	maxPrice       string
	maxCost        string
	allowSingleUse bool
	yes            bool
}

func (c *locateCommand) synopsis() string {
	return "SYMBOL QTY: ensure QTY located shares (quotes only the shortfall), accepting within policy"
}

func (c *locateCommand) flags(fs *pflag.FlagSet) {
	c.conn.register(fs)
	fs.StringVar(&c.maxPrice, "max-price", "", "highest price per share to accept")
	fs.StringVar(&c.maxCost, "max-cost", "", "highest total cost (price × shares) to accept")
	fs.BoolVar(&c.allowSingleUse, "allow-single-use", false, "allow the SingleUse side of a Reg SHO pair (cannot be credited back once used)")
	fs.BoolVarP(&c.yes, "yes", "y", false, "accept an offer within policy without asking")
}

// parseSymbolQty reads and checks the SYMBOL QTY arguments (the domain's
// rules: nothing is recorded or sent for a bad one).
func parseSymbolQty(args []string) (string, int64, error) {
	if len(args) != 2 {
		return "", 0, usagef("want SYMBOL QTY, got %d argument(s)", len(args))
	}
	if err := workflow.ValidateSymbol(args[0]); err != nil {
		return "", 0, err
	}
	qty, err := workflow.ParseQuantity(args[1])
	return args[0], qty, err
}

// parsePolicy reads the cost-policy flags; --yes or a cap lets the policy
// decide alone, otherwise a person at the terminal is asked.
func parsePolicy(maxPrice, maxCost string, allowSingleUse, yes bool) (workflow.Policy, error) {
	p := workflow.Policy{AllowSingleUse: allowSingleUse, AutoAccept: yes}
	var err error
	if p.MaxPrice, err = workflow.ParsePrice("--max-price", maxPrice); err != nil {
		return p, err
	}
	if p.MaxCost, err = workflow.ParseCost("--max-cost", maxCost); err != nil {
		return p, err
	}
	p.AutoAccept = p.AutoAccept || p.Capped()
	return p, nil
}

func (c *locateCommand) run(ctx context.Context, args []string) error {
	symbol, qty, err := parseSymbolQty(args)
	if err != nil {
		return err
	}
	policy, err := parsePolicy(c.maxPrice, c.maxCost, c.allowSingleUse, c.yes)
	if err != nil {
		return err
	}
	if _, err := c.conn.resolve(true); err != nil {
		return err
	}
	canAsk := !policy.AutoAccept && c.conn.m.interactive(c.conn.json)
	// Refused before the session opens: nothing is recorded or sent.
	if err := (engine.Request{Symbol: symbol, Quantity: qty, Policy: policy}).Validate(canAsk); err != nil {
		return err
	}
	out := c.conn.out()
	var ask func(context.Context, engine.Offer) bool
	if canAsk {
		ask = prompt(c.conn.m)
	}
	acct, err := c.conn.attach(ctx, "locate", ask, progress(out, c.conn.m, time.Now))
	if err != nil {
		return err
	}
	defer acct.close()
	id, err := acct.Locate(ctx, engine.Request{Symbol: symbol, Quantity: qty, Policy: policy})
	if err != nil {
		return err
	}
	return follow(ctx, acct, out, id)
}

// follow waits for workflow id and prints its outcome. Interrupted, it
// withdraws the request (an open offer is cancelled at the broker) before
// the command exits 130.
func follow(ctx context.Context, acct *account, out printer, id string) error {
	w, err := acct.Wait(ctx, id)
	if err != nil {
		if ctx.Err() != nil {
			acct.withdraw(ctx, id)
		}
		return err
	}
	return finish(out, w)
}

// finish prints a workflow's outcome and returns its exit status.
func finish(out printer, w *workflow.Workflow) error {
	o := outcomeOf(w)
	text := fmt.Sprintf("%s %s: %s", w.Symbol, w.ID, w.State)
	switch w.State {
	case states.Filled:
		text += fmt.Sprintf(" — %d shares at %s (%s) = %s", w.Quantity, price4(w.Price), w.LocateType, o.Total)
	case states.Credited:
		text += fmt.Sprintf(" — %d %s shares credited back", w.Quantity, w.LocateType)
	default:
		if w.Reason != "" {
			text += " — " + w.Reason
		}
	}
	out.event(o, text)
	return exitFor(w)
}

// progress prints each state change as it happens.
func progress(out printer, m *Main, now func() time.Time) func(engine.Update) {
	return func(u engine.Update) {
		if u.Order != nil {
			o := u.Order
			if out.json {
				out.event(map[string]any{"event": "order", "clientOrderId": o.LookupID(), "symbol": o.Symbol, "from": u.From, "to": o.State, "status": o.OrderStatus, "reason": u.Reason}, "")
				return
			}
			line := fmt.Sprintf("order %s %s: %s → %s", o.LookupID(), o.Symbol, u.From, o.State)
			if o.OrderStatus != "" {
				line += " (" + o.OrderStatus + ")"
			}
			if u.Reason != "" {
				line += " — " + u.Reason
			}
			fmt.Fprintln(m.Stderr, line)
			return
		}
		w := u.Workflow
		if out.json {
			out.event(map[string]any{"event": "transition", "id": w.ID, "symbol": w.Symbol, "from": u.From, "to": w.State, "reason": u.Reason}, "")
			return
		}
		line := fmt.Sprintf("%s %s: %s → %s", w.Symbol, w.ID, u.From, w.State)
		if u.Offer != nil {
			o := u.Offer
			left := o.ExpiresAt.Sub(now()).Round(time.Second)
			line += fmt.Sprintf(" — offer %s × %d = %s (%s, %s left)", price4(o.Price), o.Shares, money(o.Total),
				brokerclient.LocateTypeForCode(o.LocateType), left)
		} else if u.Reason != "" && w.State != states.Quoting {
			line += " — " + u.Reason
		}
		fmt.Fprintln(m.Stderr, line)
	}
}

// prompt asks at the terminal whether to take an offer, with the seconds
// left in the window.
func prompt(m *Main) func(ctx context.Context, o engine.Offer) bool {
	return func(ctx context.Context, o engine.Offer) bool {
		return m.ask(ctx, fmt.Sprintf("Accept %s %d shares at %s (%s) = %s? %s left [y/N] ",
			o.Symbol, o.Shares, price4(o.Price), brokerclient.LocateTypeForCode(o.LocateType), money(o.Total),
			time.Until(o.ExpiresAt).Round(time.Second)))
	}
}
