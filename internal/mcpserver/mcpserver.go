// Package mcpserver serves an account to agents over the Model Context
// Protocol: tools named quote, shortable, locate, status, credit_back and
// inventory, each a thin layer over one account.Account call, with typed
// input and output (their JSON schemas come from the Go structs below) and
// money as decimal strings.
//
// An agent gets the account's guards and no more power than a person at
// the CLI: its Account is opened for a caller that cannot be asked
// (account.Caller.Ask nil), so the owner refuses what would need a person,
// and checks the caller's environment as for any command; locate requires
// max_price (an uncapped offer is never accepted) and declines an offer
// above it, as `locator locate --max-price` does; quote is a price check,
// whose offers are cancelled at once and never accepted. Whatever a tool
// refuses, it refuses before anything is sent, as a tool error. No client
// ends the server: Stdio answers a malformed line, Refused serves an
// account that could not be opened, and a cancelled call withdraws its
// workflow (account.FollowAll) and leaves the server serving.
package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/workflow"
)

// New is the MCP server of acct; version names the program to clients.
// acct is the account as the server's one caller sees it: opened without
// an asker, for the environment the agent's settings name.
func New(acct account.Account, version string) *mcp.Server {
	return newServer(&tools{acct: acct}, version)
}

// Refused is the MCP server of an account that could not be opened (no
// settings, paper asked of a live account, the owner's refusal): an
// agent's host still initializes and lists the tools, and each call is a
// tool error saying why, rather than a connection closed before it could
// ask.
func Refused(why error, version string) *mcp.Server {
	return newServer(&tools{refused: why}, version)
}

func newServer(t *tools, version string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "locator", Title: "locator: short-sale locates", Version: version},
		&mcp.ServerOptions{Instructions: instructions})
	// The hints tell a client which tools only read (it may call them
	// without asking its person) and which may spend: locate is
	// idempotent, since it quotes only the shortfall of what is located.
	reads := &mcp.ToolAnnotations{ReadOnlyHint: true}
	addTool(s, t, &mcp.Tool{Name: "quote", Annotations: &mcp.ToolAnnotations{DestructiveHint: new(false)},
		Description: "The broker's locate offer for each symbol, then cancelled: a price check, nothing is accepted or paid. " +
			"Waits for the prices (a symbol quoted in the last 30 seconds waits its turn)."}, t.quote)
	addTool(s, t, &mcp.Tool{Name: "shortable", Annotations: reads,
		Description: "For each symbol: easy to borrow or not, its located inventory, and the last offers seen. Sends no quote."}, t.shortable)
	addTool(s, t, &mcp.Tool{Name: "locate", Annotations: &mcp.ToolAnnotations{IdempotentHint: true},
		Description: "Ensure located shares of a symbol: quotes only the shortfall, accepts an offer at or under max_price " +
			"(and max_cost, when given), declines one above; waits for the outcome. max_price is required."}, t.locate)
	addTool(s, t, &mcp.Tool{Name: "status", Annotations: reads,
		Description: "One workflow by id (or a unique prefix of one), or without an id the account as its owner sees it: " +
			"the owner, the unfinished workflows, the locate budget left."}, t.status)
	addTool(s, t, &mcp.Tool{Name: "credit_back",
		Description: "Return located shares to the broker: shares of one inventory row (type, default Locate), " +
			"or without shares every unused share of the symbol. Waits for the outcome."}, t.creditBack)
	addTool(s, t, &mcp.Tool{Name: "inventory", Annotations: reads,
		Description: "The account's located inventory at the broker, one row per symbol and locate type."}, t.inventory)
	return s
}

// addTool adds a tool of t's whose refusals of bad input say, as the
// CLI's do, that nothing was sent; on a refused account every call is
// refused so.
func addTool[In, Out any](s *mcp.Server, t *tools, tool *mcp.Tool, h mcp.ToolHandlerFor[In, Out]) {
	mcp.AddTool(s, tool, func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		if t.refused != nil {
			var none Out
			return nil, none, nothingSent(t.refused)
		}
		res, out, err := h(ctx, req, in)
		if errors.Is(err, brokercode.ErrInput) {
			err = nothingSent(err)
		}
		return res, out, err
	})
}

