package console

import (
	"strings"
	"time"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/market"
	"github.com/locatorhq/locator/workflow"
)

// QuoteRow is one offer a price check saw (a row per side of a Reg SHO
// pair), or its end when it saw none: a record of `locator quote`.
type QuoteRow struct {
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
	LocateStatus brokercode.LocateStatus `json:"locateStatus,omitempty"`
	Outcome      string                  `json:"outcome"`
}

var quoteHeader = []string{"SYMBOL", "STATE", "TYPE", "REG SHO SIDE", "SHARES", "PRICE/SHARE", "TOTAL", "QUOTE ID", "AT THE BROKER"}

// Row is q as a table or CSV record: an offer's last history status, or
// the outcome of a price check that saw none.
func (q QuoteRow) Row() []string {
	last := q.Outcome
	if q.LocateStatus != 0 {
		last = q.LocateStatus.String()
	}
	return []string{q.Symbol, q.State, q.LocateType, q.RegSHOSide, Int(q.Shares), q.PricePerShare, q.Total, q.QuoteReqID, last}
}

// QuoteRowsOf is what price check w saw: a row per priced leg, or one row
// saying how it ended (nil when w was not followed to its end).
func QuoteRowsOf(w *workflow.Workflow) []QuoteRow {
	if w == nil {
		return nil
	}
	base := QuoteRow{ID: w.ID, Symbol: w.Symbol, State: string(w.State), Shares: w.Requested, Outcome: account.OutcomeOf(w).Words}
	if !w.SentAt.IsZero() {
		base.QuoteReqID = w.QuoteReqID // a quote left
	}
	offers := workflow.Prices(w)
	if len(offers) == 0 {
		return []QuoteRow{base}
	}
	out := make([]QuoteRow, len(offers))
	for i, o := range offers {
		q := base
		q.QuoteReqID, q.LocateType, q.RegSHOSide = o.QuoteReqID, string(brokercode.LocateTypeForCode(o.LocateType)), o.RegSHOSide()
		q.PricePerShare, q.Total, q.LocateStatus = Price4(o.Price), Money(o.Total), w.Legs[o.QuoteReqID].Status
		out[i] = q
	}
	return out
}

// Quotes prints what price checks saw: a record per offer, or per check
// that saw none.
func Quotes(out Printer, ws []*workflow.Workflow) {
	var rows [][]string
	var objs []any
	for _, w := range ws {
		for _, q := range QuoteRowsOf(w) {
			rows, objs = append(rows, q.Row()), append(objs, q)
		}
	}
	out.Table(quoteHeader, rows, objs)
}

// ShortableRow is one symbol as `locator shortable` prints it.
type ShortableRow struct {
	Symbol       string `json:"symbol"`
	EasyToBorrow bool   `json:"easyToBorrow"`
	// Located is the symbol's available located shares, by locate type.
	Located []LocatedShares `json:"located"`
	// Offers are the last offers seen, each side of a Reg SHO pair.
	Offers     []OfferSeen `json:"offers"`
	OfferedAt  time.Time   `json:"offeredAt,omitzero"`
	OfferState string      `json:"offerState,omitempty"`
}

// LocatedShares is a symbol's available located shares of one type.
type LocatedShares struct {
	LocateType brokercode.LocateType `json:"locateType"`
	Available  int64                 `json:"available"`
}

// OfferSeen is one offer of a symbol's latest priced quote.
type OfferSeen struct {
	QuoteReqID    string `json:"quoteReqID"`
	LocateType    string `json:"locateType"`
	RegSHOSide    string `json:"regShoSide,omitempty"`
	Shares        int64  `json:"shares"`
	PricePerShare string `json:"pricePerShare"`
	Total         string `json:"total"`
}

var shortableHeader = []string{"SYMBOL", "EASY TO BORROW", "LOCATED", "LAST OFFERS", "OFFERED AT", "ENDED"}

// ShortableRowOf is sh as a record.
func ShortableRowOf(sh account.Shortable) ShortableRow {
	r := ShortableRow{Symbol: sh.Symbol, EasyToBorrow: sh.EasyToBorrow, Located: []LocatedShares{}, Offers: []OfferSeen{}, OfferState: string(sh.OfferState)}
	for _, l := range sh.Located {
		r.Located = append(r.Located, LocatedShares{LocateType: l.Type(), Available: l.Available})
	}
	for _, o := range sh.Offers {
		r.Offers = append(r.Offers, OfferSeen{QuoteReqID: o.QuoteReqID, LocateType: string(brokercode.LocateTypeForCode(o.LocateType)),
			RegSHOSide: o.RegSHOSide(), Shares: o.Shares, PricePerShare: Price4(o.Price), Total: Money(o.Total)})
	}
	if !sh.OfferedAt.IsZero() {
		r.OfferedAt = sh.OfferedAt.UTC()
	}
	return r
}

// Row is r as a table or CSV record, its time in New York's, labelled.
func (r ShortableRow) Row() []string {
	etb := "no"
	if r.EasyToBorrow {
		etb = "yes"
	}
	var located, offers []string
	for _, l := range r.Located {
		located = append(located, Int(l.Available)+" "+string(l.LocateType))
	}
	for _, o := range r.Offers {
		offers = append(offers, o.LocateType+" "+o.PricePerShare+" × "+Int(o.Shares))
	}
	at := ""
	if !r.OfferedAt.IsZero() {
		at = market.DateTime(r.OfferedAt)
	}
	return []string{r.Symbol, etb, strings.Join(located, ", "), strings.Join(offers, ", "), at, r.OfferState}
}

// Shortable prints what is known of shorting each symbol.
func Shortable(out Printer, symbols []account.Shortable) {
	var rows [][]string
	var objs []any
	for _, sh := range symbols {
		r := ShortableRowOf(sh)
		rows, objs = append(rows, r.Row()), append(objs, r)
	}
	out.Table(shortableHeader, rows, objs)
}
