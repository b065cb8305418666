// Package tradingday generates seeded trading days of a desk and checks
// them against the broker alone, in the spirit of FoundationDB's simulation
// tests, TigerBeetle's VOPR and Jepsen's generator/checker split
// (docs/design.md "Generated trading days").
//
// A seed makes one Day: a scenario of the simulator (pool prices of 2, 3
// and 4 decimals written as floats, Reg SHO pairs priced on both sides or
// one, settle delays, the broker's clock ahead of or behind the desk's) and a list of operations (locates single and batch,
// Reg SHO with and without SingleUse, price checks, answers from the
// prompt, from another caller or none, credit-backs of a symbol and of
// everything, the EOD job, restarts of the owner, waits, the next trading
// day across a holiday; orders.go's shorts, covers and price moves, and
// session.go's short sales after the calendar's next early close; from
// faults.go and owners.go, drawn from a stream
// of the seed's own: owner crashes, evenings across the 8 PM rollover
// under a running owner, handovers to a second owner, locates of follower
// processes over the owner's socket answered from another one, and days
// whose broker loses stream pushes). Run drives locator through its account API
// (local.Account on a real engine and store) against the simulator on a
// fake clock shared by both; the checker reads only the simulator's state
// (Sim.Locates, Sim.Inventory, Sim.Requests; Sim.Orders, Sim.Fills and
// Sim.Cash for the order and money side, orders.go, session.go and
// money.go) and what a person or a
// command was shown, never locator's database, and names the first broken
// invariant with the operations that led to it.
//
// The operations are drawn from the seed before anything runs, so one seed
// is one day whatever the goroutines' interleaving; each operation runs to
// its end before the next starts, so the checker's verdict is the same on
// every run of a seed.
package tradingday

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokersim"
)

// Account is the account every day trades on (the default scenario's
// Active live margin account).
const Account = "LV100001"

// Start is the first day's first instant: Wednesday 2026-11-25 10:00 ET;
// the next day is Thanksgiving, a holiday.
var Start = time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC)

// Kind is what an operation does.
type Kind string

// The operations of a day.
const (
	OpLocate     Kind = "locate"      // one symbol, answered as Answer says
	OpBatch      Kind = "batch"       // several symbols under a price cap
	OpQuote      Kind = "quote"       // a price check
	OpCreditBack Kind = "credit-back" // the unused shares of one symbol
	OpCreditAll  Kind = "credit-back --all"
	OpCreditQty  Kind = "credit-back-qty" // a quantity of one symbol's Locate row
	OpEOD        Kind = "eod-job"         // the credit-back-unused job
	OpRestart    Kind = "restart"         // a locate left running, the owner closed, a new one on the same database
	OpWait       Kind = "wait"            // time passes
	OpNextDay    Kind = "next-day"        // the EOD job, then the next trading day's 10:00 ET
)

// Answer is who answers a locate's offer.
type Answer string

// The answers.
const (
	AnswerPolicy    Answer = "policy"     // auto-accept under a cap: accepted, or declined by the cap
	AnswerPromptYes Answer = "prompt-yes" // the caller's prompt says yes
	AnswerPromptNo  Answer = "prompt-no"  // the caller's prompt says no
	AnswerOther     Answer = "other"      // another caller approves the offer it reads in Status
	AnswerNone      Answer = "none"       // nobody answers: the offer's window runs out
)

// Op is one operation of a day.
type Op struct {
	Kind      Kind
	Symbols   []string
	Quantity  int64
	SingleUse bool
	Answer    Answer
	// MaxPrice caps the price per share (policy answers and batches).
	MaxPrice decimal.Decimal
	// Wait is how long OpWait waits, or how long OpRestart lets the
	// locate run before closing the owner.
	Wait time.Duration
	// Order is the order of the order operations (orders.go).
	Order *Order
	// CreditBack, on OpEvening, credits the symbol's unused shares back
	// as soon as its locate ends, moments before 8 PM.
	CreditBack bool
	// MCP, on OpCancelCall, makes the call through an agent's MCP client
	// and `locator mcp`'s server (agent.go), not a follower's socket.
	MCP bool
}

func (o Op) String() string {
	var b strings.Builder
	b.WriteString(string(o.Kind))
	if len(o.Symbols) > 0 {
		fmt.Fprintf(&b, " %s", strings.Join(o.Symbols, ","))
	}
	if o.Quantity > 0 {
		fmt.Fprintf(&b, " %d", o.Quantity)
	}
	if o.SingleUse {
		b.WriteString(" --allow-single-use")
	}
	if o.Answer != "" {
		fmt.Fprintf(&b, " answer=%s", o.Answer)
	}
	if o.MaxPrice.IsPositive() {
		fmt.Fprintf(&b, " --max-price %s", o.MaxPrice)
	}
	if o.Order != nil {
		fmt.Fprintf(&b, " %s", o.Order)
	}
	if o.Wait > 0 {
		fmt.Fprintf(&b, " after %s", o.Wait)
	}
	if o.CreditBack {
		b.WriteString(", then credit-back")
	}
	if o.MCP {
		b.WriteString(" via mcp")
	}
	return b.String()
}