// nothingSent is a refusal that says, as the CLI's do, that nothing was
// sent.
func nothingSent(err error) error {
	if strings.Contains(err.Error(), "nothing was sent") {
		return err
	}
	return fmt.Errorf("%w; nothing was sent", err)
}

// instructions tell an agent how the tools fit together.
const instructions = `locator manages short-sale locates on one brokerage account.
Use quote to see a price without committing, shortable to see what is located already,
locate with max_price (a price per share, a decimal string such as "0.02") to get shares,
status to read a workflow, credit_back to return unused shares. Money is a decimal string.
An offer above max_price is declined, never accepted.`

// tools are the handlers over one account, or why it could not be
// opened.
type tools struct {
	acct    account.Account
	refused error
}

// QuoteInput asks the price of located shares.
type QuoteInput struct {
	Symbols []string `json:"symbols" jsonschema:"symbols to price, such as HTBX"`
	Shares  int64    `json:"shares,omitempty" jsonschema:"shares to price per symbol, a multiple of 100 (default 100)"`
}

// QuoteOutput is what the price checks saw: a row per offer (a row per
// side of a Reg SHO pair), or one row per check that saw none, as
// `locator quote -o json` prints them.
type QuoteOutput struct {
	Quotes []console.QuoteRow `json:"quotes"`
}

func (t *tools) quote(ctx context.Context, _ *mcp.CallToolRequest, in QuoteInput) (*mcp.CallToolResult, QuoteOutput, error) {
	var out QuoteOutput
	symbols, err := symbols(in.Symbols)
	if err != nil {
		return nil, out, err
	}
	shares := in.Shares
	if shares == 0 {
		shares = brokercode.LocateLot
	}
	items := make([]account.QuoteItem, len(symbols))
	for i, s := range symbols {
		items[i] = account.QuoteItem{Symbol: s, Quantity: shares}
	}
	res, err := t.acct.Quote(ctx, account.QuoteRequest{Items: items})
	if err != nil {
		return nil, out, err
	}
	ws, err := account.FollowAll(ctx, t.acct, res.Started, unseen)
	out.Quotes = []console.QuoteRow{}
	for _, w := range ws {
		out.Quotes = append(out.Quotes, console.QuoteRowsOf(w)...)
	}
	return nil, out, errors.Join(res.Err(), err)
}

// ShortableInput names the symbols to tell about.
type ShortableInput struct {
	Symbols []string `json:"symbols" jsonschema:"symbols to tell about, such as HTBX"`
}

// ShortableOutput tells about each symbol, in the request's order, as
// `locator shortable -o json` prints it.
type ShortableOutput struct {
	Symbols []console.ShortableRow `json:"symbols"`
}

func (t *tools) shortable(ctx context.Context, _ *mcp.CallToolRequest, in ShortableInput) (*mcp.CallToolResult, ShortableOutput, error) {
	var out ShortableOutput
	symbols, err := symbols(in.Symbols)
	if err != nil {
		return nil, out, err
	}
	st, err := t.acct.Status(ctx, account.StatusRequest{Symbols: symbols})
	if err != nil {
		return nil, out, err
	}
	out.Symbols = []console.ShortableRow{}
	for _, sh := range st.Shortable {
		out.Symbols = append(out.Symbols, console.ShortableRowOf(sh))
	}
	return nil, out, nil
}

// LocateInput asks for located shares of one symbol under a price cap.
type LocateInput struct {
	Symbol string `json:"symbol" jsonschema:"the symbol to locate, such as HTBX"`
	Shares int64  `json:"shares" jsonschema:"shares to have located, a multiple of 100"`
	// MaxPrice is required: an agent never takes an uncapped offer.
	MaxPrice       string `json:"max_price" jsonschema:"highest price per share to accept, a decimal string such as 0.02 (required)"`
	MaxCost        string `json:"max_cost,omitempty" jsonschema:"highest total cost (price × shares) to accept, a decimal string"`
	AllowSingleUse bool   `json:"allow_single_use,omitempty" jsonschema:"allow the SingleUse side of a Reg SHO pair, which cannot be credited back once used"`
}

