package account

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// followOnly is an Account that can only follow: the ends it knows, and
// the owner gone for any other id.
type followOnly struct {
	Account
	ends map[string]*workflow.Workflow
}

func (a followOnly) Follow(_ context.Context, req FollowRequest, _ func(Update)) (*workflow.Workflow, error) {
	if w, ok := a.ends[req.ID]; ok {
		return w, nil
	}
	return nil, Errorf(KindOwnerGone, "the owner went away and no other process took the account")
}

// A batch's workflows are followed together: one that could not be
// followed to its end is named, with the kind of why (and so the exit
// code), beside the ends of the others; one never started is skipped.
func TestFollowAllNamesWhatItCouldNotFollow(t *testing.T) {
	t.Parallel()
	a := followOnly{ends: map[string]*workflow.Workflow{"wf-a": {ID: "wf-a", State: states.Filled}}}
	started := []Started{{ID: "wf-a", Symbol: "AAA"}, {Symbol: "BBB", Refused: Errorf(KindInput, "no")}, {ID: "wf-c", Symbol: "CCC"}}
	ws, err := FollowAll(t.Context(), a, started, func(Update) {})
	if len(ws) != 3 || ws[0] == nil || ws[0].State != states.Filled || ws[1] != nil || ws[2] != nil {
		t.Fatalf("ends %v; want wf-a filled alone", ws)
	}
	if err == nil || !strings.Contains(err.Error(), "CCC wf-c was not followed to its end (see 'locator status wf-c')") || KindOf(err) != KindOwnerGone {
		t.Fatalf("err %v (kind %s); want wf-c named, kind owner_gone", err, KindOf(err))
	}
	if _, err := FollowAll(t.Context(), a, started[:2], nil); err != nil { // nil show: none, as for Follow
		t.Fatalf("all followed: err %v", err)
	}
}

// hangs is an Account whose follows end only with their context, as an
// owner's do while an offer is open.
type hangs struct{ Account }

func (hangs) Follow(ctx context.Context, _ FollowRequest, _ func(Update)) (*workflow.Workflow, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func (hangs) Cancel(context.Context, CancelRequest) error { return Errorf(KindNotOpen, "nothing open") }

// A follow cut short by its context (an agent's cancelled call, a Ctrl-C)
// is the context's error, never a nil end with a nil error: `locator mcp`
// took the nil end for an outcome and died on it.
func TestFollowAllCancelledIsAnError(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	ws, err := FollowAll(ctx, hangs{}, []Started{{ID: "wf-a", Symbol: "AAA"}}, nil)
	if !errors.Is(err, context.Canceled) || len(ws) != 1 || ws[0] != nil {
		t.Fatalf("ends %v, err %v; want no end and context.Canceled", ws, err)
	}
}