// Day is one generated trading day (or several, with OpNextDay): the
// simulator's scenario and the operations.
type Day struct {
	Seed     uint64
	Scenario brokersim.Scenario
	// Skew is how far the broker's clock runs ahead of the desk's
	// (behind when negative).
	Skew time.Duration
	// PushLoss is the fraction of the broker's portfolio stream pushes
	// lost, the connection kept (brokersim.Faults.RatePushLoss).
	PushLoss float64
	Ops      []Op
}

// The symbols a day trades: HTBX and HTBY are hard to borrow (Locate and
// IntraDay pools), RSHO is on the Reg SHO list with both sides priced,
// RSSU with only its SingleUse side.
var symbols = []string{"HTBX", "HTBY", "RSHO", "RSSU"}

// Generate makes the day of seed with n operations.
func Generate(seed uint64, n int) Day {
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	sc := brokersim.DefaultScenario()
	sc.Seed = seed
	sc.RateLimits = false
	sc.FloatPrices = true
	sc.CreditBackRefund = brokersim.Dec(decimal.RequireFromString("0.5"))
	settle := time.Duration(500+rng.IntN(2500)) * time.Millisecond
	sc.Timing.SettleMin = brokersim.Duration(settle)
	sc.Timing.SettleMax = brokersim.Duration(settle + time.Duration(rng.IntN(2000))*time.Millisecond)
	// Credit-backs clear in 2 s, not the default 10: the checks after
	// each wait it out, and virtual time costs wall time per timer.
	sc.Timing.CreditClear = brokersim.Duration(2 * time.Second)
	for i := range sc.Pools {
		sc.Pools[i].Price = brokersim.Dec(price(rng))
	}
	skews := []time.Duration{0, 0, 1500 * time.Millisecond, -1500 * time.Millisecond, 40 * time.Second, -40 * time.Second}
	d := Day{Seed: seed, Scenario: sc, Skew: skews[rng.IntN(len(skews))]}
	for len(d.Ops) < n {
		d.Ops = append(d.Ops, op(rng))
	}
	faults(&d, rand.New(rand.NewPCG(seed^0xfa17, seed)))
	return d
}

// price draws a price per share of 2, 3 or 4 decimals between 0.01 and 0.09.
func price(rng *rand.Rand) decimal.Decimal {
	places := int32(2 + rng.IntN(3))
	scale := int64(1)
	for range places - 1 {
		scale *= 10
	}
	// 1..9 hundredths, written with places decimals.
	units := scale/10*1 + rng.Int64N(scale*9/10-scale/10+1)
	if places == 2 {
		units = 1 + rng.Int64N(9)
	}
	return decimal.New(units, -places)
}

// op draws one operation; locates and answers come most often.
func op(rng *rand.Rand) Op {
	if o, ok := orderOp(rng); ok {
		return o
	}
	qty := int64(100 * (1 + rng.IntN(10)))
	sym := symbols[rng.IntN(len(symbols))]
	answers := []Answer{AnswerPolicy, AnswerPolicy, AnswerPromptYes, AnswerPromptNo, AnswerOther, AnswerNone}
	switch r := rng.IntN(100); {
	case r < 40:
		o := Op{Kind: OpLocate, Symbols: []string{sym}, Quantity: qty, SingleUse: rng.IntN(2) == 0, Answer: answers[rng.IntN(len(answers))]}
		if o.Answer == AnswerPolicy {
			o.MaxPrice = decimal.New(int64(1+rng.IntN(10)), -2)
		}
		return o
	case r < 50:
		k := 2 + rng.IntN(len(symbols)-1)
		perm := rng.Perm(len(symbols))[:k]
		o := Op{Kind: OpBatch, Quantity: qty, SingleUse: rng.IntN(2) == 0, MaxPrice: decimal.New(int64(2+rng.IntN(8)), -2)}
		for _, i := range perm {
			o.Symbols = append(o.Symbols, symbols[i])
		}
		return o
	case r < 56:
		return Op{Kind: OpQuote, Symbols: []string{sym}, Quantity: qty}
	case r < 64:
		return Op{Kind: OpCreditBack, Symbols: []string{sym}}
	case r < 68:
		return Op{Kind: OpCreditQty, Symbols: []string{sym}, Quantity: qty}
	case r < 74:
		return Op{Kind: OpCreditAll}
	case r < 79:
		return Op{Kind: OpEOD}
	case r < 82:
		return Op{Kind: OpRestart, Symbols: []string{sym}, Quantity: qty, SingleUse: rng.IntN(2) == 0,
			Wait: time.Duration(rng.IntN(6000)) * time.Millisecond}
	case r < 85:
		return crashOp(rng, sym, qty)
	case r < 93:
		return Op{Kind: OpWait, Wait: time.Duration(1+rng.IntN(40)) * time.Second}
	case r < 95:
		return Op{Kind: OpCancelCall, Symbols: []string{sym}, Quantity: qty, SingleUse: rng.IntN(2) == 0,
			Wait: time.Duration(rng.IntN(4000)) * time.Millisecond}
	case r < 97:
		return Op{Kind: OpEvening, Symbols: []string{sym}, Quantity: qty, SingleUse: rng.IntN(2) == 0}
	default:
		return Op{Kind: OpNextDay}
	}
}
