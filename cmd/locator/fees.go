package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/ledger"
	"github.com/locatorhq/locator/store"
	"github.com/locatorhq/locator/workflow"
)

// defaultFeeGrace is how long a locate fee may take to reach the ledger
// before it counts as missing: four days, so a Friday fill posted after a
// weekend and a holiday is still only pending.
const defaultFeeGrace = 96 * time.Hour

// feesCommand syncs the cash ledger and reconciles locate fees against the
// workflows in the local database.
type feesCommand struct {
	conn  connFlags
	since string
	grace time.Duration
}

func (c *feesCommand) synopsis() string {
	return "sync the cash ledger and reconcile locate fees and credits; exit 3 when one is missing, wrong or unexplained"
}

func (c *feesCommand) flags(fs *pflag.FlagSet) {
	c.conn.register(fs)
	fs.StringVar(&c.since, "since", "", "first trade date to reconcile, YYYY-MM-DD (default 30 days ago)")
	fs.DurationVar(&c.grace, "grace", defaultFeeGrace, "how long after a fill its fee may still be pending before it is missing")
	fs.VarPF(formatAlias{&c.conn.format, formatCSV}, "csv", "", "print CSV (fees, credits and day totals, one row each)").NoOptDefVal = "true"
	fs.MarkDeprecated("csv", "use -o csv")
}

func (c *feesCommand) run(ctx context.Context, args []string) error {
	if len(args) > 0 {
		return usagef("unexpected argument %q", args[0])
	}
	if c.grace < 0 {
		return usagef("--grace %s: want a duration of zero or more", c.grace)
	}
	now := clock.Real{}.Now()
	today := ledger.TradeDate(now)
	since := today.AddDate(0, 0, -30)
	if c.since != "" {
		d, err := time.Parse(time.DateOnly, c.since)
		if err != nil {
			return usagef("--since %q: want a date YYYY-MM-DD", c.since)
		}
		if d.After(today) {
			return usagef("--since %s is after today (%s)", c.since, today.Format(time.DateOnly))
		}
		since = d
	}
	client, s, err := c.conn.readClient()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.db), 0o700); err != nil {
		return fmt.Errorf("database directory: %w", err)
	}
	st, err := store.Open(ctx, s.db, clock.Real{})
	if err != nil {
		return err
	}
	defer st.Close()

	synced, err := ledger.Sync(ctx, client, st, s.account, since, today.AddDate(0, 0, 1))
	if err != nil {
		return accountError(s.account, err)
	}
	r, err := ledger.Reconcile(ctx, client, st, s.account, since, now, c.grace)
	if err != nil {
		return accountError(s.account, err)
	}
	switch c.conn.format {
	case formatJSON:
		c.printJSON(r, synced)
	case formatCSV:
		c.printCSV(r)
	default:
		c.printTable(r, synced)
	}
	if n := r.Problems(); n > 0 {
		return &exitError{code: exitBroker, msg: fmt.Sprintf("%d problem(s) in the ledger: %s", n, r)}
	}
	return nil
}

// feeHours shows a duration in whole hours when it is one ("96h").
func feeHours(d time.Duration) string {
	if d%time.Hour == 0 {
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	}
	return d.String()
}

// sizePrice shows a share price with at least two decimals.
func sizePrice(d decimal.Decimal) string {
	if d.Exponent() >= -2 {
		return d.StringFixed(2)
	}
	return d.String()
}

// feeAmount shows a money value, or "-" when there is none.
func feeAmount(d decimal.Decimal, ok bool) string {
	if !ok {
		return "-"
	}
	return money(d)
}

// feeLineStatus is a line's status as a person reads it.
func feeLineStatus(l ledger.Line) string {
	switch l.Status {
	case ledger.StatusWrongAmount:
		d := money(l.Difference())
		if l.Difference().IsPositive() {
			d = "+" + d
		}
		return "wrong amount (" + d + ")"
	case ledger.StatusPending:
		return "pending until " + l.Due.Local().Format("01-02 15:04")
	case ledger.StatusMissing:
		return "missing since " + l.Due.Local().Format("01-02 15:04")
	}
	return string(l.Status)
}

