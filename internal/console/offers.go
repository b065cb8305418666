package console

import (
	"strconv"
	"time"

	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// WaitingOffer is an offer waiting on a person, as `locator offers -o
// json` prints it: one object per workflow, each priced leg of a Reg SHO
// pair listed.
type WaitingOffer struct {
	ID          string       `json:"id"`
	Symbol      string       `json:"symbol"`
	Shares      int64        `json:"shares"`
	Legs        []OfferedLeg `json:"legs"`
	ExpiresAt   string       `json:"expiresAt,omitempty"`
	SecondsLeft int64        `json:"secondsLeft"`
}

// OfferedLeg is one priced side of an offer.
type OfferedLeg struct {
	QuoteReqID    string `json:"quoteReqID"`
	LocateType    string `json:"locateType"`
	PricePerShare string `json:"pricePerShare"`
	Total         string `json:"total"`
}

// Offers prints the offered workflows of ws (those in another state are
// skipped) with the seconds left at now: a line per leg, or a JSON
// object per offer.
func Offers(out Printer, ws []workflow.Workflow, now time.Time) {
	var rows [][]string
	var recs []any
	for i := range ws {
		w := &ws[i]
		if w.State != states.Offered {
			continue
		}
		r := WaitingOffer{ID: w.ID, Symbol: w.Symbol, Shares: w.Quantity}
		if !w.ExpiresAt.IsZero() {
			r.ExpiresAt = w.ExpiresAt.UTC().Format(time.RFC3339)
			r.SecondsLeft = max(0, int64(w.ExpiresAt.Sub(now).Seconds()))
		}
		for _, o := range workflow.Prices(w) {
			leg := OfferedLeg{QuoteReqID: o.QuoteReqID, LocateType: string(brokercode.LocateTypeForCode(o.LocateType)),
				PricePerShare: Price4(o.Price), Total: Money(o.Total)}
			r.Legs = append(r.Legs, leg)
			rows = append(rows, []string{r.ID, r.Symbol, Int(r.Shares), leg.LocateType, leg.PricePerShare, leg.Total, leg.QuoteReqID, strconv.FormatInt(r.SecondsLeft, 10)})
		}
		recs = append(recs, r)
	}
	out.Table([]string{"ID", "SYMBOL", "SHARES", "SIDE", "PRICE", "TOTAL", "QUOTE REQ ID", "SECONDS LEFT"}, rows, recs)
}
