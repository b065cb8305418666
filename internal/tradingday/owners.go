package tradingday

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/service"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/internal/wire"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// OpHandover hands the account from one owner to another mid-locate, as
// `locator serve` does: a locate sent by a follower process (a
// wire.Client over the owner's socket, as another shell's command is)
// runs for Wait, then its owner steps down (its lease released, its
// engine stopped with the locate under way) and a second owner takes the
// account on the same database (the lease's next term, its writes fenced
// by it) and resumes every workflow. The follower follows the locate
// across the handover, dialling the socket again when its stream is cut,
// as the command does; the locate auto-accepts under a cap, or (Answer
// prompt-yes) waits on the shell's prompt, which the owner of the moment
// puts the offer to. The checker's invariants hold across it (one quote
// per quoteReqID, nothing left open, the follower ends).
const OpHandover Kind = "handover"

// OpFollower is a locate of another shell: a follower process (a
// wire.Client over the owner's socket) locates, its offer left to a
// person; a second follower, another shell, reads the offer in Status and
// answers it as Answer says (yes at the price it shows, four decimals; no;
// or never, and the window runs out); both follow the locate to its end.
// Checked: a waiting offer reads the same from another process, an
// approval at the price shown is taken and fills, and no follower waits
// past its workflow's end.
const OpFollower Kind = "follower"

// OpCancelCall is a call abandoned mid-flight, as an agent's MCP client
// cancels a locate or a killed command's connection drops: a follower
// process locates, its offer left to its prompt, and once the offer is
// put to it (or op.Wait has passed) the call's context is cancelled and
// the follower goes away. Checked (owner-serves-after-cancel): the owner
// goes on serving (another shell's Status answers), the locate ends final
// and agrees with the broker, and nothing is left open at the broker.
// With MCP set the caller is an agent, through the Go SDK's MCP client
// and `locator mcp`'s server (abandonMCP): the server answers its next
// call too.
const OpCancelCall Kind = "cancel-call"

// daemon is an owner run as `locator serve` runs one (service.Own), on the
// day's database.
type daemon struct {
	owner *service.Owner
	st    *store.Store
}

// own stops the runner's owner and makes a daemon owner of the account,
// its lock and socket under dir.
func (r *runner) own(ctx context.Context, dir string) (*daemon, error) {
	r.stopOwner()
	r.starting.Store(true)
	defer r.starting.Store(false)
	client, err := r.brokerClient()
	if err != nil {
		return nil, err
	}
	st, err := store.Open(ctx, r.db, r.clk)
	if err != nil {
		return nil, err
	}
	o, err := service.Own(ctx, service.OwnerConfig{
		Engine: engine.Config{Client: client, Store: st, Clock: r.clk, Account: Account, Env: brokerclient.EnvLive, Logger: slog.New(slog.DiscardHandler)},
		DB:     r.db, BaseURL: r.srv.URL, RuntimeDir: dir, Role: wire.RoleDaemon,
	})
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("own the account: %w", err)
	}
	return &daemon{owner: o, st: st}, nil
}

// close steps the daemon down: its workflows stay in the database.
func (d *daemon) close() {
	d.owner.Close()
	d.st.Close()
}

// shell is a follower process named name: a wire.Client over the
// daemon's socket, proving the account's key pair as a command does; ask,
// when set, is its prompt.
func (r *runner) shell(d *daemon, name string, ask func(context.Context, account.Question) bool) (*wire.Client, error) {
	key := r.day.Scenario.Keys[0]
	prover, err := brokerclient.NewClient(brokerclient.WithBaseURL(r.srv.URL), brokerclient.WithCredentials(key.KeyID, key.Secret))
	if err != nil {
		return nil, err
	}
	r.callers++
	c := account.Caller{ID: fmt.Sprintf("shell-%d", r.callers), Name: name, Env: brokerclient.EnvLive, Ask: ask}
	return wire.Dial(d.owner.Lease().Endpoint, c, prover, r.srv.URL), nil
}

// runtimeDir is a folder for a daemon's lock and socket, short enough
// for a socket's path.
func runtimeDir() (string, error) { return os.MkdirTemp("", "locator-day-") }