func (c *feesCommand) printTable(r *ledger.Report, synced ledger.SyncResult) {
	w := c.conn.m.Stdout
	fmt.Fprintf(w, "Locate fees of %s, %s to %s (ledger: %d rows read, %d new; grace %s)\n\n", r.Account,
		r.Since.Format(time.DateOnly), r.Today.Format(time.DateOnly), synced.Fetched, synced.Inserted, feeHours(c.grace))
	out := c.conn.out()
	if len(r.Lines) == 0 {
		fmt.Fprintln(w, "No filled locates, credit-backs or locate fees in this period.")
	} else {
		var rows [][]string
		for _, l := range r.Lines {
			shares, symbol, note := "-", l.Symbol, ""
			if l.WorkflowID != "" {
				shares = strconv.FormatInt(l.Shares, 10)
			}
			if symbol == "" {
				symbol = "?"
			}
			if l.Status == ledger.StatusUnexplained || l.Status == ledger.StatusWrongAmount {
				note = l.Note
			}
			rows = append(rows, []string{l.Date.Format(time.DateOnly), string(l.Kind), symbol, shares,
				feeAmount(l.Expected, l.WorkflowID != "" && l.ExpectedKnown), feeAmount(l.Charged, !l.LedgerDate.IsZero()), feeLineStatus(l), note})
		}
		out.table([]string{"DATE", "TYPE", "SYMBOL", "SHARES", "EXPECTED", "CHARGED", "STATUS", "LEDGER NOTE"}, rows, nil)
	}
	if len(r.Days) > 0 {
		fmt.Fprintln(w)
		var rows [][]string
		for _, d := range r.Days {
			broker, check := "-", string(d.Status)
			if d.BrokerTotal != nil {
				broker = money(*d.BrokerTotal)
			}
			rows = append(rows, []string{d.Date.Format(time.DateOnly), money(d.ExpectedFees), money(d.Charged),
				money(d.ExpectedCredits), money(d.Credited), broker, check})
		}
		out.table([]string{"DAY", "FEES EXPECTED", "CHARGED", "CREDITS EXPECTED", "CREDITED", "totalLocateCosts", "CHECK"}, rows, nil)
	}
	n := r.Counts()
	fmt.Fprintf(w, "\n%d matched, %d pending, %d missing, %d wrong amount, %d unexplained",
		n[ledger.StatusMatched], n[ledger.StatusPending], n[ledger.StatusMissing], n[ledger.StatusWrongAmount], n[ledger.StatusUnexplained])
	if p := r.Problems(); p > 0 {
		fmt.Fprintf(w, ": %d to look into", p)
	}
	fmt.Fprintln(w)
}

// feeLineJSON and feeDayJSON are the --json objects, one per line; the last
// line is the summary.
type feeLineJSON struct {
	Type          string `json:"type"` // fee or credit
	Date          string `json:"date"`
	Symbol        string `json:"symbol"`
	Shares        int64  `json:"shares"`
	Expected      string `json:"expected"`
	ExpectedKnown bool   `json:"expectedKnown"`
	Charged       string `json:"charged"`
	Status        string `json:"status"`
	LedgerDate    string `json:"ledgerDate,omitempty"`
	Note          string `json:"note,omitempty"`
	WorkflowID    string `json:"workflowId,omitempty"`
	QuoteReqID    string `json:"quoteReqID,omitempty"`
	At            string `json:"at,omitempty"`
	Due           string `json:"due,omitempty"`
}

type feeDayJSON struct {
	Type            string `json:"type"` // day
	Date            string `json:"date"`
	ExpectedFees    string `json:"expectedFees"`
	Charged         string `json:"charged"`
	ExpectedCredits string `json:"expectedCredits"`
	Credited        string `json:"credited"`
	PendingFees     string `json:"pendingFees"`
	BrokerTotal     string `json:"totalLocateCosts,omitempty"`
	Check           string `json:"check,omitempty"`
}

type feeSummaryJSON struct {
	Type     string         `json:"type"` // summary
	Account  string         `json:"account"`
	Since    string         `json:"since"`
	Today    string         `json:"today"`
	Grace    string         `json:"grace"`
	Fetched  int            `json:"fetched"`
	Inserted int            `json:"inserted"`
	Counts   map[string]int `json:"counts"`
	Problems int            `json:"problems"`
}

