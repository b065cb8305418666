// Helpers the cases share: contexts, request counts from the simulator's
// log, following a workflow to its end, and the asker that answers
// questions as a person would.

package accounttest

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

func capped(price string) workflow.Policy {
	return workflow.Policy{MaxPrice: decimal.RequireFromString(price)}
}

// ctx bounds a case in virtual time's real-time cost.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

// writes counts the requests that changed something at the broker.
func writes(e *Env) int {
	n := 0
	for _, r := range e.Sim.Sim.Requests() {
		if r.Method != "GET" && !strings.HasPrefix(r.Path, "/_sim/") {
			n++
		}
	}
	return n
}

// shortSent waits until the broker has the order of a short r started
// (its placement may still be on its way when Short returns: a caller
// waits at most followFor for it), so that writes counted after it are
// another call's. A hang guard bounds it.
func shortSent(t *testing.T, e *Env, r *account.ShortResult) {
	t.Helper()
	if r == nil || r.Order == nil {
		t.Fatal("the short placed no order")
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		for _, q := range e.Sim.Sim.Requests() {
			if q.Method == "POST" && strings.HasSuffix(q.Path, "/order") && strings.Contains(q.Body, r.Order.ClientOrderID) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the short's order %s never reached the broker", r.Order.ClientOrderID)
		}
	}
}

// count counts the log's requests of method whose path holds part.
func count(e *Env, method, part string) int {
	n := 0
	for _, r := range e.Sim.Sim.Requests() {
		if r.Method == method && strings.Contains(r.Path, part) {
			n++
		}
	}
	return n
}

// ok fails the case on err.
func ok(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// locateOne starts one locate and returns its workflow id.
func locateOne(t *testing.T, a account.Account, it account.LocateItem, ask bool) string {
	t.Helper()
	res, err := a.Locate(ctx(t), account.LocateRequest{Items: []account.LocateItem{it}, Ask: ask})
	ok(t, err)
	if len(res.Started) != 1 || res.Started[0].ID == "" {
		t.Fatalf("locate %s: %+v", it.Symbol, res.Started)
	}
	return res.Started[0].ID
}

// follow follows id to its end, recording the states it went through.
func follow(t *testing.T, a account.Account, id string) (*workflow.Workflow, []states.State) {
	t.Helper()
	var seen []states.State
	w, err := a.Follow(ctx(t), account.FollowRequest{ID: id}, func(u account.Update) {
		if u.Workflow != nil && (len(seen) == 0 || seen[len(seen)-1] != u.Workflow.State) {
			seen = append(seen, u.Workflow.State)
		}
	})
	ok(t, err)
	return w, append(seen, w.State)
}

// wantOutcome checks the words and exit code of w's outcome.
func wantOutcome(t *testing.T, w *workflow.Workflow, st states.State, words string, exit int) {
	t.Helper()
	o := account.OutcomeOf(w)
	if w.State != st || !strings.Contains(o.Words, words) || console.Exit(o.End) != exit {
		t.Errorf("outcome %s %q exit %d, want %s with %q, exit %d", w.State, o.Words, console.Exit(o.End), st, words, exit)
	}
}

// asker is a caller's prompt that answers each offer with answer (after
// telling the case it was asked), or waits to be withdrawn when answer is
// nil.
type asker struct {
	mu        sync.Mutex
	asked     chan account.Question
	withdrawn chan string
	answer    *bool
}

func newAsker(answer *bool) *asker {
	return &asker{asked: make(chan account.Question, 4), withdrawn: make(chan string, 4), answer: answer}
}

func (k *asker) ask(ctx context.Context, q account.Question) bool {
	k.asked <- q
	if k.answer != nil {
		return *k.answer
	}
	<-ctx.Done()
	k.withdrawn <- q.ID
	return false
}

func yes() *bool { v := true; return &v }

func no() *bool { v := false; return &v }

func caller(name string, k *asker) account.Caller {
	c := account.Caller{Name: name, Env: brokerclient.EnvLive}
	if k != nil {
		c.Ask = k.ask
	}
	return c
}

// question waits for the asker's question.
func (k *asker) question(t *testing.T) account.Question {
	t.Helper()
	select {
	case q := <-k.asked:
		return q
	case <-ctx(t).Done():
		t.Fatal("no question put to the asker")
	}
	return account.Question{}
}

// dedupe drops the states a follower may see twice (pending between
// quoting and offered is the broker's choice).
func dedupe(s []states.State) []states.State {
	var out []states.State
	for _, st := range s {
		if st == states.Pending || (len(out) > 0 && out[len(out)-1] == st) {
			continue
		}
		out = append(out, st)
	}
	return out
}