// Workflow is how a workflow stands or ended: the record `-o json`
// prints (money as decimal strings), its outcome in words, and the exit
// code a command ending with it exits with (0 done, 3 the broker
// rejected, expired or cancelled, 4 declined by the cost policy).
type Workflow struct {
	console.OutcomeRecord
	Outcome string `json:"outcome"`
	Exit    int    `json:"exit"`
}

func workflowOf(w *workflow.Workflow) Workflow {
	o := account.OutcomeOf(w)
	return Workflow{OutcomeRecord: console.OutcomeRecordOf(w), Outcome: o.Words, Exit: console.Exit(o.End)}
}

// LocateOutput is the locate's outcome.
type LocateOutput struct {
	Locate Workflow `json:"locate"`
}

func (t *tools) locate(ctx context.Context, _ *mcp.CallToolRequest, in LocateInput) (*mcp.CallToolResult, LocateOutput, error) {
	var out LocateOutput
	policy, err := capPolicy(in)
	if err != nil {
		return nil, out, err
	}
	symbol, err := brokercode.Symbol(in.Symbol)
	if err != nil {
		return nil, out, err
	}
	res, err := t.acct.Locate(ctx, account.LocateRequest{Items: []account.LocateItem{{Symbol: symbol, Quantity: in.Shares, Policy: policy}}})
	if err != nil {
		return nil, out, err
	}
	if err := res.Err(); err != nil {
		return nil, out, err
	}
	ws, err := account.FollowAll(ctx, t.acct, res.Started, unseen)
	if err != nil {
		return nil, out, err
	}
	out.Locate = workflowOf(ws[0])
	return nil, out, nil
}

// capPolicy is the locate's cost policy: max_price is required, and the
// policy accepts within the caps without asking, as `locator locate
// --max-price` does.
func capPolicy(in LocateInput) (workflow.Policy, error) {
	p := workflow.Policy{AutoAccept: true, AllowSingleUse: in.AllowSingleUse}
	if strings.TrimSpace(in.MaxPrice) == "" {
		return p, account.Errorf(account.KindInput, "max_price is required: an agent's locate accepts only an offer under its cap; nothing was sent")
	}
	var err error
	if p.MaxPrice, err = workflow.ParsePrice("max_price", in.MaxPrice); err != nil {
		return p, err
	}
	if p.MaxCost, err = workflow.ParseCost("max_cost", in.MaxCost); err != nil {
		return p, err
	}
	return p, nil
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
	// Budget is what the locate budget leaves of today, in dollars (none
	// when the account has no budget).
	Budget *workflow.BudgetLeft `json:"budget,omitempty"`
}

func (t *tools) status(ctx context.Context, _ *mcp.CallToolRequest, in StatusInput) (*mcp.CallToolResult, StatusOutput, error) {
	var out StatusOutput
	st, err := t.acct.Status(ctx, account.StatusRequest{})
	if err != nil {
		return nil, out, err
	}
	if in.ID != "" {
		w, err := t.workflow(ctx, st.Open, in.ID)
		if err != nil {
			return nil, out, err
		}
		rec := workflowOf(w)
		out.Workflow = &rec
		return nil, out, nil
	}
	out.Account, out.Env, out.Owner, out.Running, out.Queued, out.Budget = st.Account, string(st.Env), st.Owner.String(), st.Running, st.Queued, st.Budget
	out.Open = []Workflow{}
	for i := range st.Open {
		out.Open = append(out.Open, workflowOf(&st.Open[i]))
	}
	return nil, out, nil
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
	Symbol string `json:"symbol" jsonschema:"the symbol whose located shares to return"`
	Shares int64  `json:"shares,omitempty" jsonschema:"shares of one inventory row to return, a multiple of 100; 0 or absent: every unused share of the symbol"`
	Type   string `json:"type,omitempty" jsonschema:"the inventory row: Locate, PreBorrow or SingleUse (default Locate with shares; every row's unused shares without)"`
}