func (c *feesCommand) printJSON(r *ledger.Report, synced ledger.SyncResult) {
	out := c.conn.out()
	for _, l := range r.Lines {
		o := feeLineJSON{Type: string(l.Kind), Date: l.Date.Format(time.DateOnly), Symbol: l.Symbol, Shares: l.Shares,
			Expected: money(l.Expected), ExpectedKnown: l.ExpectedKnown, Charged: money(l.Charged), Status: string(l.Status),
			Note: l.Note, WorkflowID: l.WorkflowID, QuoteReqID: l.QuoteReqID}
		if !l.LedgerDate.IsZero() {
			o.LedgerDate = l.LedgerDate.Format(time.DateOnly)
		}
		if l.WorkflowID != "" {
			o.At, o.Due = l.At.UTC().Format(time.RFC3339), l.Due.UTC().Format(time.RFC3339)
		}
		out.event(o, "")
	}
	for _, d := range r.Days {
		o := feeDayJSON{Type: "day", Date: d.Date.Format(time.DateOnly), ExpectedFees: money(d.ExpectedFees), Charged: money(d.Charged),
			ExpectedCredits: money(d.ExpectedCredits), Credited: money(d.Credited), PendingFees: money(d.PendingFees), Check: string(d.Status)}
		if d.BrokerTotal != nil {
			o.BrokerTotal = money(*d.BrokerTotal)
		}
		out.event(o, "")
	}
	counts := map[string]int{}
	for k, v := range r.Counts() {
		counts[string(k)] = v
	}
	out.event(feeSummaryJSON{Type: "summary", Account: r.Account, Since: r.Since.Format(time.DateOnly), Today: r.Today.Format(time.DateOnly),
		Grace: feeHours(c.grace), Fetched: synced.Fetched, Inserted: synced.Inserted, Counts: counts, Problems: r.Problems()}, "")
}

// printCSV prints fees, credits and day totals as one CSV table, a row
// each, the kind in the type column.
func (c *feesCommand) printCSV(r *ledger.Report) {
	var rows [][]string
	for _, l := range r.Lines {
		shares, expected, ledgerDate := "", "", ""
		if l.WorkflowID != "" {
			shares = strconv.FormatInt(l.Shares, 10)
			if l.ExpectedKnown {
				expected = money(l.Expected)
			}
		}
		if !l.LedgerDate.IsZero() {
			ledgerDate = l.LedgerDate.Format(time.DateOnly)
		}
		rows = append(rows, []string{l.Date.Format(time.DateOnly), string(l.Kind), l.Symbol, shares, expected, money(l.Charged), "", "",
			string(l.Status), ledgerDate, l.WorkflowID, l.QuoteReqID, l.Note})
	}
	for _, d := range r.Days {
		broker := ""
		if d.BrokerTotal != nil {
			broker = money(*d.BrokerTotal)
		}
		rows = append(rows, []string{d.Date.Format(time.DateOnly), "day", "", "", money(d.ExpectedFees), money(d.Charged), money(d.Credited), broker,
			string(d.Status), "", "", "", ""})
	}
	c.conn.out().table([]string{"date", "type", "symbol", "shares", "expected", "charged", "credited", "total_locate_costs", "status", "ledger_date", "workflow_id", "quote_req_id", "note"}, rows, nil)
}

// sizeCommand says how many shares can be shorted now.
type sizeCommand struct {
	conn   connFlags
	price  string
	target int64
}

func (c *sizeCommand) synopsis() string {
	return "shares of SYMBOL shortable at --price now, the limit that binds, and the lots to locate for a target (reads only)"
}

func (c *sizeCommand) flags(fs *pflag.FlagSet) {
	c.conn.register(fs)
	fs.StringVar(&c.price, "price", "", "price per share the short would be placed at (required)")
	fs.Int64Var(&c.target, "target", 0, "shares you want to short: says how many more lots to locate and their cost")
}

