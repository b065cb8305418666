package tradingday

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/market"
	"github.com/locatorhq/locator/workflow"
)

// OpCrash kills the owner mid-operation: a locate left running for Wait,
// then nothing more the owner sends reaches the broker and no answer
// reaches it (its process killed, as by SIGKILL, mid-request perhaps), and
// a new owner starts on the same database as `locator resume` does. The
// checker's invariants (one quote per quoteReqID, nothing left open,
// inventory equal to the model) hold across it.
const OpCrash Kind = "crash"

// OpEvening takes the desk to Wait before the next 8 PM rollover (its owner
// stopped and started again around the jump, as a desk's evening session
// starts), locates there, a locate that may still be under way at 8 PM,
// credits the symbol's unused shares back at once when CreditBack is set,
// and lets the simulator's 8 PM rollover pass under the running owner:
// the day's inventory and history are then the next trading day's, and
// the operations after it run in that day (see brokersim's rollover.go;
// the checker's model rolls over at the same hour).
const OpEvening Kind = "evening"

// evening runs op (see OpEvening).
func (r *runner) evening(ctx context.Context, op Op) (string, error) {
	// The rollover ahead: today's, or, once it passed (an evening before
	// this one), the next trading day's.
	rollover := market.SessionEnd(r.clk.Now())
	late := rollover.Add(-op.Wait)
	if d := late.Sub(r.clk.Now()); d > 0 {
		r.stopOwner()
		r.sim.Advance(d)
		if err := r.startOwner(ctx, false); err != nil {
			return "", err
		}
	}
	a := r.as("evening", nil)
	res, err := a.Locate(ctx, account.LocateRequest{Items: []account.LocateItem{{Symbol: op.Symbols[0], Quantity: op.Quantity,
		Policy: workflow.Policy{AutoAccept: true, MaxPrice: decimal.RequireFromString("0.10"), AllowSingleUse: op.SingleUse}}}})
	if err != nil {
		return "", err
	}
	words, err := r.followAll(ctx, a, res.Started, nil)
	if err != nil {
		return words, err
	}
	if op.CreditBack {
		cb := r.as("evening credit-back", nil)
		res, err := cb.CreditBack(ctx, account.CreditBackRequest{Symbol: op.Symbols[0], Unused: true})
		if err != nil {
			return words, err
		}
		more, err := r.followAll(ctx, cb, res.Workflows(), nil)
		words += "; credit-back " + more
		if err != nil {
			return words, err
		}
	}
	// The owner stays up across 8 PM: the broker's day rolls over under
	// it, by the broker's clock (skewed from the desk's), a minute past.
	if d := rollover.Add(time.Minute + max(r.day.Skew, -r.day.Skew)).Sub(r.clk.Now()); d > 0 {
		if err := r.sleep(ctx, d); err != nil {
			return words, err
		}
	}
	return words + "; now " + market.DateTime(r.clk.Now()), nil
}

// crashOp draws a crash during a locate of qty sym, at some point of its
// first six seconds.
func crashOp(rng *rand.Rand, sym string, qty int64) Op {
	return Op{Kind: OpCrash, Symbols: []string{sym}, Quantity: qty, SingleUse: rng.IntN(2) == 0,
		Wait: time.Duration(rng.IntN(6000)) * time.Millisecond}
}

// errKilled is what a killed owner's requests come to.
var errKilled = errors.New("tradingday: the owner's process was killed")

// link is one owner's connection to the broker. Once cut, a request sent
// fails without reaching the broker, and the answer of one under way is
// lost (the broker may have acted on it), as when the owner's process dies.
type link struct {
	base http.RoundTripper
	cut  atomic.Bool
}

func (l *link) RoundTrip(req *http.Request) (*http.Response, error) {
	if l.cut.Load() {
		return nil, errKilled
	}
	resp, err := l.base.RoundTrip(req)
	if err == nil && l.cut.Load() {
		resp.Body.Close()
		return nil, errKilled
	}
	return resp, err
}

// crash runs op: the owner killed mid-locate, a new one resuming.
func (r *runner) crash(ctx context.Context, op Op) (string, error) {
	res, err := r.as("crash", nil).Locate(ctx, account.LocateRequest{Items: []account.LocateItem{{Symbol: op.Symbols[0], Quantity: op.Quantity,
		Policy: workflow.Policy{AutoAccept: true, MaxPrice: decimal.RequireFromString("0.10"), AllowSingleUse: op.SingleUse}}}})
	if err != nil {
		return "", err
	}
	if err := r.sleep(ctx, op.Wait); err != nil {
		return "", err
	}
	r.link.cut.Store(true)
	// What is left of the killed process goes away; its database holds
	// what it committed.
	r.stopOwner()
	if err := r.startOwner(ctx, true); err != nil {
		return "", fmt.Errorf("resume after the crash: %w", err)
	}
	return r.followAll(ctx, r.as("after the crash", nil), res.Started, nil)
}

// faults draws, from a stream of the seed's own (so the operations op
// drew stay what they were), how each evening operation times its locate
// before 8 PM, whether the broker loses stream pushes (a day in three
// loses one in three), which abandoned calls an agent makes over MCP
// (one in two), and which waits become an owner handover or a
// locate of followers in other processes (one wait in four each).
func faults(d *Day, rng *rand.Rand) {
	if rng.IntN(3) == 0 {
		d.PushLoss = 1.0 / 3
	}
	for i := range d.Ops {
		switch d.Ops[i].Kind {
		case OpCancelCall:
			d.Ops[i].MCP = rng.IntN(2) == 0
		case OpEvening:
			d.Ops[i].Wait = time.Duration(2000+rng.IntN(90000)) * time.Millisecond
			d.Ops[i].CreditBack = rng.IntN(2) == 0
		case OpWait:
			sym, qty := symbols[rng.IntN(len(symbols))], int64(100*(1+rng.IntN(10)))
			switch rng.IntN(4) {
			case 0:
				d.Ops[i] = Op{Kind: OpHandover, Symbols: []string{sym}, Quantity: qty, SingleUse: rng.IntN(2) == 0,
					Wait: time.Duration(rng.IntN(6000)) * time.Millisecond, Answer: []Answer{AnswerPolicy, AnswerPromptYes}[rng.IntN(2)]}
			case 1:
				answers := []Answer{AnswerPromptYes, AnswerPromptYes, AnswerPromptNo, AnswerNone}
				d.Ops[i] = Op{Kind: OpFollower, Symbols: []string{sym}, Quantity: qty, SingleUse: rng.IntN(2) == 0,
					Answer: answers[rng.IntN(len(answers))]}
			}
		}
	}
}