// handover runs op (see OpHandover).
func (r *runner) handover(ctx context.Context, op Op) (string, error) {
	dir, err := runtimeDir()
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	first, err := r.own(ctx, dir)
	if err != nil {
		return "", err
	}
	// The locate auto-accepts under a cap, or its shell's prompt says yes
	// to the offer, put to it by whichever owner holds the account then.
	pol := workflow.Policy{AutoAccept: true, MaxPrice: decimal.RequireFromString("0.10"), AllowSingleUse: op.SingleUse}
	var ask func(context.Context, account.Question) bool
	if op.Answer == AnswerPromptYes {
		pol = workflow.Policy{AllowSingleUse: op.SingleUse}
		ask = func(context.Context, account.Question) bool { return true }
	}
	sh, err := r.shell(first, "locate in another shell", ask)
	if err != nil {
		first.close()
		return "", err
	}
	defer sh.Close()
	res, err := sh.Locate(ctx, account.LocateRequest{Items: []account.LocateItem{{Symbol: op.Symbols[0], Quantity: op.Quantity, Policy: pol}},
		Ask: ask != nil})
	if err != nil {
		first.close()
		return "", err
	}
	st := res.Started[0]
	if st.Refused != nil {
		first.close()
		return "refused: " + st.Refused.Error(), r.startOwner(ctx, false)
	}
	fctx, cancel := context.WithTimeout(ctx, followWait)
	defer cancel()
	owned := make(chan struct{}) // closed once the second owner serves
	type end struct {
		w   *workflow.Workflow
		err error
	}
	ended := make(chan end, 1)
	go func() {
		w, err := sh.Follow(fctx, account.FollowRequest{ID: st.ID}, nil)
		if err != nil && fctx.Err() == nil {
			// The stream was cut by the owner stepping down: dial again,
			// once the next owner serves, as the command does.
			select {
			case <-owned:
				w, err = sh.Follow(fctx, account.FollowRequest{ID: st.ID}, nil)
			case <-fctx.Done():
			}
		}
		ended <- end{w, err}
	}()
	if err := r.sleep(ctx, op.Wait); err != nil {
		first.close()
		return "", err
	}
	first.close()
	second, err := r.own(ctx, dir)
	if err != nil {
		return "", fmt.Errorf("the second owner: %w", err)
	}
	close(owned)
	e := <-ended
	second.close()
	if err := r.startOwner(ctx, false); err != nil {
		return "", err
	}
	if e.err != nil {
		if fctx.Err() != nil && ctx.Err() == nil {
			return "", &Violation{Invariant: "follower-ends", Detail: fmt.Sprintf("%s (%s): a follower in another process still waits %s after the handover: %v; the owner's record: %s", st.ID, st.Symbol, followWait, e.err, r.recorded(st.ID))}
		}
		return "", fmt.Errorf("following %s across the handover: %w", st.ID, e.err)
	}
	o := account.OutcomeOf(e.w)
	return fmt.Sprintf("[%s %s exit %d] ", e.w.Symbol, o.Words, console.Exit(o.End)), r.checkWorkflowErr(e.w, o)
}

// checkWorkflowErr is checkWorkflow as an error (nil when it holds).
func (r *runner) checkWorkflowErr(w *workflow.Workflow, o account.Outcome) error {
	if v := r.checkWorkflow(w, o); v != nil {
		return v
	}
	return nil
}

// follower runs op (see OpFollower).
func (r *runner) follower(ctx context.Context, op Op) (string, error) {
	return r.onDaemon(ctx, op, r.fromShells)
}

// onDaemon runs op on a daemon owner of the account (run, on its socket,
// with the shells it dials), then gives the account back to the runner's
// owner.
func (r *runner) onDaemon(ctx context.Context, op Op, run func(context.Context, *daemon, Op) (string, error)) (string, error) {
	dir, err := runtimeDir()
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	d, err := r.own(ctx, dir)
	if err != nil {
		return "", err
	}
	words, ferr := run(ctx, d, op)
	d.close()
	if err := r.startOwner(ctx, false); err != nil {
		return words, err
	}
	return words, ferr
}

