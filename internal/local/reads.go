package local

import (
	"context"
	"fmt"
	"time"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/ledger"
)

func (s *session) Read(ctx context.Context, req account.ReadRequest) (*account.ReadResult, error) {
	res, err := s.l.read(s.l.gated(ctx), req)
	if err != nil {
		return nil, kinded(err)
	}
	return res, nil
}

// read is one Read on the owner's client, and so on its key pair's pacer.
func (l *Account) read(ctx context.Context, req account.ReadRequest) (*account.ReadResult, error) {
	return readBroker(ctx, l.client, l.account, l.clk.Now(), req)
}

// readBroker reads req for account acct on c; now is the host's time, of
// which the trade date ends a read of fills.
func readBroker(ctx context.Context, c *brokerclient.Client, acct string, now time.Time, req account.ReadRequest) (*account.ReadResult, error) {
	dated := req.What == account.ReadHistoricalPositions || req.What == account.ReadFills
	switch {
	case dated && req.Date.IsZero():
		return nil, account.Errorf(account.KindInput, fmt.Sprintf("read %s: a date is required; nothing was sent", req.What))
	case !dated && !req.Date.IsZero():
		return nil, account.Errorf(account.KindInput, fmt.Sprintf("read %s takes no date; nothing was sent", req.What))
	}
	var out account.ReadResult
	var err error
	switch req.What {
	case account.ReadAccounts:
		out.Accounts, _, err = c.Accounts.List(ctx)
	case account.ReadAccount:
		out.Account, _, err = c.Accounts.Get(ctx, acct)
	case account.ReadPnL:
		out.PnL, _, err = c.Accounts.PnL(ctx, acct)
	case account.ReadPositions:
		out.Positions, _, err = c.Positions.Open(ctx, acct)
	case account.ReadClosedPositions:
		out.Closed, _, err = c.Positions.Closed(ctx, acct)
	case account.ReadHistoricalPositions:
		out.Historical, _, err = c.Positions.Historical(ctx, acct, req.Date)
	case account.ReadOrders:
		out.Orders, _, err = c.Orders.Book(ctx, acct)
	case account.ReadFills:
		out.Fills, err = c.Orders.FillsSince(ctx, acct, req.Date, ledger.TradeDate(now))
	case account.ReadRoutes:
		out.Routes, _, err = c.Orders.Routes(ctx, acct)
	case account.ReadInventory:
		out.Inventory, _, err = c.Locates.Inventory(ctx, acct)
	case account.ReadLocateHistory:
		out.History, _, err = c.Locates.History(ctx, acct)
	default:
		return nil, account.Errorf(account.KindInput, fmt.Sprintf("read %q: not a kind of record (accounts, pnl, positions, ...); nothing was sent", req.What))
	}
	if err != nil {
		return nil, err
	}
	out.Skew = c.ClockSkew()
	return &out, nil
}