// CreditBackOutput is each credit-back's outcome, one per inventory row,
// and the rows left alone, with why.
type CreditBackOutput struct {
	CreditBacks []Workflow `json:"credit_backs"`
	Skipped     []Skipped  `json:"skipped,omitempty"`
}

// Skipped is an inventory row a credit-back of the unused shares left
// alone, and why.
type Skipped struct {
	Symbol string `json:"symbol"`
	Type   string `json:"type"`
	Reason string `json:"reason"`
}

func (t *tools) creditBack(ctx context.Context, _ *mcp.CallToolRequest, in CreditBackInput) (*mcp.CallToolResult, CreditBackOutput, error) {
	var out CreditBackOutput
	req, err := creditRequest(in)
	if err != nil {
		return nil, out, err
	}
	res, err := t.acct.CreditBack(ctx, req)
	if err != nil && (res == nil || len(res.Started) == 0) {
		return nil, out, err
	}
	ws, followErr := account.FollowAll(ctx, t.acct, res.Workflows(), unseen)
	out.CreditBacks = []Workflow{}
	for _, w := range ws {
		if w != nil {
			out.CreditBacks = append(out.CreditBacks, workflowOf(w))
		}
	}
	for _, s := range res.Skipped {
		out.Skipped = append(out.Skipped, Skipped{Symbol: s.Symbol, Type: string(s.Type), Reason: s.Reason})
	}
	return nil, out, errors.Join(err, followErr)
}

// creditRequest reads a credit-back's input as `locator credit-back
// SYMBOL [QTY] --type T --yes` does: with shares, a quantity of one row;
// without, the symbol's unused shares, sent without a confirmation (an
// agent is its own confirmation, as --yes is a person's).
func creditRequest(in CreditBackInput) (account.CreditBackRequest, error) {
	symbol, err := brokercode.Symbol(in.Symbol)
	if err != nil {
		return account.CreditBackRequest{}, err
	}
	typ := brokercode.LocateType(in.Type)
	switch typ {
	case "", brokercode.LocateTypeLocate, brokercode.LocateTypePreBorrow, brokercode.LocateTypeSingleUse:
	default:
		return account.CreditBackRequest{}, account.Errorf(account.KindInput, fmt.Sprintf("type %q: want Locate, PreBorrow or SingleUse; nothing was sent", in.Type))
	}
	if in.Shares == 0 {
		return account.CreditBackRequest{Symbol: symbol, Type: typ, Unused: true}, nil
	}
	if typ == "" {
		typ = brokercode.LocateTypeLocate
	}
	return account.CreditBackRequest{Symbol: symbol, Quantity: in.Shares, Type: typ}, nil
}

// InventoryInput takes nothing.
type InventoryInput struct{}

// InventoryOutput is the located inventory as the broker gives it.
type InventoryOutput struct {
	Inventory []brokerclient.InventoryRow `json:"inventory"`
}

func (t *tools) inventory(ctx context.Context, _ *mcp.CallToolRequest, _ InventoryInput) (*mcp.CallToolResult, InventoryOutput, error) {
	out := InventoryOutput{Inventory: []brokerclient.InventoryRow{}}
	r, err := t.acct.Read(ctx, account.ReadRequest{What: account.ReadInventory})
	if err != nil {
		return nil, out, err
	}
	if r.Inventory != nil {
		out.Inventory = r.Inventory
	}
	return nil, out, nil
}

// symbols checks a tool's symbols, at least one.
func symbols(in []string) ([]string, error) {
	if len(in) == 0 {
		return nil, account.Errorf(account.KindInput, "symbols: want at least one symbol; nothing was sent")
	}
	return brokercode.Symbols(in)
}

// unseen is what a tool does with the changes of a workflow it follows
// to its end: an agent gets the end alone.
func unseen(account.Update) {}
