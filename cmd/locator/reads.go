package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/internal/config"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/wire"
	"github.com/locatorhq/locator/ledger"
	"github.com/locatorhq/locator/states"
)

// The read commands print what the broker says about the account for a
// person (aligned tables: money with 2 decimals, prices as the broker gave
// them) or, with --json, the broker's records one per line. Each read is
// the account's Read (connFlags.read): through its live owner when one
// runs, so that the owner alone draws on the key pair. They send only GETs
// and open the database only to find the owner, read-only.

// accountsCommand lists the accounts the keys reach (spec "Accounts and
// profit and loss"); the list also proves the keys work.
type accountsCommand struct{ conn connFlags }

func (c *accountsCommand) flags(fs *pflag.FlagSet) { c.conn.register(fs) }

func (c *accountsCommand) run(ctx context.Context, args []string) error {
	// The list needs no account: it is how a person finds theirs.
	r, s, err := c.conn.read(ctx, "accounts", false, account.ReadRequest{What: account.ReadAccounts})
	if errors.Is(err, brokerclient.ErrNotFound) {
		// Spec: the list doubles as a credential check (404 invalid).
		if s.Auth == config.AuthPartner {
			return console.Usagef("the broker refused the partner token (404): run 'locator login --partner' again")
		}
		return console.Usagef("the broker refused these keys (404): check LOCATOR_KEY_ID and LOCATOR_SECRET")
	}
	if err != nil {
		return err
	}
	console.Accounts(c.conn.out(), r.Accounts, s.Account)
	return nil
}

// pnlCommand prints the account's profit and loss: the aggregates, then one
// row per lot joined to the open positions for side and shares (spec "Profit
// and loss response" rule 5: the rows carry neither).
type pnlCommand struct{ conn connFlags }

func (c *pnlCommand) flags(fs *pflag.FlagSet) { c.conn.register(fs) }

func (c *pnlCommand) run(ctx context.Context, args []string) error {
	p, s, err := c.conn.read(ctx, "pnl", true, account.ReadRequest{What: account.ReadPnL})
	if err != nil {
		return accountError(s.Account, err)
	}
	out := c.conn.out()
	var open []brokerclient.Position
	if !out.JSON() { // the JSON is the broker's record alone: no join
		r, _, err := c.conn.read(ctx, "pnl", true, account.ReadRequest{What: account.ReadPositions})
		if err != nil {
			return accountError(s.Account, err)
		}
		open = r.Positions
	}
	console.PnL(out, p.PnL, open)
	return nil
}

// positionsCommand prints open positions, or with --closed the closed-lot
// lifecycle rows, or with --historical DATE the lots held at that date's end.
type positionsCommand struct {
	conn       connFlags
	closed     bool
	historical string
}

func (c *positionsCommand) flags(fs *pflag.FlagSet) {
	c.conn.register(fs)
	fs.BoolVar(&c.closed, "closed", false, "closed positions (their realized P&L)")
	fs.StringVar(&c.historical, "historical", "", "positions held at the end of DATE (YYYY-MM-DD)")
}

func (c *positionsCommand) run(ctx context.Context, args []string) error {
	if c.closed && c.historical != "" {
		return console.Usagef("--closed and --historical: choose one")
	}
	var date time.Time
	if c.historical != "" {
		var err error
		if date, err = ledger.PastTradeDate("--historical", c.historical, c.conn.m.Clock.Now()); err != nil {
			return err
		}
	}
	req := account.ReadRequest{What: account.ReadPositions}
	switch {
	case c.closed:
		req.What = account.ReadClosedPositions
	case c.historical != "":
		req = account.ReadRequest{What: account.ReadHistoricalPositions, Date: date}
	}
	r, s, err := c.conn.read(ctx, "positions", true, req)
	if err != nil {
		return accountError(s.Account, err)
	}
	out := c.conn.out()
	switch req.What {
	case account.ReadClosedPositions:
		console.ClosedPositions(out, r.Closed)
	case account.ReadHistoricalPositions:
		console.HistoricalPositions(out, r.Historical)
	default:
		console.OpenPositions(out, r.Positions)
	}
	return nil
}

// ordersCommand prints today's order book, or with --history DATE the fills
// since DATE: the one-week archive for a recent DATE, the paginated
// one-year history for an older one (spec "Orders").
type ordersCommand struct {
	conn    connFlags
	history string
}

func (c *ordersCommand) flags(fs *pflag.FlagSet) {
	c.conn.register(fs)
	fs.StringVar(&c.history, "history", "", "fills since DATE (YYYY-MM-DD): the archive within a week, the paginated history up to a year back")
}

// cancel cancels a working order locator placed, through its order
// workflow: the cancel is recorded before it is sent, and the order ends
// with the broker's answer.
func (c *ordersCommand) cancel(ctx context.Context, args []string) error {
	switch {
	case len(args) != 1 || strings.ContainsAny(args[0], "/?#% \t"):
		return console.Usagef("want 'orders cancel CLIENT_ORDER_ID'")
	case c.conn.format == console.CSV:
		return console.Usagef("-o csv: 'orders cancel' prints how the order ended, as a line or JSON (-o json); nothing was sent")
	}
	out := c.conn.out()
	sess, err := c.conn.open(ctx, "orders cancel", nil, wire.RoleCommand)
	if err != nil {
		return err
	}
	defer sess.Close()
	o, err := sess.CancelOrder(ctx, account.CancelOrderRequest{ClientOrderID: args[0]})
	if account.KindOf(err) == account.KindNotOpen {
		return console.Usagef("%v (only orders locator placed and still working can be cancelled here); nothing was sent", err)
	}
	if err != nil {
		return err
	}
	out.Event(map[string]any{"clientOrderId": o.LookupID(), "symbol": o.Symbol, "state": o.State, "orderStatus": o.OrderStatus, "executed": o.Executed},
		fmt.Sprintf("order %s %s: %s (%s), %d executed", o.LookupID(), o.Symbol, o.State, o.OrderStatus, o.Executed))
	if o.State != states.Canceled {
		return &console.CodeError{Code: console.ExitBroker, Msg: fmt.Sprintf("order %s ended %s, not canceled", o.LookupID(), o.State)}
	}
	return nil
}

func (c *ordersCommand) run(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "cancel" {
		return c.cancel(ctx, args[1:])
	}
	if len(args) > 0 {
		return console.Usagef("unexpected argument %q", args[0])
	}
	var since time.Time
	if c.history != "" {
		var err error
		if since, err = ledger.PastTradeDate("--history", c.history, c.conn.m.Clock.Now()); err != nil {
			return err
		}
	}
	if c.history == "" {
		r, s, err := c.conn.read(ctx, "orders", true, account.ReadRequest{What: account.ReadOrders})
		if err != nil {
			return accountError(s.Account, err)
		}
		console.OrderBook(c.conn.out(), r.Orders)
		return nil
	}
	r, s, err := c.conn.read(ctx, "orders", true, account.ReadRequest{What: account.ReadFills, Date: since})
	var in *brokercode.InputError
	switch {
	case errors.As(err, &in):
		return console.Usagef("--history %s", in.Message)
	case account.KindOf(err) == account.KindInput:
		return console.Usagef("--history: %v", err)
	case err != nil:
		return accountError(s.Account, err)
	}
	console.Fills(c.conn.out(), r.Fills)
	return nil
}
