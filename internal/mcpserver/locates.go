package mcpserver

// The locate tools: quote, shortable, locate, status, credit_back and
// inventory, the first six, whose names and input fields agents in use
// call (shares too, quantity's old name).

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/workflow"
)

func (t *tools) locateDefs() []toolDef {
	return []toolDef{
		define(t, &mcp.Tool{Name: "quote", Title: "Locate fee quote",
			Description: "A locate fee quote from the broker: the price per share to borrow each symbol's shares for a short sale, " +
				"not a market quote. The offer is cancelled at once: nothing is accepted or paid. " +
				"Waits for the prices (a symbol quoted in the last 30 seconds waits its turn).",
			Annotations: &mcp.ToolAnnotations{DestructiveHint: new(false), IdempotentHint: true, OpenWorldHint: new(true)}}, t.quote),
		define(t, &mcp.Tool{Name: "shortable", Title: "Shortable symbols", Annotations: reads,
			Description: "For each symbol: easy to borrow or not, its located shares, and the last locate offers seen. Sends no quote."}, t.shortable),
		// Idempotent: a locate quotes only the shortfall of what is located.
		define(t, &mcp.Tool{Name: "locate", Title: "Locate shares to short",
			Description: "Ensure located shares of a symbol (the broker's loan of shares to sell short): quotes only the shortfall, " +
				"accepts an offer whose fee per share is at or under max_price (and max_cost, when given), declines one above; " +
				"waits for the outcome. max_price is required.",
			Annotations: &mcp.ToolAnnotations{DestructiveHint: new(false), IdempotentHint: true, OpenWorldHint: new(true)}}, t.locate),
		define(t, &mcp.Tool{Name: "status", Title: "Workflow or account status", Annotations: readsOwner,
			Description: "One workflow by id (or a unique prefix of one), or without an id the account as its owner sees it: " +
				"the owner, the unfinished workflows, the locate budget left."}, t.status),
		define(t, &mcp.Tool{Name: "credit_back", Title: "Credit back located shares",
			Description: "Return located shares to the broker: quantity shares of one inventory row (type, default Locate), " +
				"or without a quantity every unused share of the symbol (never those a working short sale needs). Waits for the outcome.",
			Annotations: &mcp.ToolAnnotations{DestructiveHint: new(true), OpenWorldHint: new(true)}}, t.creditBack),
		define(t, &mcp.Tool{Name: "inventory", Title: "Located inventory", Annotations: reads,
			Description: "The account's located inventory at the broker, one row per symbol and locate type."}, t.inventory),
	}
}

// QuoteInput asks the locate fee of shares of each symbol.
type QuoteInput struct {
	Symbols  []string `json:"symbols" jsonschema:"symbols to price, such as HTBX"`
	Quantity int64    `json:"quantity,omitempty" jsonschema:"shares to price per symbol, a multiple of 100 (default 100)"`
	Shares   Shares   `json:"shares,omitempty"`
}

// QuoteOutput is what the price checks saw: a row per offer (a row per
// side of a Reg SHO pair), or one row per check that saw none.
type QuoteOutput struct {
	Quotes []Quote `json:"quotes"`
	Failure
}

func (t *tools) quote(ctx context.Context, c *call, in QuoteInput) (QuoteOutput, error) {
	out := QuoteOutput{Quotes: []Quote{}}
	symbols, err := symbols(in.Symbols)
	if err != nil {
		return out, err
	}
	qty, err := quantity(in.Quantity, in.Shares)
	if err != nil {
		return out, err
	}
	if qty == 0 {
		qty = brokercode.LocateLot
	}
	items := make([]account.QuoteItem, len(symbols))
	for i, s := range symbols {
		items[i] = account.QuoteItem{Symbol: s, Quantity: qty}
	}
	res, err := t.acct.Quote(ctx, account.QuoteRequest{Items: items})
	if err != nil {
		return out, err
	}
	ws, err := account.FollowAll(ctx, t.acct, res.Started, c.progress(ctx))
	for _, w := range ws {
		if w != nil {
			out.Quotes = append(out.Quotes, quotesOf(w)...)
		}
	}
	if err := errors.Join(res.Err(), err); err != nil {
		return out, err
	}
	return out, endOf(account.WorstOf(ws))
}

