package mcpserver

// The trading tools: the account and its buying power, positions, the
// order book, short, cover and cancel, each as its CLI command does it.

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

func (t *tools) orderDefs() []toolDef {
	return []toolDef{
		define(t, &mcp.Tool{Name: "account", Title: "Account and buying power", Annotations: reads,
			Description: "The account's record at the broker: live or paper, its status (only Active trades), cash, buying power, " +
				"equity, today's realized P&L, commissions and locate fees."}, t.account),
		define(t, &mcp.Tool{Name: "positions", Title: "Open positions", Annotations: reads,
			Description: "The account's open positions at the broker, one per lot: side (Short or Long), shares, average price."}, t.positions),
		define(t, &mcp.Tool{Name: "orders", Title: "Today's orders", Annotations: reads,
			Description: "The broker's order book: every order of today's session in any state, and working orders of earlier sessions."}, t.orders),
		define(t, &mcp.Tool{Name: "short", Title: "Sell short",
			Description: "Sell a symbol short: locates the shortfall of located shares first (a fee per share at most max_price, required), " +
				"checks the order against the fat-finger guard, the sizing and the locate budget, sends one Sell/Open order and waits until " +
				"it is working or final. Your person confirms the order first (elicitation) unless confirmed is true.",
			Annotations: &mcp.ToolAnnotations{DestructiveHint: new(true), OpenWorldHint: new(true)}}, t.short),
		define(t, &mcp.Tool{Name: "cover", Title: "Buy to cover",
			Description: "Buy to cover a short position (Buy/Close, at most the shares short), checked against the fat-finger guard; " +
				"waits until the order is working or final. Your person confirms the order first (elicitation) unless confirmed is true.",
			Annotations: &mcp.ToolAnnotations{DestructiveHint: new(true), OpenWorldHint: new(true)}}, t.cover),
		define(t, &mcp.Tool{Name: "cancel", Title: "Cancel an order or a workflow",
			Description: "Cancel a working order locator placed (client_order_id, from short or cover), or withdraw an unfinished " +
				"locate or credit-back (id); waits for the broker to confirm.",
			Annotations: &mcp.ToolAnnotations{DestructiveHint: new(true), IdempotentHint: true, OpenWorldHint: new(true)}}, t.cancel),
	}
}

// AccountInput takes nothing.
type AccountInput struct{}

// AccountOutput is the account's record at the broker, money as decimal
// strings.
type AccountOutput struct {
	Account string `json:"account"`
	// Env is live or paper, from the broker's account type.
	Env           string `json:"env"`
	AccountType   string `json:"accountType"`
	AccountStatus string `json:"accountStatus"`
	// Active says the account may trade (its status is Active).
	Active        bool   `json:"active"`
	AvailableCash string `json:"availableCash"`
	// BuyingPower is the largest value of new positions it may open;
	// OvernightBuyingPower that of positions held overnight.
	BuyingPower          string `json:"buyingPower"`
	OvernightBuyingPower string `json:"overnightBuyingPower"`
	Equity               string `json:"equity"`
	SodEquity            string `json:"sodEquity"`
	Realized             string `json:"realized"`
	TotalCommissions     string `json:"totalCommissions"`
	TotalLocateCosts     string `json:"totalLocateCosts"`
	MarginDeficit        string `json:"marginDeficit"`
	MaintenanceDeficit   string `json:"maintenanceDeficit"`
	SharesTraded         int64  `json:"sharesTraded"`
	Failure
}

func (t *tools) account(ctx context.Context, _ *call, _ AccountInput) (AccountOutput, error) {
	var out AccountOutput
	r, err := t.acct.Read(ctx, account.ReadRequest{What: account.ReadAccount})
	if err != nil {
		return out, err
	}
	a := r.Account
	out = AccountOutput{Account: a.Account, Env: string(brokerclient.EnvOf(a.AccountType)), AccountType: a.AccountType,
		AccountStatus: a.AccountStatus, Active: a.IsActive(), AvailableCash: dollars(a.AvailableCash), BuyingPower: dollars(a.BuyingPower),
		OvernightBuyingPower: dollars(a.OvernightBp), Equity: dollars(a.Equity), SodEquity: dollars(a.SodEquity), Realized: dollars(a.Realized),
		TotalCommissions: dollars(a.TotalCommissions), TotalLocateCosts: dollars(a.TotalLocateCosts), MarginDeficit: dollars(a.MarginDeficit),
		MaintenanceDeficit: dollars(a.MaintenanceDeficit), SharesTraded: a.SharesTraded}
	return out, nil
}

