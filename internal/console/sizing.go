package console

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/locatorhq/locator"
)

// Sizing prints how many shares can be shorted now and what binds it
// (ledger.Size): the limits, the open short and working sells, what a
// target would need located, and the explanation.
func Sizing(out Printer, z *locator.Sizing) {
	switch out.Format {
	case JSON:
		sizingJSON(out, z)
		return
	case CSV:
		out.Table(limitHeader, limitRows(z), nil)
		return
	}
	w := out.W
	fmt.Fprintf(w, "%s at %s: %d shares shortable now, bound by %s\n\n", z.Symbol, sizePrice(z.Price), z.Shortable, z.Binding)
	out.Table(limitHeader, limitRows(z), nil)
	fmt.Fprintf(w, "\nopen short %d (not counted again), working sells %d\n", z.OpenShort, z.WorkingSells)
	if z.Target > 0 {
		switch {
		case z.LotsToLocate == 0:
			fmt.Fprintf(w, "target %d: nothing more to locate\n", z.Target)
		case z.LastOfferKnown:
			fmt.Fprintf(w, "target %d: locate %d more (%d lots of 100), about %s at the last offered %s per share\n",
				z.Target, z.SharesToLocate, z.LotsToLocate, Money(z.EstimatedCost), Price4(z.LastOfferPrice))
		default:
			fmt.Fprintf(w, "target %d: locate %d more (%d lots of 100); cost unknown, no offer for %s seen yet\n",
				z.Target, z.SharesToLocate, z.LotsToLocate, z.Symbol)
		}
	}
	fmt.Fprintf(w, "\n%s\n", z.Explanation)
}

// SizingJSON is the --json object.
type SizingJSON struct {
	Account         string      `json:"account"`
	Symbol          string      `json:"symbol"`
	Price           string      `json:"price"`
	Shortable       int64       `json:"shortable"`
	Binding         string      `json:"binding"`
	Limits          []LimitJSON `json:"limits"`
	AccountStatus   string      `json:"accountStatus"`
	EasyToBorrow    bool        `json:"easyToBorrow"`
	Located         int64       `json:"located"`
	OpenShort       int64       `json:"openShort"`
	WorkingSells    int64       `json:"workingSells"`
	WorkingNotional string      `json:"workingNotional"`
	BuyingPower     string      `json:"buyingPower"`
	Target          int64       `json:"target"`
	SharesToLocate  int64       `json:"sharesToLocate"`
	LotsToLocate    int64       `json:"lotsToLocate"`
	LastOfferPrice  string      `json:"lastOfferPrice,omitempty"`
	EstimatedCost   string      `json:"estimatedCost,omitempty"`
	Explanation     string      `json:"explanation"`
}

// LimitJSON is one limit on a short's size in SizingJSON (Shares nil: no limit).
type LimitJSON struct {
	Name      string `json:"name"`
	Shares    *int64 `json:"shares"` // null when unlimited
	Unlimited bool   `json:"unlimited"`
	Detail    string `json:"detail"`
}

// limitHeader and limitRows are the limits on a short's size, the one
// that binds marked.
var limitHeader = []string{"LIMIT", "SHARES", "HOW", ""}

func limitRows(z *locator.Sizing) [][]string {
	var rows [][]string
	for _, l := range z.Limits {
		shares := strconv.FormatInt(l.Shares, 10)
		if l.Unlimited {
			shares = "no limit"
		}
		mark := ""
		if l.Name == z.Binding {
			mark = "← binds"
		}
		rows = append(rows, []string{string(l.Name), shares, l.Detail, mark})
	}
	return rows
}

func sizingJSON(out Printer, z *locator.Sizing) {
	o := SizingJSON{
		Account: z.Account, Symbol: z.Symbol, Price: z.Price.String(), Shortable: z.Shortable, Binding: string(z.Binding),
		AccountStatus: z.AccountStatus, EasyToBorrow: z.EasyToBorrow, Located: z.Located, OpenShort: z.OpenShort,
		WorkingSells: z.WorkingSells, WorkingNotional: Money(z.WorkingNotional), BuyingPower: Money(z.BuyingPower),
		Target: z.Target, SharesToLocate: z.SharesToLocate, LotsToLocate: z.LotsToLocate,
		Explanation: strings.TrimSpace(z.Explanation),
	}
	if z.LastOfferKnown {
		o.LastOfferPrice = z.LastOfferPrice.String()
		if z.LotsToLocate > 0 {
			o.EstimatedCost = Money(z.EstimatedCost)
		}
	}
	for _, l := range z.Limits {
		lj := LimitJSON{Name: string(l.Name), Unlimited: l.Unlimited, Detail: l.Detail}
		if !l.Unlimited {
			n := l.Shares
			lj.Shares = &n
		}
		o.Limits = append(o.Limits, lj)
	}
	out.Event(o, "")
}
