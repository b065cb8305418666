package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/locatorhq/locator/workflow"
)

// Recovery is what an account's owner starts from (engine.Engine.Start),
// as the store holds it once the owner's term has begun: nothing of it
// changes until that owner writes, since an earlier owner's writes fail
// (Fenced).
type Recovery struct {
	// Open are the workflows that have not ended, oldest first; Recent
	// those updated at or after the time asked for (the quotes sent
	// lately, whose symbols' spacing still runs), ended or not.
	Open, Recent []*workflow.Workflow
	// Orders are the orders that have not ended, newest first.
	Orders []*workflow.Order
	// MACsPending: the account's rows wait for their MACs (AdoptMACs).
	MACsPending bool
	// Refused: rows of the account are listed as refused (SetRefused).
	Refused bool
	// Checked is what the account's detail last allowed (NoteEnvChecked):
	// the environment, and the key pair it was read with; zero when none.
	Checked EnvCheck
	// Inventory is the account's last inventory snapshot (SaveInventory's
	// rows), nil when none was saved.
	Inventory []byte
}

// EnvCheck is a check of an account's detail (NoteEnvChecked).
type EnvCheck struct {
	PacingKey string
	Env       string
}

// Recoveries reads the Recovery of each of accounts, Recent from
// updatedSince, in six statements whatever their number: a fleet taking
// a dead process's thousands of accounts at once starts them on what it
// read for all of them, not on a dozen statements each (the takeover's
// accounts were served over seconds, behind one another's round trips).
// Every account named has its Recovery, empty when the store holds
// nothing of it.
func (s *Store) Recoveries(ctx context.Context, accounts []string, updatedSince time.Time) (map[string]*Recovery, error) {
	out := make(map[string]*Recovery, len(accounts))
	for _, a := range accounts {
		out[a] = &Recovery{}
	}
	list, err := json.Marshal(accounts)
	if err != nil {
		return nil, err
	}
	in, arg := s.db.inJSON("account"), []any{string(list)}
	err = scanAll(ctx, s.db, `SELECT `+workflowColumns+` FROM workflows WHERE `+in+` AND (state NOT IN (`+terminalStates+`) OR updated_at >= ?) ORDER BY created_at, id`,
		append(arg, formatTime(updatedSince)), func(sc scanner) error {
			w, err := scanWorkflow(sc)
			if err != nil {
				return err
			}
			r := out[w.Account]
			if !w.Terminal() {
				r.Open = append(r.Open, w)
			}
			if !w.UpdatedAt.Before(updatedSince) {
				r.Recent = append(r.Recent, w)
			}
			return nil
		})
	if err == nil {
		err = scanAll(ctx, s.db, `SELECT `+orderColumns+` FROM orders WHERE `+in+` AND state IN (`+openOrderStates+`) ORDER BY created_at DESC, client_order_id`,
			arg, func(sc scanner) error {
				o, err := scanOrder(sc)
				if err == nil {
					out[o.Account].Orders = append(out[o.Account].Orders, o)
				}
				return err
			})
	}
	for _, flag := range []struct {
		table string
		set   func(*Recovery)
	}{
		{`row_macs_pending`, func(r *Recovery) { r.MACsPending = true }},
		{`refused_rows`, func(r *Recovery) { r.Refused = true }},
	} {
		if err == nil {
			err = scanAll(ctx, s.db, `SELECT DISTINCT account FROM `+flag.table+` WHERE `+in, arg, func(sc scanner) error {
				var a string
				err := sc.Scan(&a)
				if err == nil {
					flag.set(out[a])
				}
				return err
			})
		}
	}
	if err == nil {
		err = scanAll(ctx, s.db, `SELECT account, pacing_key, env FROM account_checks WHERE `+in, arg, func(sc scanner) error {
			var a string
			var c EnvCheck
			err := sc.Scan(&a, &c.PacingKey, &c.Env)
			if err == nil {
				out[a].Checked = c
			}
			return err
		})
	}
	if err == nil {
		err = scanAll(ctx, s.db, `SELECT account, rows FROM inventory_snapshots s WHERE `+in+
			` AND seq = (SELECT MAX(seq) FROM inventory_snapshots m WHERE m.account = s.account)`, arg, func(sc scanner) error {
			var a, rows string
			err := sc.Scan(&a, &rows)
			if err == nil {
				out[a].Inventory = []byte(rows)
			}
			return err
		})
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}