// PositionsInput takes nothing.
type PositionsInput struct{}

// PositionsOutput are the open positions.
type PositionsOutput struct {
	Positions []Position `json:"positions"`
	Failure
}

// Position is one open lot at the broker.
type Position struct {
	PositionID   string `json:"positionId"`
	Symbol       string `json:"symbol"`
	Side         string `json:"side"`
	Shares       int64  `json:"shares"`
	PriceAvg     string `json:"priceAvg"`
	PriceOpen    string `json:"priceOpen,omitempty"`
	PriceClose   string `json:"priceClose,omitempty"`
	DayOvernight string `json:"dayOvernight,omitempty"`
	SecurityType string `json:"securityType,omitempty"`
	CreatedDate  string `json:"createdDate,omitempty"`
}

func (t *tools) positions(ctx context.Context, _ *call, _ PositionsInput) (PositionsOutput, error) {
	out := PositionsOutput{Positions: []Position{}}
	r, err := t.acct.Read(ctx, account.ReadRequest{What: account.ReadPositions})
	if err != nil {
		return out, err
	}
	for _, p := range r.Positions {
		out.Positions = append(out.Positions, Position{PositionID: string(p.PositionID), Symbol: brokerSymbol(p.Symbol), Side: string(p.Side),
			Shares: p.Shares, PriceAvg: p.PriceAvg.String(), PriceOpen: price(p.PriceOpen), PriceClose: price(p.PriceClose),
			DayOvernight: p.DayOvernight, SecurityType: string(p.SecurityType), CreatedDate: brokerTime(p.CreatedDate)})
	}
	return out, nil
}

// OrdersInput takes nothing.
type OrdersInput struct{}

// OrdersOutput is the broker's order book of today.
type OrdersOutput struct {
	Orders []BookOrder `json:"orders"`
	Failure
}

// BookOrder is one order of the broker's book, as the broker has it.
type BookOrder struct {
	ClientOrderID string `json:"clientOrderId"`
	Symbol        string `json:"symbol"`
	Side          string `json:"side"`
	OpenClose     string `json:"openClose"`
	OrderType     string `json:"orderType"`
	TimeInForce   string `json:"timeInForce"`
	Quantity      int64  `json:"quantity"`
	Executed      int64  `json:"executed"`
	Leaves        int64  `json:"leavesQuantity"`
	Canceled      int64  `json:"canceledQuantity"`
	LimitPrice    string `json:"limitPrice,omitempty"`
	StopPrice     string `json:"stopPrice,omitempty"`
	PriceAvg      string `json:"priceAvg,omitempty"`
	OrderStatus   string `json:"orderStatus"`
	Route         string `json:"route,omitempty"`
	// Text is the broker's reason for a rejection, marked as its text.
	Text        string `json:"text,omitempty"`
	StartTime   string `json:"startTime,omitempty"`
	LastUpdated string `json:"lastUpdated,omitempty"`
}

func (t *tools) orders(ctx context.Context, _ *call, _ OrdersInput) (OrdersOutput, error) {
	out := OrdersOutput{Orders: []BookOrder{}}
	r, err := t.acct.Read(ctx, account.ReadRequest{What: account.ReadOrders})
	if err != nil {
		return out, err
	}
	for _, o := range r.Orders {
		b := BookOrder{ClientOrderID: o.ClientOrderID, Symbol: brokerSymbol(o.Symbol), Side: string(o.Side), OpenClose: string(o.OpenClose),
			OrderType: string(o.OrderType), TimeInForce: string(o.TimeInForce), Quantity: o.OrderQuantity, Executed: o.Executed,
			Leaves: o.LeavesQuantity, Canceled: o.CanceledQuantity, LimitPrice: price(o.LimitPrice), StopPrice: price(o.PriceStop),
			PriceAvg: price(o.PriceAvg), OrderStatus: string(o.OrderStatus), Route: string(o.Route),
			StartTime: brokerTime(o.StartTime), LastUpdated: brokerTime(o.LastUpdated)}
		if o.Text != nil {
			b.Text = brokerText(*o.Text)
		}
		out.Orders = append(out.Orders, b)
	}
	return out, nil
}

