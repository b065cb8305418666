package main

import (
	"context"
	"strings"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/service"
	"github.com/locatorhq/locator/workflow"
)

// quoteCommand prices located shares without taking them: a price check
// per symbol, each offer cancelled at the broker as soon as it is seen.
type quoteCommand struct {
	conn     connFlags
	quantity int64
}

func (c *quoteCommand) synopsis() string {
	return "show the broker's locate offer (price, total, type, Reg SHO side) for each SYMBOL, then cancel it: nothing is accepted"
}

func (c *quoteCommand) flags(fs *pflag.FlagSet) {
	c.conn.register(fs)
	fs.Int64VarP(&c.quantity, "quantity", "q", workflow.Lot, "shares to price (a multiple of 100)")
}

func (c *quoteCommand) run(ctx context.Context, args []string) error {
	items, err := c.items(args)
	if err != nil {
		return err
	}
	sess, err := c.conn.open(ctx, "quote", nil, service.RoleCommand)
	if err != nil {
		return err
	}
	defer sess.close()
	res, err := sess.Quote(ctx, account.QuoteRequest{Items: items})
	if err != nil {
		return err
	}
	// A person at a terminal watches the changes (a quote queued behind the
	// same-symbol spacing waits up to half a minute) on stderr; stdout
	// holds the prices alone.
	show := func(account.Update) {}
	if d := c.conn.m.display(); d.live {
		show = progress(c.conn.m.printer(formatTable), d)
	}
	ws := followAll(ctx, sess, res.Started, show)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var rows [][]string
	var objs []any
	for _, w := range ws {
		for _, q := range quoteRowsOf(w) {
			rows, objs = append(rows, q.row()), append(objs, q)
		}
	}
	c.conn.out().table(quoteHeader, rows, objs)
	if err := res.Err(); err != nil {
		return err
	}
	return worstExit(ws)
}

// items checks the symbols and the quantity before anything is opened or
// sent.
func (c *quoteCommand) items(args []string) ([]account.QuoteItem, error) {
	if len(args) == 0 {
		return nil, usagef("want SYMBOL [SYMBOL ...]")
	}
	if err := workflow.ValidateQuantity(c.quantity); err != nil {
		return nil, err
	}
	items := make([]account.QuoteItem, len(args))
	for i, s := range args {
		if err := workflow.ValidateSymbol(s); err != nil {
			return nil, err
		}
		items[i] = account.QuoteItem{Symbol: s, Quantity: c.quantity}
	}
	return items, nil
}

// quoteRow is one offer a price check saw (a row per side of a Reg SHO
// pair), or its end when it saw none.
type quoteRow struct {
	ID            string `json:"id"`
	Symbol        string `json:"symbol"`
	State         string `json:"state"`
	QuoteReqID    string `json:"quoteReqID,omitempty"`
	LocateType    string `json:"locateType,omitempty"`
	RegSHOSide    string `json:"regShoSide,omitempty"`
	Shares        int64  `json:"shares"`
	PricePerShare string `json:"pricePerShare"`
	Total         string `json:"total"`
	// LocateStatus is the offer's last history row status (52 once
	// cancelled); zero on a row without an offer.
	LocateStatus workflow.Status `json:"locateStatus,omitempty"`
	Outcome      string          `json:"outcome"`
}

var quoteHeader = []string{"SYMBOL", "STATE", "TYPE", "REG SHO SIDE", "SHARES", "PRICE/SHARE", "TOTAL", "QUOTE ID", "AT THE BROKER"}

// row is q as a table or CSV record: an offer's last history status, or
// the outcome of a price check that saw none.
func (q quoteRow) row() []string {
	last := q.Outcome
	if q.LocateStatus != 0 {
		last = q.LocateStatus.String()
	}
	return []string{q.Symbol, q.State, q.LocateType, q.RegSHOSide, i64(q.Shares), q.PricePerShare, q.Total, q.QuoteReqID, last}
}

// quoteRowsOf is what w saw: a row per priced leg, or one row saying how
// it ended (nil when w was not followed to its end).
func quoteRowsOf(w *workflow.Workflow) []quoteRow {
	if w == nil {
		return nil
	}
	base := quoteRow{ID: w.ID, Symbol: w.Symbol, State: string(w.State), Shares: w.Requested, Outcome: account.OutcomeOf(w).Words}
	if !w.SentAt.IsZero() {
		base.QuoteReqID = w.QuoteReqID // a quote left
	}
	offers := workflow.Prices(w)
	if len(offers) == 0 {
		return []quoteRow{base}
	}
	out := make([]quoteRow, len(offers))
	for i, o := range offers {
		q := base
		q.QuoteReqID, q.LocateType, q.RegSHOSide = o.QuoteReqID, workflow.TypeName(o.LocateType), regSHOSide(o)
		q.PricePerShare, q.Total, q.LocateStatus = price4(o.Price), money(o.Total), w.Legs[o.QuoteReqID].Status
		out[i] = q
	}
	return out
}

// regSHOSide names the side of a Reg SHO pair an offer is (spec "Short
// locates" rule 2: the id is the PreBorrow side, id.SU the SingleUse
// side); empty for a symbol off the threshold list.
func regSHOSide(o workflow.Offer) string {
	switch {
	case strings.HasSuffix(o.QuoteReqID, ".SU"):
		return "SingleUse (.SU)"
	case o.LocateType == workflow.TypePreBorrow:
		return "PreBorrow"
	}
	return ""
}
