package mcpserver

// The offers waiting on a person and their answers (offers, approve,
// decline), and what today's locates cost (spend).

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

func (t *tools) offerDefs() []toolDef {
	return []toolDef{
		define(t, &mcp.Tool{Name: "offers", Title: "Offers waiting on a person", Annotations: readsOwner,
			Description: "The locate offers waiting on a person's answer (a locate asked from the CLI or a job without a cap that " +
				"decides): each side's fee per share and total, and the seconds left to approve or decline."}, t.offers),
		define(t, &mcp.Tool{Name: "approve", Title: "Approve a waiting offer",
			Description: "Accept the locate offer waiting on a workflow (see offers), within its policy and the locate budget: " +
				"the fee is paid. Your person confirms it first (elicitation) unless confirmed is true. Waits for the outcome.",
			Annotations: &mcp.ToolAnnotations{DestructiveHint: new(false), IdempotentHint: true, OpenWorldHint: new(true)}}, t.approve),
		define(t, &mcp.Tool{Name: "decline", Title: "Decline a waiting offer",
			Description: "Decline the locate offer waiting on a workflow (see offers): it is cancelled at the broker, nothing paid. Waits for the outcome.",
			Annotations: &mcp.ToolAnnotations{DestructiveHint: new(true), IdempotentHint: true, OpenWorldHint: new(true)}}, t.decline),
		define(t, &mcp.Tool{Name: "spend", Title: "Today's locate spend", Annotations: reads,
			Description: "What today's locates cost, net of the credit-backs, in total and by symbol, each symbol's P&L net of it, " +
				"and what the locate budget leaves."}, t.spend),
	}
}

// OffersInput takes nothing.
type OffersInput struct{}

// OffersOutput are the offers waiting on a person.
type OffersOutput struct {
	Offers []WaitingOffer `json:"offers"`
	Failure
}

// WaitingOffer is an offer waiting on a person: each priced side of a Reg
// SHO pair listed.
type WaitingOffer struct {
	ID          string  `json:"id"`
	Symbol      string  `json:"symbol"`
	Shares      int64   `json:"shares"`
	Legs        []Offer `json:"legs"`
	ExpiresAt   string  `json:"expiresAt,omitempty"`
	SecondsLeft int64   `json:"secondsLeft"`
}

func (t *tools) offers(ctx context.Context, _ *call, _ OffersInput) (OffersOutput, error) {
	out := OffersOutput{Offers: []WaitingOffer{}}
	st, err := t.acct.Status(ctx, account.StatusRequest{})
	if err != nil {
		return out, err
	}
	now := t.clk.Now()
	for i := range st.Open {
		w := &st.Open[i]
		if w.State != states.Offered {
			continue
		}
		r := WaitingOffer{ID: w.ID, Symbol: w.Symbol, Shares: w.Quantity, Legs: []Offer{}, ExpiresAt: utc(w.ExpiresAt)}
		if !w.ExpiresAt.IsZero() {
			r.SecondsLeft = max(0, int64(w.ExpiresAt.Sub(now).Seconds()))
		}
		for _, o := range workflow.Prices(w) {
			r.Legs = append(r.Legs, offerOf(o))
		}
		out.Offers = append(out.Offers, r)
	}
	return out, nil
}

// ApproveInput names the workflow whose offer to take.
type ApproveInput struct {
	ID        string `json:"id" jsonschema:"the workflow whose offer waits on a person (see offers), or a unique prefix of its id"`
	Confirmed bool   `json:"confirmed,omitempty" jsonschema:"true when your person has already said yes to this very offer; otherwise they are asked (elicitation), and a client that cannot ask is refused"`
}

// DeclineInput names the workflow whose offer to decline.
type DeclineInput struct {
	ID string `json:"id" jsonschema:"the workflow whose offer waits on a person (see offers), or a unique prefix of its id"`
}

// AnswerOutput is how the workflow answered ended, or stands when the
// answer was not sent (none when it was not found).
type AnswerOutput struct {
	Workflow *Workflow `json:"workflow,omitempty"`
	Failure
}

