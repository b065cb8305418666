package main

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/market"
	"github.com/locatorhq/locator/service"
	"github.com/locatorhq/locator/workflow"
)

// shortableCommand tells, per symbol, whether it is easy to borrow, what
// located inventory holds, and the last offers seen, from the owner's
// view of the account (Status).
type shortableCommand struct {
	conn      connFlags
	watchlist string
}

func (c *shortableCommand) synopsis() string {
	return "show for each SYMBOL (or --watchlist row) whether it is easy to borrow, its located inventory and the last offers seen"
}

func (c *shortableCommand) flags(fs *pflag.FlagSet) {
	c.conn.register(fs)
	fs.StringVar(&c.watchlist, "watchlist", "", "CSV file of symbol, quantity[, max price] rows (the locate watchlist; its symbols are read)")
}

func (c *shortableCommand) run(ctx context.Context, args []string) error {
	symbols, err := c.symbols(args)
	if err != nil {
		return err
	}
	sess, err := c.conn.open(ctx, "shortable", nil, service.RoleCommand)
	if err != nil {
		return err
	}
	defer sess.close()
	st, err := sess.Status(ctx, account.StatusRequest{Symbols: symbols})
	if err != nil {
		return err
	}
	var rows [][]string
	var objs []any
	for _, sh := range st.Shortable {
		r := shortableOf(sh)
		rows, objs = append(rows, r.row()), append(objs, r)
	}
	c.conn.out().table(shortableHeader, rows, objs)
	return nil
}

// symbols are the arguments, or the watchlist's symbols, checked.
func (c *shortableCommand) symbols(args []string) ([]string, error) {
	if c.watchlist != "" {
		if len(args) != 0 {
			return nil, usagef("give SYMBOL arguments or --watchlist, not both")
		}
		items, err := readWatchlist(c.watchlist, workflow.Policy{})
		if err != nil {
			return nil, err
		}
		var out []string
		for _, it := range items {
			out = append(out, it.Symbol)
		}
		return out, nil
	}
	if len(args) == 0 {
		return nil, usagef("want SYMBOL [SYMBOL ...] or --watchlist FILE")
	}
	for _, s := range args {
		if err := workflow.ValidateSymbol(s); err != nil {
			return nil, err
		}
	}
	return args, nil
}

// shortableRow is one symbol as shortable prints it.
type shortableRow struct {
	Symbol       string `json:"symbol"`
	EasyToBorrow bool   `json:"easyToBorrow"`
	// Located is the symbol's available located shares, by locate type.
	Located []locatedShares `json:"located"`
	// Offers are the last offers seen, each side of a Reg SHO pair.
	Offers     []offerSeen `json:"offers"`
	OfferedAt  time.Time   `json:"offeredAt,omitzero"`
	OfferState string      `json:"offerState,omitempty"`
}

type locatedShares struct {
	LocateType brokerclient.LocateType `json:"locateType"`
	Available  int64                   `json:"available"`
}

type offerSeen struct {
	QuoteReqID    string `json:"quoteReqID"`
	LocateType    string `json:"locateType"`
	RegSHOSide    string `json:"regShoSide,omitempty"`
	Shares        int64  `json:"shares"`
	PricePerShare string `json:"pricePerShare"`
	Total         string `json:"total"`
}

var shortableHeader = []string{"SYMBOL", "EASY TO BORROW", "LOCATED", "LAST OFFERS", "OFFERED AT", "ENDED"}

func shortableOf(sh account.Shortable) shortableRow {
	r := shortableRow{Symbol: sh.Symbol, EasyToBorrow: sh.EasyToBorrow, Located: []locatedShares{}, Offers: []offerSeen{}, OfferState: string(sh.OfferState)}
	for _, l := range sh.Located {
		r.Located = append(r.Located, locatedShares{LocateType: l.Type(), Available: l.Available})
	}
	for _, o := range sh.Offers {
		r.Offers = append(r.Offers, offerSeen{QuoteReqID: o.QuoteReqID, LocateType: workflow.TypeName(o.LocateType), RegSHOSide: regSHOSide(o),
			Shares: o.Shares, PricePerShare: price4(o.Price), Total: money(o.Total)})
	}
	if !sh.OfferedAt.IsZero() {
		r.OfferedAt = sh.OfferedAt.UTC()
	}
	return r
}

func (r shortableRow) row() []string {
	etb := "no"
	if r.EasyToBorrow {
		etb = "yes"
	}
	var located, offers []string
	for _, l := range r.Located {
		located = append(located, i64(l.Available)+" "+string(l.LocateType))
	}
	for _, o := range r.Offers {
		offers = append(offers, o.LocateType+" "+o.PricePerShare+" × "+i64(o.Shares))
	}
	at := ""
	if !r.OfferedAt.IsZero() {
		at = r.OfferedAt.In(market.NewYork).Format("2006-01-02 15:04:05 ET")
	}
	return []string{r.Symbol, etb, strings.Join(located, ", "), strings.Join(offers, ", "), at, r.OfferState}
}