// fromShells is the follower operation on daemon d.
func (r *runner) fromShells(ctx context.Context, d *daemon, op Op) (string, error) {
	locating, other, err := r.twoShells(d)
	if err != nil {
		return "", err
	}
	defer locating.Close()
	defer other.Close()
	res, err := locating.Locate(ctx, account.LocateRequest{Items: []account.LocateItem{{Symbol: op.Symbols[0], Quantity: op.Quantity,
		Policy: workflow.Policy{AllowSingleUse: op.SingleUse}}}, Ask: true})
	if err != nil {
		return "", err
	}
	st := res.Started[0]
	if st.Refused != nil {
		return "refused: " + st.Refused.Error(), nil
	}
	fctx, cancel := context.WithTimeout(ctx, followWait)
	defer cancel()
	// The other shell watches the locate and answers its offer when one
	// waits on a person.
	offered := make(chan *workflow.Offer, 1)
	type end struct {
		w   *workflow.Workflow
		err error
	}
	watched := make(chan end, 1)
	go func() {
		w, err := other.Follow(fctx, account.FollowRequest{ID: st.ID, FromStart: true}, func(u account.Update) {
			if u.Offer != nil {
				select {
				case offered <- u.Offer:
				default:
				}
			}
		})
		watched <- end{w, err}
	}()
	var answered error
	var shown string
	if op.Answer != AnswerNone {
		select {
		case offer := <-offered:
			shown, answered = r.answerElsewhere(fctx, other, st.ID, offer, op.Answer == AnswerPromptYes)
			if v := (*Violation)(nil); errors.As(answered, &v) {
				return "", v
			}
		case e := <-watched:
			watched <- e // it ended before an offer (covered, rejected)
		}
	}
	w, err := locating.Follow(fctx, account.FollowRequest{ID: st.ID}, nil)
	e := <-watched
	for _, f := range []struct {
		who string
		err error
	}{{"the shell that located", err}, {"the other shell", e.err}} {
		if f.err != nil {
			if fctx.Err() != nil && ctx.Err() == nil {
				return "", &Violation{Invariant: "follower-ends", Detail: fmt.Sprintf("%s (%s): %s still waits %s after it started: %v; the owner's record: %s", st.ID, st.Symbol, f.who, followWait, f.err, r.recorded(st.ID))}
			}
			return "", fmt.Errorf("%s following %s: %w", f.who, st.ID, f.err)
		}
	}
	o := account.OutcomeOf(w)
	words := fmt.Sprintf("[%s %s exit %d] ", w.Symbol, o.Words, console.Exit(o.End))
	if err := r.checkWorkflowErr(w, o); err != nil {
		return words, err
	}
	if op.Answer == AnswerPromptYes && shown != "" && answered == nil && w.State != states.Filled {
		return words, &Violation{Invariant: "approval-of-shown-offer",
			Detail: fmt.Sprintf("%s: approved from another shell at %s as shown and the answer taken, but it ended %s (%s)", st.ID, shown, w.State, o.Words)}
	}
	return words, nil
}

// twoShells opens two followers of daemon d: the shell that locates, its
// prompt left open (the answer comes from the other shell, or never), and
// the other shell.
func (r *runner) twoShells(d *daemon) (locating, other *wire.Client, err error) {
	locating, err = r.shell(d, "locate in another shell", func(qctx context.Context, _ account.Question) bool {
		<-qctx.Done()
		return false
	})
	if err != nil {
		return nil, nil, err
	}
	if other, err = r.shell(d, "another shell", nil); err != nil {
		locating.Close()
		return nil, nil, err
	}
	return locating, other, nil
}

