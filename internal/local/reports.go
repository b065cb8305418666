package local

import (
	"context"
	"fmt"
	"time"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/internal/report"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/ledger"
)

func (s *session) Report(ctx context.Context, req account.ReportRequest) (*locator.Report, error) {
	ctx = s.l.gated(ctx)
	if err := report.CheckRange(req.Range); err != nil {
		return nil, kinded(err)
	}
	fees, _, err := ledger.Check(ctx, s.l.client, s.l.st, s.l.account, s.l.clk.Now(), report.FeeWindow(req.Range), ledger.FeeGrace)
	if err != nil {
		return nil, kinded(err)
	}
	r, err := report.Run(ctx, s.l.st, s.l.account, fees, s.l.clk.Now(), req.Range)
	return r, kinded(err)
}

func (s *session) Audit(ctx context.Context, req account.AuditRequest) (*locator.AuditTrail, error) {
	t, err := audit(s.l.gated(ctx), s.l.client, s.l.st, s.l.account, s.l.clk.Now(), req)
	return t, kinded(err)
}

func (s *session) Plan(ctx context.Context, req account.PlanRequest) (*account.PlanResult, error) {
	p, err := plan(s.l.gated(ctx), s.l.client, s.l.st, s.l.account, s.l.clk.Now(), req)
	return p, kinded(err)
}

func (s *session) Size(ctx context.Context, req account.SizeRequest) (*locator.Sizing, error) {
	z, err := ledger.Size(s.l.gated(ctx), s.l.client, s.l.st, s.l.account, req.Symbol, req.Price, req.Target)
	return z, kinded(err)
}

// audit is the audit trail of req for account acct on c and st: the order
// book read (on c, whose answer tells the broker's clock), then
// report.AuditBook; now is the host's time.
func audit(ctx context.Context, c *brokerclient.Client, st *store.Store, acct string, now time.Time, req account.AuditRequest) (*locator.AuditTrail, error) {
	if err := report.CheckRange(req.Range); err != nil {
		return nil, err
	}
	if req.Days < 0 {
		return nil, brokercode.Invalid("days", "%d: want zero or more", req.Days)
	}
	book, _, err := c.Orders.Book(ctx, acct)
	if err != nil {
		return nil, err
	}
	return report.AuditBook(ctx, st, acct, book, c.ClockSkew(), now, req.Range, req.Days)
}

// plan is the plan of req for account acct on c and st: one read of the
// account tells the broker's clock, whose calendar the days are counted
// on, then report.Plan; now is the host's time.
func plan(ctx context.Context, c *brokerclient.Client, st *store.Store, acct string, now time.Time, req account.PlanRequest) (*account.PlanResult, error) {
	switch {
	case req.Days < 1:
		return nil, brokercode.Invalid("days", "%d: want 1 or more", req.Days)
	case len(req.Symbols) == 0:
		return nil, brokercode.Invalid("symbols", "none to plan")
	}
	for _, sym := range req.Symbols {
		if err := brokercode.ValidateSymbol(sym); err != nil {
			return nil, fmt.Errorf("plan: %w", err)
		}
	}
	if _, _, err := c.Accounts.Get(ctx, acct); err != nil {
		return nil, err
	}
	skew := c.ClockSkew()
	s, err := report.Plan(ctx, st, report.PlanOptions{Account: acct, Symbols: req.Symbols, Days: req.Days,
		Today: ledger.TradeDate(now.Add(skew)), Skew: skew})
	if err != nil {
		return nil, err
	}
	return &account.PlanResult{Suggestions: s}, nil
}
