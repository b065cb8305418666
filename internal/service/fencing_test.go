package service_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/service"
	"github.com/locatorhq/locator/internal/store/storetest"
	"github.com/locatorhq/locator/workflow"
)

// quotesSent counts the locate quotes in the simulator's request log
// (spec "Short locates": POST /v1/api/accounts/locates/quote).
func quotesSent(o *owned) int {
	n := 0
	for _, r := range o.sim.Sim.Requests() {
		if r.Method == "POST" && strings.HasSuffix(r.Path, "/locates/quote") {
			n++
		}
	}
	return n
}

// An owner that stalled past its lease, and was replaced by another
// process in the next term, writes nothing more: its write-ahead intent
// is refused by the term fence, so nothing reaches the broker, its
// next renewal makes it step down, and closing it writes no pacing row. On
// SQLite and on Postgres.
func TestTakeoverFencesTheOldOwner(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Drivers {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			o := ownOn(t, storetest.DSN(t, d), nil)
			old := o.owner.Lease()
			// The old owner's lease lapses (it stalled) and another
			// process takes the account.
			if err := o.st.RenewLease(t.Context(), old.Account, old.Owner, old.Term, 0); err != nil {
				t.Fatal(err)
			}
			next, err := o.st.AcquireLease(t.Context(), locator.Lease{Account: old.Account, Owner: "daemon:elsewhere", PID: 1, Host: "other", Endpoint: "e"}, time.Hour)
			if err != nil || next.Term != old.Term+1 {
				t.Fatalf("takeover: term %d, %v", next.Term, err)
			}
			res, err := o.owner.Local().As(account.Caller{ID: "test"}).Locate(t.Context(), account.LocateRequest{Items: []account.LocateItem{{Symbol: "HTBX", Quantity: 100, Policy: workflow.Policy{AutoAccept: true}}}})
			if err == nil {
				err = res.Err()
			}
			if err == nil {
				t.Fatal("a locate through the replaced owner was started")
			}
			if n := quotesSent(o); n != 0 {
				t.Fatalf("%d quotes sent by the replaced owner", n)
			}
			if err := waitOwner(t, o.owner); !strings.Contains(err.Error(), "lease was lost") {
				t.Fatalf("why it stepped down: %v", err)
			}
			// Closing, the stepped-down owner does not record
			// its last request in the pacing row either: the account's
			// next owner paces from its own start.
			client := o.cfg.Engine.Client
			o.owner.Close()
			if client.LastRequest().IsZero() {
				t.Fatal("the old owner sent nothing: its pacing write is not tested")
			}
			if at, err := o.st.LastRequest(t.Context(), client.PacingKey()); err != nil || !at.IsZero() {
				t.Errorf("pacing row after the stepped-down owner closed: %v, %v; want none written", at, err)
			}
		})
	}
}

// An owner on Postgres that is no longer sure of its lease (its renewals
// failed for a TTL, the database not answering them) sends nothing more to
// the broker, for a caller or for its engine: a locate is refused at its
// first read (the easy-to-borrow check) once the renewal it asks for does
// not come, with the reason, nothing reaches the broker, and the owner
// steps down, for the next owner to take the account.
func TestNoBrokerRequestWithoutTrust(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	o := ownOn(t, db, nil)
	// The database stops answering renewals: a transaction of another
	// session holds the leases table for the rest of the test.
	other, err := sql.Open("pgx", db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	tx, err := other.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback() })
	if _, err := tx.ExecContext(t.Context(), `LOCK TABLE leases IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	o.owner.ExpireTrust()
	before := len(o.sim.Sim.Requests())
	a := o.owner.Local().As(account.Caller{ID: "test"})
	res, err := a.Locate(t.Context(), account.LocateRequest{Items: []account.LocateItem{{Symbol: "HTBX", Quantity: 100, Policy: workflow.Policy{AutoAccept: true}}}})
	if err == nil {
		err = res.Err()
	}
	if err == nil || !strings.Contains(err.Error(), "no longer sure it owns the account") {
		t.Fatalf("locate without trust: %v", err)
	}
	if err := waitOwner(t, o.owner); !strings.Contains(err.Error(), "stepped down") {
		t.Fatalf("why it stepped down: %v", err)
	}
	// The locate's reads never left. A read of the engine's own that
	// passed the gate just before trust ran out may arrive after it (the
	// trust margin is for it); what the engine sends after stepping down,
	// while virtual time runs on for a minute of its polls, never does.
	for _, r := range o.sim.Sim.Requests()[before:] {
		if strings.Contains(r.Path, "/is-easy-to-borrow/") || strings.HasSuffix(r.Path, "/locates/quote") {
			t.Errorf("%s %s of the locate reached the broker without trust in the lease", r.Method, r.Path)
		}
	}
	stepped := len(o.sim.Sim.Requests())
	if err := clock.Sleep(t.Context(), o.sim.Clock, time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, r := range o.sim.Sim.Requests()[stepped:] {
		t.Errorf("%s %s reached the broker after the owner stepped down", r.Method, r.Path)
	}
}

// An owner on Postgres whose process's database session ends (the server
// ended it: other processes now take this process for dead, and may take
// the account at once, as when it is killed) holds the account no longer,
// at once: a locate handed to it sends the broker nothing, and it steps
// down saying why, long before its lease would have lapsed.
func TestSessionEndStepsTheOwnerDown(t *testing.T) {
	t.Parallel()
	dsn := storetest.Postgres(t)
	o := ownOn(t, dsn, nil)
	storetest.EndSession(t, dsn, service.Process())
	if err := waitOwner(t, o.owner); !errors.Is(err, service.ErrSteppedDown) || !strings.Contains(err.Error(), "database session ended") {
		t.Fatalf("why it stepped down: %v", err)
	}
	if o.owner.Held() {
		t.Fatal("the owner whose session ended still holds the account")
	}
	res, err := o.owner.Local().As(account.Caller{ID: "test"}).Locate(t.Context(), account.LocateRequest{Items: []account.LocateItem{{Symbol: "HTBX", Quantity: 100, Policy: workflow.Policy{AutoAccept: true}}}})
	if err == nil {
		err = res.Err()
	}
	if err == nil {
		t.Fatal("a locate through the owner whose session ended was started")
	}
	if n := quotesSent(o); n != 0 {
		t.Fatalf("%d quotes sent by the owner whose session ended", n)
	}
}

// waitOwner is why o stepped down (Owner.Wait), failing the test if it
// has not within 30 s: a hang guard.
func waitOwner(t *testing.T, o *service.Owner) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	err := o.Wait(ctx)
	if err == nil {
		t.Fatal("the owner never stepped down")
	}
	return err
}