// answerElsewhere has another shell read the offer waiting on workflow id
// in Status and answer it (yes at the price shown there, four decimals,
// or no); it returns the price shown and the answer's error, a Violation
// when the offer reads differently there or an approval at the price
// shown is refused.
func (r *runner) answerElsewhere(ctx context.Context, other account.Account, id string, offer *workflow.Offer, yes bool) (string, error) {
	st, err := other.Status(ctx, account.StatusRequest{})
	if err != nil {
		return "", err
	}
	var seen *workflow.Workflow
	for i := range st.Open {
		if st.Open[i].ID == id {
			seen = &st.Open[i]
		}
	}
	if seen == nil || seen.State != states.Offered {
		return "", nil // it ended, or was decided, meanwhile
	}
	if p := seen.OfferPrice(); !p.Equal(offer.Price) {
		return "", &Violation{Invariant: "waiting-offer-shown-elsewhere",
			Detail: fmt.Sprintf("%s waits on a person with %s at %s; another process's status shows price %q type %q", id, offer.QuoteReqID, offer.Price, p, seen.LocateType)}
	}
	shown := seen.OfferPrice().StringFixed(4)
	err = other.Answer(ctx, account.AnswerRequest{ID: id, Accept: yes, Offer: offer.QuoteReqID, Price: decimal.RequireFromString(shown), Via: "another shell"})
	switch {
	case err == nil:
		return shown, nil
	case account.KindOf(err) == account.KindNotOpen:
		return "", nil // the window ran out meanwhile
	case yes:
		return shown, &Violation{Invariant: "approval-of-shown-offer",
			Detail: fmt.Sprintf("%s: approving %s at %s as another shell shows it (broker wrote %s) failed: %v", id, offer.QuoteReqID, shown, r.wire(offer.QuoteReqID), err)}
	}
	return shown, err
}

// cancelCall runs op (see OpCancelCall).
func (r *runner) cancelCall(ctx context.Context, op Op) (string, error) {
	if op.MCP {
		return r.onDaemon(ctx, op, r.abandonMCP)
	}
	return r.onDaemon(ctx, op, r.abandon)
}

// abandon is the cancel-call operation on daemon d.
func (r *runner) abandon(ctx context.Context, d *daemon, op Op) (string, error) {
	asked := make(chan struct{}, 1)
	caller, err := r.shell(d, "an agent's call", func(qctx context.Context, _ account.Question) bool {
		select {
		case asked <- struct{}{}:
		default:
		}
		<-qctx.Done()
		return false
	})
	if err != nil {
		return "", err
	}
	cctx, cancel := context.WithCancel(ctx)
	res, err := caller.Locate(cctx, account.LocateRequest{Items: []account.LocateItem{{Symbol: op.Symbols[0], Quantity: op.Quantity,
		Policy: workflow.Policy{AllowSingleUse: op.SingleUse}}}, Ask: true})
	if err != nil {
		cancel()
		caller.Close()
		return "", err
	}
	st := res.Started[0]
	if st.Refused != nil {
		cancel()
		caller.Close()
		return "refused: " + st.Refused.Error(), nil
	}
	followed := make(chan error, 1)
	go func() {
		_, err := caller.Follow(cctx, account.FollowRequest{ID: st.ID}, nil)
		followed <- err
	}()
	// The call is abandoned once its offer waits on the caller, or after
	// op.Wait of virtual time, whichever comes first.
	wait := r.clk.NewTimer(op.Wait)
	select {
	case <-asked:
	case <-wait.C():
	case <-ctx.Done():
	}
	wait.Stop()
	cancel()
	<-followed
	caller.Close()
	return r.servesAfterCancel(ctx, d, st.ID, st.Symbol)
}

// servesAfterCancel checks, once a call that started workflow id went
// away mid-flight, that the owner still serves another shell (Status
// answers), and follows id from there to its end, which must agree with
// the broker (owner-serves-after-cancel, and checkWorkflow's).
func (r *runner) servesAfterCancel(ctx context.Context, d *daemon, id, symbol string) (string, error) {
	other, err := r.shell(d, "another shell", nil)
	if err != nil {
		return "", err
	}
	defer other.Close()
	fctx, fcancel := context.WithTimeout(ctx, followWait)
	defer fcancel()
	if _, err := other.Status(fctx, account.StatusRequest{}); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", &Violation{Invariant: "owner-serves-after-cancel", Detail: fmt.Sprintf("%s (%s): after its caller went away, another shell's status failed: %v", id, symbol, err)}
	}
	w, err := other.Follow(fctx, account.FollowRequest{ID: id}, nil)
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", &Violation{Invariant: "owner-serves-after-cancel", Detail: fmt.Sprintf("%s (%s): after its caller went away, following it from another shell failed: %v; the owner's record: %s", id, symbol, err, r.recorded(id))}
	}
	o := account.OutcomeOf(w)
	words := fmt.Sprintf("[%s %s exit %d] ", w.Symbol, o.Words, console.Exit(o.End))
	return words, r.checkWorkflowErr(w, o)
}
