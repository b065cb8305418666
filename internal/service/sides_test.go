package service_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/wire"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// Spec "Short locates" rule 2: at the prompt of a terminal that
// follows the owner, a Reg SHO pair whose both sides are priced, with
// SingleUse allowed, is put to the person with both sides to choose from
// (RSHO: SingleUse 0.0400, PreBorrow 0.0900); the side the person picks
// (y: the one asked about, the cheaper) is the one accepted and filled,
// and the outcome names it.
func TestPromptOffersBothSidesOfAPair(t *testing.T) {
	t.Parallel()
	for answer, want := range map[string]string{"1": "SingleUse", "2": "PreBorrow", "y": "SingleUse"} {
		t.Run(answer, func(t *testing.T) {
			t.Parallel()
			o := own(t)
			var (
				asked bytes.Buffer
				mu    sync.Mutex
				cl    *wire.Client
			)
			p := &console.Prompter{Lines: console.Lines(strings.NewReader(answer + "\n")), Err: &asked,
				Display: console.NewDisplay(&asked, false, o.sim.Clock),
				Answer: func(ctx context.Context, req account.AnswerRequest) error {
					mu.Lock()
					defer mu.Unlock()
					return cl.Answer(ctx, req)
				}}
			mu.Lock()
			cl = wire.Dial(o.owner.Lease().Endpoint, account.Caller{Name: "terminal", Env: brokerclient.EnvLive, Ask: p.Asker(t.Context())},
				o.sim.Client(t, o.sim.Live), o.sim.URL)
			mu.Unlock()
			t.Cleanup(cl.Close)
			res, err := cl.Locate(t.Context(), account.LocateRequest{Items: []account.LocateItem{{Symbol: "RSHO", Quantity: 100,
				Policy: workflow.Policy{AllowSingleUse: true}}}, Ask: true})
			if err != nil || res.Err() != nil {
				t.Fatalf("locate: %+v %v", res, err)
			}
			w, err := cl.Follow(t.Context(), account.FollowRequest{ID: res.Started[0].ID}, nil)
			if err != nil || w.State != states.Filled || w.LocateType != want {
				t.Errorf("answer %s: %+v %v, want filled on the %s side", answer, w, err, want)
			}
			if q := asked.String(); !strings.Contains(q, "a Reg SHO pair: [1] SingleUse at 0.0400 = 4.00, [2] PreBorrow at 0.0900 = 9.00?") {
				t.Errorf("the prompt %q does not offer both sides", q)
			}
			if got := account.OutcomeOf(w); !strings.Contains(got.Words, "("+want+")") {
				t.Errorf("the outcome %q does not name the %s side", got.Words, want)
			}
		})
	}
}
