package console

import (
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// OutcomeRecord is the JSON a workflow command ends with (docs/design.md
// contract): the record of account.Outcome's workflow.
type OutcomeRecord struct {
	ID            string `json:"id"`
	Kind          string `json:"kind"`
	Account       string `json:"account"`
	Symbol        string `json:"symbol"`
	State         string `json:"state"`
	Requested     int64  `json:"requested"`
	Shares        int64  `json:"shares"`
	PricePerShare string `json:"pricePerShare"`
	Total         string `json:"total"`
	QuoteReqID    string `json:"quoteReqID"`
	AcceptedID    string `json:"acceptedId,omitempty"`
	LocateType    string `json:"locateType"`
	Reason        string `json:"reason,omitempty"`
	CreatedAt     string `json:"createdAt"`
	UpdatedAt     string `json:"updatedAt"`
}

// OutcomeHeader and Row are an outcome as a CSV record.
var OutcomeHeader = []string{"ID", "SYMBOL", "STATE", "KIND", "ACCOUNT", "REQUESTED", "SHARES", "PRICE PER SHARE", "TOTAL", "QUOTE REQ ID", "LOCATE TYPE", "REASON"}

func (o OutcomeRecord) Row() []string {
	return []string{o.ID, o.Symbol, o.State, o.Kind, o.Account, Int(o.Requested), Int(o.Shares), o.PricePerShare, o.Total, o.QuoteReqID, o.LocateType, o.Reason}
}

// OutcomeRecordOf is w as its outcome record.
func OutcomeRecordOf(w *workflow.Workflow) OutcomeRecord {
	o := OutcomeRecord{
		ID: w.ID, Kind: string(w.Kind), Account: w.Account, Symbol: w.Symbol, State: string(w.State),
		Requested: w.Requested, Shares: w.Quantity, QuoteReqID: w.QuoteReqID, AcceptedID: w.AcceptedID,
		LocateType: w.LocateType, Reason: w.Reason,
		CreatedAt: w.CreatedAt.UTC().Format(time.RFC3339), UpdatedAt: w.UpdatedAt.UTC().Format(time.RFC3339),
	}
	switch {
	case !w.Price.IsZero():
		o.PricePerShare = Price4(w.Price)
		o.Total = w.Price.Mul(decimal.NewFromInt(w.Quantity)).StringFixed(2)
	case w.Kind == states.Locate:
		// Offered and waiting on a person (another shell sees what it
		// would approve), or declined, expired or cancelled after an
		// offer: the price and side it was offered (workflow.Offered),
		// and no total, since nothing was paid.
		if offer := workflow.Offered(w); offer != nil {
			o.PricePerShare, o.LocateType = Price4(offer.Price), string(brokercode.LocateTypeForCode(offer.LocateType))
		}
	}
	return o
}

// Outcomes prints workflows' outcomes (nil entries skipped): a sentence
// each for people ("SYMBOL ID: words"), one JSON object each, or CSV rows
// under OutcomeHeader.
func Outcomes(out Printer, ws []*workflow.Workflow) {
	var texts []string
	var rows [][]string
	var objs []any
	for _, w := range ws {
		if w == nil {
			continue
		}
		o := OutcomeRecordOf(w)
		texts, rows, objs = append(texts, fmt.Sprintf("%s %s: %s", w.Symbol, w.ID, account.OutcomeOf(w).Words)), append(rows, o.Row()), append(objs, o)
	}
	out.Records(OutcomeHeader, rows, objs, texts)
}