// ShortableInput names the symbols to tell about.
type ShortableInput struct {
	Symbols []string `json:"symbols" jsonschema:"symbols to tell about, such as HTBX"`
}

// ShortableOutput tells about each symbol, in the request's order.
type ShortableOutput struct {
	Symbols []Shortable `json:"symbols"`
	Failure
}

func (t *tools) shortable(ctx context.Context, _ *call, in ShortableInput) (ShortableOutput, error) {
	out := ShortableOutput{Symbols: []Shortable{}}
	symbols, err := symbols(in.Symbols)
	if err != nil {
		return out, err
	}
	st, err := t.acct.Status(ctx, account.StatusRequest{Symbols: symbols})
	if err != nil {
		return out, err
	}
	for _, sh := range st.Shortable {
		out.Symbols = append(out.Symbols, shortableOf(sh))
	}
	return out, nil
}

// LocateInput asks for located shares of one symbol under a fee cap.
type LocateInput struct {
	Symbol   string `json:"symbol" jsonschema:"the symbol to locate, such as HTBX"`
	Quantity int64  `json:"quantity,omitempty" jsonschema:"shares to have located, a multiple of 100 (required, or its old name shares)"`
	Shares   Shares `json:"shares,omitempty"`
	// MaxPrice is required: an agent never takes an uncapped offer.
	MaxPrice       Decimal `json:"max_price" jsonschema:"highest locate fee per share to accept, a decimal string such as \"0.02\" (required)"`
	MaxCost        Decimal `json:"max_cost,omitempty" jsonschema:"highest total fee (price × shares) to accept, a decimal string such as \"10.00\""`
	AllowSingleUse bool    `json:"allow_single_use,omitempty" jsonschema:"allow the SingleUse side of a Reg SHO pair, which cannot be credited back once used"`
}

// LocateOutput is the locate's outcome (none when it was refused before
// it started).
type LocateOutput struct {
	Locate *Workflow `json:"locate,omitempty"`
	Failure
}

func (t *tools) locate(ctx context.Context, c *call, in LocateInput) (LocateOutput, error) {
	var out LocateOutput
	policy, err := capPolicy(in.MaxPrice, in.MaxCost, in.AllowSingleUse)
	if err != nil {
		return out, err
	}
	symbol, err := brokercode.Symbol(in.Symbol)
	if err != nil {
		return out, err
	}
	qty, err := quantity(in.Quantity, in.Shares)
	if err != nil {
		return out, err
	}
	res, err := t.acct.Locate(ctx, account.LocateRequest{Items: []account.LocateItem{{Symbol: symbol, Quantity: qty, Policy: policy}}})
	if err != nil {
		return out, err
	}
	if err := res.Err(); err != nil {
		return out, err
	}
	ws, err := account.FollowAll(ctx, t.acct, res.Started, c.progress(ctx))
	if err != nil {
		return out, err
	}
	rec := workflowOf(ws[0])
	out.Locate = &rec
	return out, endOf(ws[0])
}

// capPolicy is the cost policy of an agent's locate (locate, and short's
// shortfall): max_price is required, and the policy accepts within the
// caps without asking, as `locator locate --max-price` does.
func capPolicy(maxPrice, maxCost Decimal, allowSingleUse bool) (workflow.Policy, error) {
	p := workflow.Policy{AutoAccept: true, AllowSingleUse: allowSingleUse}
	if strings.TrimSpace(string(maxPrice)) == "" {
		return p, account.Errorf(account.KindInput, "max_price is required: an agent's locate accepts only an offer under its cap; nothing was sent")
	}
	var err error
	if p.MaxPrice, err = workflow.ParsePrice("max_price", string(maxPrice)); err != nil {
		return p, err
	}
	if p.MaxCost, err = workflow.ParseCost("max_cost", string(maxCost)); err != nil {
		return p, err
	}
	return p, nil
}