// sizeJSON is the --json object.
type sizeJSON struct {
	Account         string      `json:"account"`
	Symbol          string      `json:"symbol"`
	Price           string      `json:"price"`
	Shortable       int64       `json:"shortable"`
	Binding         string      `json:"binding"`
	Limits          []limitJSON `json:"limits"`
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

type limitJSON struct {
	Name      string `json:"name"`
	Shares    *int64 `json:"shares"` // null when unlimited
	Unlimited bool   `json:"unlimited"`
	Detail    string `json:"detail"`
}

func (c *sizeCommand) run(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return usagef("want SYMBOL, got %d argument(s)", len(args))
	}
	symbol := args[0]
	if err := brokercode.ValidateSymbol(symbol); err != nil {
		return err
	}
	if c.price == "" {
		return usagef("--price is required")
	}
	price, err := workflow.ParsePrice("--price", c.price)
	if err != nil {
		return err
	}
	if c.target < 0 {
		return usagef("--target %d: want zero or more shares", c.target)
	}
	client, s, err := c.conn.readClient()
	if err != nil {
		return err
	}
	// The last offered price comes from the local database; a missing one
	// is not created for a read.
	var st *store.Store
	if _, err := os.Stat(s.db); err == nil {
		if st, err = store.Open(ctx, s.db, clock.Real{}); err != nil {
			return err
		}
		defer st.Close()
	}
	z, err := ledger.Size(ctx, client, st, s.account, symbol, price, c.target)
	if errors.Is(err, brokercode.ErrInput) {
		return usagef("%v", err)
	}
	if err != nil {
		return accountError(s.account, err)
	}
	switch c.conn.format {
	case formatJSON:
		c.printJSON(z)
		return nil
	case formatCSV:
		c.conn.out().table(limitHeader, limitRows(z), nil)
		return nil
	}
	w := c.conn.m.Stdout
	fmt.Fprintf(w, "%s at %s: %d shares shortable now, bound by %s\n\n", z.Symbol, sizePrice(z.Price), z.Shortable, z.Binding)
	c.conn.out().table(limitHeader, limitRows(z), nil)
	fmt.Fprintf(w, "\nopen short %d (not counted again), working sells %d\n", z.OpenShort, z.WorkingSells)
	if z.Target > 0 {
		switch {
		case z.LotsToLocate == 0:
			fmt.Fprintf(w, "target %d: nothing more to locate\n", z.Target)
		case z.LastOfferKnown:
			fmt.Fprintf(w, "target %d: locate %d more (%d lots of 100), about %s at the last offered %s per share\n",
				z.Target, z.SharesToLocate, z.LotsToLocate, money(z.EstimatedCost), price4(z.LastOfferPrice))
		default:
			fmt.Fprintf(w, "target %d: locate %d more (%d lots of 100); cost unknown, no offer for %s seen yet\n",
				z.Target, z.SharesToLocate, z.LotsToLocate, z.Symbol)
		}
	}
	fmt.Fprintf(w, "\n%s\n", z.Explanation)
	return nil
}

// limitHeader and limitRows are the limits on a short's size, the one
// that binds marked.
var limitHeader = []string{"LIMIT", "SHARES", "HOW", ""}

func limitRows(z *ledger.Sizing) [][]string {
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

func (c *sizeCommand) printJSON(z *ledger.Sizing) {
	o := sizeJSON{
		Account: z.Account, Symbol: z.Symbol, Price: z.Price.String(), Shortable: z.Shortable, Binding: string(z.Binding),
		AccountStatus: z.AccountStatus, EasyToBorrow: z.EasyToBorrow, Located: z.Located, OpenShort: z.OpenShort,
		WorkingSells: z.WorkingSells, WorkingNotional: money(z.WorkingNotional), BuyingPower: money(z.BuyingPower),
		Target: z.Target, SharesToLocate: z.SharesToLocate, LotsToLocate: z.LotsToLocate,
		Explanation: strings.TrimSpace(z.Explanation),
	}
	if z.LastOfferKnown {
		o.LastOfferPrice = z.LastOfferPrice.String()
		if z.LotsToLocate > 0 {
			o.EstimatedCost = money(z.EstimatedCost)
		}
	}
	for _, l := range z.Limits {
		lj := limitJSON{Name: string(l.Name), Unlimited: l.Unlimited, Detail: l.Detail}
		if !l.Unlimited {
			n := l.Shares
			lj.Shares = &n
		}
		o.Limits = append(o.Limits, lj)
	}
	c.conn.out().event(o, "")
}
