package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/store"
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

// parseSymbolQty reads and checks the SYMBOL QTY arguments.
func parseSymbolQty(args []string) (string, int64, error) {
	if len(args) != 2 {
		return "", 0, usagef("want SYMBOL QTY, got %d argument(s)", len(args))
	}
	symbol := args[0]
	if err := brokerclient.ValidateSymbol(symbol); err != nil {
		var ie *brokerclient.InputError
		if errors.As(err, &ie) {
			return "", 0, usagef("symbol %q: %s", symbol, ie.Message)
		}
		return "", 0, usagef("symbol %q: %v", symbol, err)
	}
	qty, err := strconv.ParseInt(args[1], 10, 64)
	if err != nil || qty <= 0 || qty%100 != 0 {
		return "", 0, usagef("quantity %q: want a positive multiple of 100", args[1])
	}
	return symbol, qty, nil
}

func parseMoney(flag, v string) (decimal.Decimal, error) {
	if v == "" {
		return decimal.Zero, nil
	}
	d, err := decimal.NewFromString(v)
	if err != nil || !d.IsPositive() {
		return decimal.Zero, usagef("--%s %q: want a positive number", flag, v)
	}
	return d, nil
}

func (c *locateCommand) run(ctx context.Context, args []string) error {
	symbol, qty, err := parseSymbolQty(args)
	if err != nil {
		return err
	}
	policy := store.Policy{AllowSingleUse: c.allowSingleUse}
	if policy.MaxPrice, err = parseMoney("max-price", c.maxPrice); err != nil {
		return err
	}
	if policy.MaxCost, err = parseMoney("max-cost", c.maxCost); err != nil {
		return err
	}
	// The policy decides when the user gave --yes or set a cap; otherwise ask.
	policy.AutoAccept = c.yes || c.maxPrice != "" || c.maxCost != ""
	out := c.conn.out()
	cfg := engine.Config{OnUpdate: progress(out, c.conn.m, time.Now)}
	if !policy.AutoAccept && isTerminal(os.Stdin) && !c.conn.json {
		cfg.Ask = prompt(c.conn.m)
	}
	sess, err := c.conn.open(ctx, cfg)
	if err != nil {
		return err
	}
	defer sess.close()
	h, err := sess.engine.Locate(ctx, engine.Request{Symbol: symbol, Quantity: qty, Policy: policy})
	if errors.Is(err, engine.ErrInput) {
		return usagef("%v", err)
	}
	if err != nil {
		return err
	}
	w, err := h.Wait(ctx)
	if err != nil {
		return err
	}
	return finish(out, w)
}

// finish prints a workflow's outcome and returns its exit status.
func finish(out printer, w *store.Workflow) error {
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

// prompt asks at the terminal whether to take an offer, counting down the
// seconds left in the window.
func prompt(m *Main) func(ctx context.Context, o engine.Offer) bool {
	return func(ctx context.Context, o engine.Offer) bool {
		fmt.Fprintf(m.Stderr, "Accept %s %d shares at %s (%s) = %s? %s left [y/N] ",
			o.Symbol, o.Shares, price4(o.Price), brokerclient.LocateTypeForCode(o.LocateType), money(o.Total),
			time.Until(o.ExpiresAt).Round(time.Second))
		answer := make(chan string, 1)
		go func() {
			line, _ := bufio.NewReader(os.Stdin).ReadString('\n')
			answer <- strings.TrimSpace(strings.ToLower(line))
		}()
		select {
		case a := <-answer:
			return a == "y" || a == "yes"
		case <-ctx.Done():
			fmt.Fprintln(m.Stderr, "\nno answer in time")
			return false
		}
	}
}

// isTerminal reports whether f is a terminal (a person typing): a character
// device that is not /dev/null, which cron and CI give as stdin.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(st, null)
}