// quantity is the quantity of a call of the first tools, given as
// quantity or by its old name, shares (not both, unless they agree); 0
// when neither is given.
func quantity(qty int64, shares Shares) (int64, error) {
	switch {
	case shares == 0 || int64(shares) == qty:
		return qty, nil
	case qty == 0:
		return int64(shares), nil
	}
	return 0, brokercode.Invalid("quantity", "%d, but shares (its old name) says %d: give quantity alone", qty, shares)
}

// StatusInput names a workflow, or none for the account.
type StatusInput struct {
	ID string `json:"id,omitempty" jsonschema:"a workflow id, or a unique prefix of one; empty for the account"`
}

// StatusOutput is one workflow (Workflow), or the account as its owner
// sees it.
type StatusOutput struct {
	Workflow *Workflow `json:"workflow,omitempty"`
	Account  string    `json:"account,omitempty"`
	Env      string    `json:"env,omitempty"`
	// Owner says who owns the account: "account A is owned by pid P on H
	// since T".
	Owner   string `json:"owner,omitempty"`
	Running bool   `json:"running,omitempty"`
	Queued  int    `json:"queued,omitempty"`
	// Open are the unfinished workflows.
	Open []Workflow `json:"open,omitempty"`
	// Budget is what the locate budget leaves of today (none when the
	// account has no budget).
	Budget *Budget `json:"budget,omitempty"`
	Failure
}

func (t *tools) status(ctx context.Context, _ *call, in StatusInput) (StatusOutput, error) {
	var out StatusOutput
	st, err := t.acct.Status(ctx, account.StatusRequest{})
	if err != nil {
		return out, err
	}
	if in.ID != "" {
		w, err := t.workflow(ctx, st.Open, in.ID)
		if err != nil {
			return out, err
		}
		rec := workflowOf(w)
		out.Workflow = &rec
		return out, nil
	}
	out.Account, out.Env, out.Owner, out.Running, out.Queued, out.Budget = st.Account, string(st.Env), st.Owner.String(), st.Running, st.Queued, budgetOf(st.Budget)
	out.Open = []Workflow{}
	for i := range st.Open {
		out.Open = append(out.Open, workflowOf(&st.Open[i]))
	}
	return out, nil
}

// workflow is workflow id as it stands: from the unfinished ones when it
// is one of them (a unique prefix names it too), otherwise its final
// record (Follow returns a finished workflow's at once).
func (t *tools) workflow(ctx context.Context, open []workflow.Workflow, id string) (*workflow.Workflow, error) {
	var found []*workflow.Workflow
	for i := range open {
		if strings.HasPrefix(open[i].ID, id) {
			found = append(found, &open[i])
		}
	}
	if len(found) == 1 {
		return found[0], nil
	}
	return t.acct.Follow(ctx, account.FollowRequest{ID: id}, nil)
}

// CreditBackInput returns located shares of one symbol.
type CreditBackInput struct {
	Symbol   string `json:"symbol" jsonschema:"the symbol whose located shares to return"`
	Quantity int64  `json:"quantity,omitempty" jsonschema:"shares of one inventory row to return, a multiple of 100; absent: every unused share of the symbol"`
	Shares   Shares `json:"shares,omitempty"`
	Type     string `json:"type,omitempty" jsonschema:"the inventory row: Locate, PreBorrow or SingleUse (default Locate with a quantity; every row's unused shares without)"`
}

// CreditBackOutput is each credit-back's outcome, one per inventory row,
// and the rows left alone, with why.
type CreditBackOutput struct {
	CreditBacks []Workflow `json:"credit_backs"`
	Skipped     []Skipped  `json:"skipped,omitempty"`
	Failure
}

