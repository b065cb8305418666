package local

import (
	"context"
	"errors"
	"fmt"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/workflow"
)

func (s *session) Records(ctx context.Context, req account.RecordsRequest) (*account.Records, error) {
	r, err := records(ctx, s.l.st, s.l.account, req, s.l.eng.BudgetLeft)
	return r, kinded(err)
}

// records answers req from st with the records of account acct, or with
// acct "" of every account in the database (a reader of the whole
// database: `locator status` and `locator jobs`); budget is what the
// account's locate budget leaves of today. Its refusals are *account.Error
// of KindInput, sent nothing and read nothing.
func records(ctx context.Context, st *store.Store, acct string, req account.RecordsRequest, budget func(context.Context) (*workflow.BudgetLeft, error)) (*account.Records, error) {
	if err := checkRecords(req); err != nil {
		return nil, err
	}
	switch req.What {
	case account.RecordsRecent:
		return recent(ctx, st, acct, req.Limit)
	case account.RecordsOne:
		return one(ctx, st, acct, req.ID)
	case account.RecordsJobRuns:
		runs, err := st.JobRuns(ctx, store.JobRunFilter{Account: acct, Job: req.Job, Limit: req.Limit})
		return &account.Records{JobRuns: runs}, err
	}
	left, err := budget(ctx)
	return &account.Records{Budget: left}, err
}

// checkRecords refuses a request of no known kind, or with a field its
// kind does not take.
func checkRecords(req account.RecordsRequest) error {
	refuse := func(why string) error {
		return account.Errorf(account.KindInput, fmt.Sprintf("records %s: %s", req.What, why))
	}
	switch {
	case req.What != account.RecordsRecent && req.What != account.RecordsOne && req.What != account.RecordsJobRuns && req.What != account.RecordsBudget:
		return account.Errorf(account.KindInput, fmt.Sprintf("records %q: not a kind of record (recent, one, jobRuns, budget)", req.What))
	case req.Limit < 0:
		return refuse(fmt.Sprintf("limit %d: want zero or more", req.Limit))
	case (req.What == account.RecordsOne) != (req.ID != ""):
		return refuse("an id is required by one, and taken by no other kind")
	case req.Job != "" && req.What != account.RecordsJobRuns:
		return refuse("takes no job")
	case req.Limit > 0 && req.What != account.RecordsRecent && req.What != account.RecordsJobRuns:
		return refuse("takes no limit")
	}
	return nil
}

// recent is the newest limit workflows and orders of acct (all, when
// limit is 0), with the leases and standbys of acct ("": of every
// account).
func recent(ctx context.Context, st *store.Store, acct string, limit int) (*account.Records, error) {
	leases, err := st.Leases(ctx)
	if err != nil {
		return nil, err
	}
	r := &account.Records{}
	for _, l := range leases {
		if acct == "" || l.Account == acct {
			r.Leases = append(r.Leases, l)
		}
	}
	var of []string // every account's
	if acct != "" {
		of = []string{acct}
	}
	if r.Standbys, err = st.Standbys(ctx, of...); err != nil {
		return nil, err
	}
	ws, err := st.List(ctx, store.Filter{Account: acct, Limit: limit})
	if err != nil {
		return nil, err
	}
	for _, w := range ws {
		r.Workflows = append(r.Workflows, *w)
	}
	orders, err := st.Orders(ctx, store.OrderFilter{Account: acct, Limit: limit})
	if err != nil {
		return nil, err
	}
	for _, o := range orders {
		r.Orders = append(r.Orders, *o)
	}
	refused, err := st.Refused(ctx)
	if err != nil {
		return nil, err
	}
	for _, row := range refused {
		if acct == "" || row.Account == acct {
			r.Refused = append(r.Refused, row)
		}
	}
	return r, nil
}

// one is the workflow of acct ("": of any account) that id names, or else
// the order, with its log.
func one(ctx context.Context, st *store.Store, acct, id string) (*account.Records, error) {
	w, err := st.Find(ctx, acct, id)
	if err == nil {
		log, err := st.Transitions(ctx, w.ID)
		return &account.Records{Workflow: w, Log: log}, err
	}
	var ambiguous *store.AmbiguousError
	switch {
	case errors.As(err, &ambiguous):
		return nil, account.Errorf(account.KindInput, err.Error())
	case !errors.Is(err, store.ErrNotFound):
		return nil, err
	}
	o, err := st.LookUpOrder(ctx, id)
	switch {
	case errors.Is(err, store.ErrOrderNotFound), err == nil && acct != "" && o.Account != acct:
		return nil, account.Errorf(account.KindNotOpen, "no workflow or order "+id)
	case err != nil:
		return nil, err
	}
	log, err := st.OrderTransitions(ctx, o.ClientOrderID)
	return &account.Records{Order: o, Log: log}, err
}