// approve takes the offer as `locator approve` does: bound to the offer
// it finds waiting (its side and price, as offers shows it), which the
// person is asked about, so that the owner refuses it, nothing sent, when
// the offer waiting by then is another or at another price.
func (t *tools) approve(ctx context.Context, c *call, in ApproveInput) (AnswerOutput, error) {
	var out AnswerOutput
	req := account.AnswerRequest{ID: in.ID, Accept: true, Via: via}
	st, err := t.acct.Status(ctx, account.StatusRequest{})
	if err != nil {
		return out, err
	}
	w, err := t.workflow(ctx, st.Open, in.ID)
	if err != nil {
		return out, err
	}
	rec := workflowOf(w)
	out.Workflow = &rec
	// One with no offer waiting is the owner's to refuse, in its words.
	if o := workflow.Offered(w); w.State == states.Offered && o != nil {
		req.ID, req.Offer, req.Price = w.ID, o.QuoteReqID, o.Price
		what := fmt.Sprintf("Approve the locate of %d %s (%s): a fee of %s a share (%s, offer %s) = %s, paid now; the offer closes at %s",
			o.Shares, o.Symbol, w.ID, o.Price.StringFixed(4), brokercode.LocateTypeForCode(o.LocateType), o.QuoteReqID, o.Total.StringFixed(2), utc(o.ExpiresAt))
		if err := c.confirm(in.Confirmed, what); err != nil {
			return out, err
		}
	}
	return t.answer(ctx, c, req)
}

func (t *tools) decline(ctx context.Context, c *call, in DeclineInput) (AnswerOutput, error) {
	return t.answer(ctx, c, account.AnswerRequest{ID: in.ID, Via: via})
}

// answer answers the offer and follows its workflow to its end, as
// `locator approve` and `decline` do.
func (t *tools) answer(ctx context.Context, c *call, req account.AnswerRequest) (AnswerOutput, error) {
	var out AnswerOutput
	if err := t.acct.Answer(ctx, req); err != nil {
		return out, err
	}
	w, err := t.acct.Follow(ctx, account.FollowRequest{ID: req.ID}, c.progress(ctx))
	if err != nil {
		return out, err
	}
	rec := workflowOf(w)
	out.Workflow = &rec
	return out, endOf(w)
}

// SpendInput takes nothing.
type SpendInput struct{}

// SpendOutput is what today's locates cost: in total and by symbol (the
// ledger's amounts once posted, price × shares until then), and what the
// locate budget leaves.
type SpendOutput struct {
	// Date is today's trade date on the broker's calendar.
	Date string `json:"date"`
	// Spend is the fees of today's locates, Recovery what their
	// credit-backs returned, NetSpend the difference.
	Spend    string        `json:"spend"`
	Recovery string        `json:"recovery"`
	NetSpend string        `json:"netSpend"`
	Symbols  []SymbolSpend `json:"symbols"`
	Budget   *Budget       `json:"budget,omitempty"`
	Failure
}

// SymbolSpend is one symbol's day: its locates' cost net of credit-backs,
// and its P&L net of that.
type SymbolSpend struct {
	Symbol   string `json:"symbol"`
	Spend    string `json:"spend"`
	Recovery string `json:"recovery"`
	NetSpend string `json:"netSpend"`
	// DayPnl is the day's realized and floating P&L of its lots, NetPnl
	// that less NetSpend.
	DayPnl string `json:"dayPnl"`
	NetPnl string `json:"netPnl"`
}

func (t *tools) spend(ctx context.Context, _ *call, _ SpendInput) (SpendOutput, error) {
	out := SpendOutput{Symbols: []SymbolSpend{}}
	day, err := t.acct.Today(ctx, account.TodayRequest{})
	if err != nil {
		return out, err
	}
	st, err := t.acct.Status(ctx, account.StatusRequest{})
	if err != nil {
		return out, err
	}
	var spend, recovery decimal.Decimal
	for _, s := range day.Symbols {
		spend, recovery = spend.Add(s.Spend), recovery.Add(s.Recovery)
		out.Symbols = append(out.Symbols, SymbolSpend{Symbol: s.Symbol, Spend: dollars(s.Spend), Recovery: dollars(s.Recovery),
			NetSpend: dollars(s.NetSpend), DayPnl: dollars(s.DayPnL), NetPnl: dollars(s.NetPnL)})
	}
	out.Date, out.Spend, out.Recovery, out.NetSpend = day.Date.Format("2006-01-02"), dollars(spend), dollars(recovery), dollars(spend.Sub(recovery))
	out.Budget = budgetOf(st.Budget)
	return out, nil
}