// Skipped is an inventory row a credit-back of the unused shares left
// alone, and why.
type Skipped struct {
	Symbol string `json:"symbol"`
	Type   string `json:"type"`
	Reason string `json:"reason"`
}

func (t *tools) creditBack(ctx context.Context, c *call, in CreditBackInput) (CreditBackOutput, error) {
	out := CreditBackOutput{CreditBacks: []Workflow{}}
	req, err := creditRequest(in)
	if err != nil {
		return out, err
	}
	res, err := t.acct.CreditBack(ctx, req)
	if err != nil && (res == nil || len(res.Started) == 0) {
		return out, err
	}
	ws, followErr := account.FollowAll(ctx, t.acct, res.Workflows(), c.progress(ctx))
	out.CreditBacks = workflowsOf(ws)
	for _, s := range res.Skipped {
		out.Skipped = append(out.Skipped, Skipped{Symbol: s.Symbol, Type: string(s.Type), Reason: s.Reason})
	}
	if err := errors.Join(err, followErr); err != nil {
		return out, err
	}
	return out, endOf(account.WorstOf(ws))
}

// creditRequest reads a credit-back's input as `locator credit-back
// SYMBOL [QTY] --type T --yes` does: with a quantity, a quantity of one
// row; without, the symbol's unused shares, sent without a confirmation
// (an agent is its own confirmation, as --yes is a person's). It is never
// forced past the unused shares (an agent has no --force).
func creditRequest(in CreditBackInput) (account.CreditBackRequest, error) {
	symbol, err := brokercode.Symbol(in.Symbol)
	if err != nil {
		return account.CreditBackRequest{}, err
	}
	qty, err := quantity(in.Quantity, in.Shares)
	if err != nil {
		return account.CreditBackRequest{}, err
	}
	typ := brokercode.LocateType(in.Type)
	switch typ {
	case "", brokercode.LocateTypeLocate, brokercode.LocateTypePreBorrow, brokercode.LocateTypeSingleUse:
	default:
		return account.CreditBackRequest{}, account.Errorf(account.KindInput, fmt.Sprintf("type %q: want Locate, PreBorrow or SingleUse; nothing was sent", in.Type))
	}
	if qty == 0 {
		return account.CreditBackRequest{Symbol: symbol, Type: typ, Unused: true}, nil
	}
	if typ == "" {
		typ = brokercode.LocateTypeLocate
	}
	return account.CreditBackRequest{Symbol: symbol, Quantity: qty, Type: typ}, nil
}

// InventoryInput takes nothing.
type InventoryInput struct{}

// InventoryOutput is the located inventory as the broker gives it.
type InventoryOutput struct {
	Inventory []InventoryRow `json:"inventory"`
	Failure
}

func (t *tools) inventory(ctx context.Context, _ *call, _ InventoryInput) (InventoryOutput, error) {
	out := InventoryOutput{Inventory: []InventoryRow{}}
	r, err := t.acct.Read(ctx, account.ReadRequest{What: account.ReadInventory})
	if err != nil {
		return out, err
	}
	out.Inventory = inventoryOf(r.Inventory)
	return out, nil
}

// symbols checks a tool's symbols, at least one.
func symbols(in []string) ([]string, error) {
	if len(in) == 0 {
		return nil, account.Errorf(account.KindInput, "symbols: want at least one symbol; nothing was sent")
	}
	return brokercode.Symbols(in)
}

// endOf is nil when w ended as its call asked (account.EndDone: filled,
// covered, priced, credited, a person's own decline or cancel), and the
// end it came to otherwise (declined, rejected, expired, canceled,
// failed), for a result with isError; nil w is nil.
func endOf(w *workflow.Workflow) error {
	if w == nil || account.OutcomeOf(w).End == account.EndDone {
		return nil
	}
	kind := string(w.State)
	if !w.Terminal() {
		kind = string(account.KindFailed)
	}
	words, _ := outcomeOf(w)
	return &ended{kind: kind, words: fmt.Sprintf("%s %s: %s", w.Symbol, w.ID, words)}
}