// OrderInput is an order's shape and fat-finger guard, as short and cover
// take them: the broker's names for types and times in force.
type OrderInput struct {
	OrderType   OrderType   `json:"order_type,omitempty"`
	TimeInForce TimeInForce `json:"time_in_force,omitempty"`
	LimitPrice  Decimal     `json:"limit_price,omitempty" jsonschema:"limit price (Limit and StopLimit), a decimal string such as \"12.40\": up to 4 decimals, whole cents from 1.00"`
	StopPrice   Decimal     `json:"stop_price,omitempty" jsonschema:"stop price (Stop and StopLimit), a decimal string"`
	Route       string      `json:"route,omitempty" jsonschema:"order route; a live account's default is SMART"`
	MaxDistance Decimal     `json:"max_distance,omitempty" jsonschema:"fat-finger guard: refuse a limit or stop price further than this percentage from the symbol's reference price (its position's price, its last fill today, its last close), a decimal string (default \"10\")"`
	MaxNotional Decimal     `json:"max_notional,omitempty" jsonschema:"fat-finger guard: refuse an order whose shares × price is over this many dollars, a decimal string"`
	RefPrice    Decimal     `json:"ref_price,omitempty" jsonschema:"fat-finger guard: the symbol's market price as you know it, the reference when the broker shows none, a decimal string"`
}

// order is the order in reads, on side and openClose, with its guard (the
// owner checks the combination and the guard before anything is sent).
func (in OrderInput) order(side brokerclient.Side, oc brokerclient.OpenClose) (workflow.Order, workflow.Guard, error) {
	o := workflow.Order{Side: string(side), OpenClose: string(oc), OrderType: string(in.OrderType), TimeInForce: string(in.TimeInForce), Route: in.Route}
	if o.OrderType == "" {
		o.OrderType = string(brokerclient.OrderTypeLimit)
	}
	if o.TimeInForce == "" {
		o.TimeInForce = string(brokerclient.TimeInForceDay)
	}
	var g workflow.Guard
	var err error
	for _, f := range []struct {
		name string
		in   Decimal
		to   *decimal.Decimal
		read func(field, s string) (decimal.Decimal, error)
	}{{"limit_price", in.LimitPrice, &o.LimitPrice, workflow.ParsePrice}, {"stop_price", in.StopPrice, &o.StopPrice, workflow.ParsePrice},
		{"max_notional", in.MaxNotional, &g.MaxNotional, workflow.ParseCost}, {"ref_price", in.RefPrice, &g.RefPrice, workflow.ParsePrice},
		{"max_distance", in.MaxDistance, &g.MaxDistance, workflow.ParseDistance}} {
		if f.in == "" {
			continue
		}
		if *f.to, err = f.read(f.name, string(f.in)); err != nil {
			return o, g, err
		}
	}
	return o, g, nil
}

// ShortInput sells a symbol short, locating the shortfall first.
type ShortInput struct {
	Symbol   string `json:"symbol" jsonschema:"the symbol to sell short, such as HTBX"`
	Quantity int64  `json:"quantity" jsonschema:"shares to sell short, 1 to 1,000,000"`
	OrderInput
	MaxPrice       Decimal `json:"max_price" jsonschema:"highest locate fee per share to accept for the shortfall of located shares, a decimal string such as \"0.02\" (required)"`
	MaxCost        Decimal `json:"max_cost,omitempty" jsonschema:"highest total locate fee to accept, a decimal string"`
	AllowSingleUse bool    `json:"allow_single_use,omitempty" jsonschema:"allow the SingleUse side of a Reg SHO pair, which cannot be credited back once used"`
	Confirmed      bool    `json:"confirmed,omitempty" jsonschema:"true when your person has already said yes to this very order; otherwise they are asked (elicitation), and a client that cannot ask is refused"`
}

// ShortOutput is how a short went: the locate behind it and the order
// (none when none was sent); when it did not succeed, its error says how
// it ended (the order's state, the locate's, declined by the sizing).
type ShortOutput struct {
	Locate *Workflow `json:"locate,omitempty"`
	Order  *Order    `json:"order,omitempty"`
	Failure
}

func (t *tools) short(ctx context.Context, c *call, in ShortInput) (ShortOutput, error) {
	var out ShortOutput
	req, err := shortRequest(in)
	if err != nil {
		return out, err
	}
	words := console.OrderWords(&workflow.Order{Side: string(brokerclient.SideSell), Symbol: req.Symbol, Quantity: req.Quantity,
		OrderType: req.OrderType, TimeInForce: req.TimeInForce, LimitPrice: req.Limit, StopPrice: req.Stop})
	words += routeWords(req.Route) + fmt.Sprintf(", once the shares not located yet are located at a fee of at most %s a share", req.Policy.MaxPrice.StringFixed(4))
	if req.Policy.MaxCost.IsPositive() {
		words += fmt.Sprintf(" and %s in all", req.Policy.MaxCost.StringFixed(2))
	}
	if err := c.confirm(in.Confirmed, words); err != nil {
		return out, err
	}
	// Its own ids, so that its progress is its locate's and its order's
	// alone (ShortShowing shows every order of the account).
	req.LocateID, req.ClientOrderID = workflow.NewID(), workflow.NewOrderID()
	show := c.progress(ctx)
	res, err := account.ShortShowing(ctx, t.acct, req, func(u account.Update) {
		if u.Order == nil || u.Order.ClientOrderID == req.ClientOrderID {
			show(u)
		}
	})
	if res != nil && res.Locate != nil {
		l := workflowOf(res.Locate)
		out.Locate = &l
	}
	if res != nil && res.Order != nil {
		o := orderOf(res.Order)
		out.Order = &o
	}
	if err != nil {
		return out, err
	}
	return out, orderEnd(account.ShortOutcome(res), res.Order, res.Locate)
}

// shortRequest reads a short's input as `locator short` reads its command
// line, with the locate's policy of an agent's (capPolicy).
func shortRequest(in ShortInput) (account.ShortRequest, error) {
	var r account.ShortRequest
	var err error
	if r.Symbol, err = brokercode.Symbol(in.Symbol); err != nil {
		return r, err
	}
	if err = workflow.ValidateOrderQuantity(in.Quantity); err != nil {
		return r, err
	}
	if r.Policy, err = capPolicy(in.MaxPrice, in.MaxCost, in.AllowSingleUse); err != nil {
		return r, err
	}
	o, g, err := in.order(brokerclient.SideSell, brokerclient.OpenCloseOpen)
	r.Quantity, r.OrderType, r.TimeInForce, r.Limit, r.Stop, r.Route, r.Guard = in.Quantity, o.OrderType, o.TimeInForce, o.LimitPrice, o.StopPrice, o.Route, g
	return r, err
}

// routeWords names a route chosen, for a question.
func routeWords(route string) string {
	if route == "" {
		return ""
	}
	return ", on route " + route
}

// CoverInput buys to cover a short.
type CoverInput struct {
	Symbol   string `json:"symbol" jsonschema:"the symbol to buy back, such as HTBX"`
	Quantity int64  `json:"quantity" jsonschema:"shares to buy to cover, at most the shares the account is short"`
	OrderInput
	Confirmed bool `json:"confirmed,omitempty" jsonschema:"true when your person has already said yes to this very order; otherwise they are asked (elicitation), and a client that cannot ask is refused"`
}

// CoverOutput is how a cover went: its order (none when none was sent).
type CoverOutput struct {
	Order *Order `json:"order,omitempty"`
	Failure
}

func (t *tools) cover(ctx context.Context, c *call, in CoverInput) (CoverOutput, error) {
	var out CoverOutput
	o, g, err := in.order(brokerclient.SideBuy, brokerclient.OpenCloseClose)
	if err != nil {
		return out, err
	}
	if o.Symbol, err = brokercode.Symbol(in.Symbol); err != nil {
		return out, err
	}
	if err := workflow.ValidateOrderQuantity(in.Quantity); err != nil {
		return out, err
	}
	o.Quantity = in.Quantity
	if err := c.confirm(in.Confirmed, console.OrderWords(&o)+routeWords(o.Route)); err != nil {
		return out, err
	}
	o.ClientOrderID = workflow.NewOrderID()
	stop, err := t.showOrder(ctx, o.ClientOrderID, c.progress(ctx))
	if err != nil {
		return out, err
	}
	got, err := t.acct.PlaceOrder(ctx, account.PlaceOrderRequest{Order: o, Guard: g})
	stop()
	if got != nil {
		rec := orderOf(got)
		out.Order = &rec
	}
	if err != nil {
		return out, err
	}
	return out, orderEnd(account.ShortOutcome(&account.ShortResult{Order: got}), got, nil)
}

// orderEnd is nil when a short or a cover ended as asked (its order
// working or filled), and otherwise the end it came to, in its outcome's
// words (the broker's text in them marked): the order's state, the
// locate's when it did not locate, declined when sizing stopped it.
func orderEnd(o account.Outcome, order *workflow.Order, locate *workflow.Workflow) error {
	if o.End == account.EndDone {
		return nil
	}
	words := o.Words
	notLocated := order == nil && locate != nil && !locate.Located()
	if (order != nil && (order.Text != "" || order.State == states.Failed)) || (notLocated && reasonFromBroker(locate)) {
		words = brokerText(words)
	}
	kind := string(account.KindFailed)
	switch {
	case order != nil && order.Terminal():
		kind = string(order.State)
	case notLocated && locate.Terminal():
		kind = string(locate.State)
	case order == nil && !notLocated:
		kind = string(states.Declined)
	}
	return &ended{kind: kind, words: words}
}

// CancelInput names what to cancel: an order, or a workflow.
type CancelInput struct {
	ClientOrderID string `json:"client_order_id,omitempty" jsonschema:"a working order locator placed (its clientOrderId, from short or cover): cancel it at the broker"`
	ID            string `json:"id,omitempty" jsonschema:"an unfinished locate or credit-back (its workflow id, or a unique prefix): withdraw it, its open offer or sell cancelled at the broker"`
}

// CancelOutput is how the order or the workflow ended.
type CancelOutput struct {
	Order    *Order    `json:"order,omitempty"`
	Workflow *Workflow `json:"workflow,omitempty"`
	Failure
}

func (t *tools) cancel(ctx context.Context, c *call, in CancelInput) (CancelOutput, error) {
	var out CancelOutput
	switch {
	case (in.ClientOrderID == "") == (in.ID == ""):
		return out, account.Errorf(account.KindInput, "give client_order_id (an order) or id (a workflow), one of them; nothing was sent")
	case in.ClientOrderID != "":
		o, err := t.acct.CancelOrder(ctx, account.CancelOrderRequest{ClientOrderID: in.ClientOrderID})
		if err != nil {
			return out, err
		}
		rec := orderOf(o)
		out.Order = &rec
		if o.State != states.Canceled {
			return out, &ended{kind: string(o.State), words: fmt.Sprintf("order %s ended %s, not canceled", o.LookupID(), o.State)}
		}
		return out, nil
	}
	if err := t.acct.Cancel(ctx, account.CancelRequest{ID: in.ID, Via: via}); err != nil {
		return out, err
	}
	w, err := t.acct.Follow(ctx, account.FollowRequest{ID: in.ID}, c.progress(ctx))
	if err != nil {
		return out, err
	}
	rec := workflowOf(w)
	out.Workflow = &rec
	return out, endOf(w)
}

// via says where an agent's answer or cancel came from, in its
// workflow's outcome.
const via = "locator mcp (an agent's call)"

// showOrder shows every change of order id until stop is called, from a
// subscription made before the order is sent, so that none is missed.
func (t *tools) showOrder(ctx context.Context, id string, show func(account.Update)) (stop func(), err error) {
	ctx, cancel := context.WithCancel(ctx)
	updates, err := t.acct.Subscribe(ctx)
	if err != nil {
		cancel()
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for u := range updates { // closed once ctx ends
			if u.Order != nil && u.Order.ClientOrderID == id {
				show(u)
			}
		}
	}()
	return func() { cancel(); <-done }, nil
}
