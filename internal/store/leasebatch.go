package store

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/locatorhq/locator"
)

// A process's leases in batches: every lease a process holds renewed in
// one statement (RenewLeases), and all of a key pair's accounts taken in
// one (AcquireLeases), so that a desk of thousands of accounts costs the
// database a few statements a round, not one transaction per account.

// Term names one owner's term of an account: what RenewLeases renews.
type Term struct {
	Account string
	Owner   string
	Term    int64
}

// TermOf is the term lease l holds.
func TermOf(l locator.Lease) Term {
	return Term{Account: l.Account, Owner: l.Owner, Term: l.Term}
}

// renewBatch is the most records one statement of a batch write names
// (the standbys' records, the accounts they leave), well under either
// database's limit of parameters.
const renewBatch = 1000

// RenewLeases extends, by ttl from the database's now, every lease of
// terms that is still in its term, in two statements at most: one process
// renews all the leases it holds at once, not one statement per account.
// The terms are one parameter (a JSON array of their owners: an owner id
// is one account's, in one term), so a statement costs the database no
// more to read for thousands of leases than for one. A live lease is
// renewed by the first, unless another transaction holds its row (a take
// of its key pair in flight: the renewal never waits behind one, and the
// lease is renewed at the next round); one that lapsed (this process's
// renewals were late) by the second, unless another process holds a live
// lease of its key pair meanwhile (under the key pairs' locks, as
// checkKeyPair). It returns the terms it renewed and those lost (moved on
// to another owner, or their key pair did): any other was skipped. Were
// the lapsed ones renewed one by one, a desk whose renewals fell behind
// would take a transaction per account to catch up, and fall further
// behind.
func (s *Store) RenewLeases(ctx context.Context, terms []Term, ttl time.Duration) (renewed, lost map[Term]bool, err error) {
	renewed, lost = make(map[Term]bool, len(terms)), map[Term]bool{}
	if len(terms) == 0 {
		return renewed, lost, nil
	}
	if err := s.renewTerms(ctx, terms, ttl, renewed, false); err != nil {
		return nil, nil, err
	}
	if rest := unrenewed(terms, renewed); len(rest) > 0 {
		if err := s.renewTerms(ctx, rest, ttl, renewed, true); err != nil {
			return nil, nil, err
		}
	}
	rest := unrenewed(terms, renewed)
	if len(rest) == 0 {
		return renewed, lost, nil
	}
	// Lost: the lease moved on, or lapsed and could not be renewed.
	accounts := make([]string, len(rest))
	for i, t := range rest {
		accounts[i] = t.Account
	}
	list, err := json.Marshal(accounts)
	if err != nil {
		return nil, nil, err
	}
	now, err := s.leaseNow(ctx, s.db.beat)
	if err != nil {
		return nil, nil, err
	}
	rows, err := s.db.beat.QueryContext(ctx, s.db.bind(`SELECT `+leaseColumns+` FROM leases WHERE `+s.db.inJSON("account")), string(list))
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	cur := map[string]*locator.Lease{}
	for rows.Next() {
		l, err := scanLease(rows)
		if err != nil {
			return nil, nil, err
		}
		cur[l.Account] = l
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	for _, t := range rest {
		if l := cur[t.Account]; l == nil || l.Owner != t.Owner || l.Term != t.Term || !l.Expires.After(now) {
			lost[t] = true
		}
	}
	return renewed, lost, nil
}

// unrenewed are the terms not in renewed.
func unrenewed(terms []Term, renewed map[Term]bool) []Term {
	var out []Term
	for _, t := range terms {
		if !renewed[t] {
			out = append(out, t)
		}
	}
	return out
}

// renewTerms is one statement of RenewLeases, in a transaction of its
// own on the heartbeat's connection: the live leases of terms, or with
// lapsed those that lapsed and whose key pair no other process holds. It
// marks those renewed in renewed.
func (s *Store) renewTerms(ctx context.Context, terms []Term, ttl time.Duration, renewed map[Term]bool, lapsed bool) error {
	wanted := make(map[Term]bool, len(terms))
	owners := make([]string, len(terms))
	for i, t := range terms {
		wanted[t], owners[i] = true, t.Owner
	}
	list, err := json.Marshal(owners)
	if err != nil {
		return err
	}
	return s.renewTx(ctx, func(ctx context.Context, tx *Tx) error {
		now, err := s.leaseNow(ctx, tx)
		if err != nil {
			return err
		}
		if s.renewRead != nil {
			s.renewRead()
		}
		// Live or lapsed as each row is locked, not at now: a renewal
		// held up past its leases' end while another process took an
		// account of their key pair would renew the others by now, and
		// two processes would own the key pair.
		clock := tx.c.leaseNowSQL()
		due := `expires > ` + clock
		if lapsed {
			if err := lockKeyPairsOf(ctx, tx, string(list)); err != nil {
				return err
			}
			due = `expires <= ` + clock + ` AND NOT EXISTS (SELECT 1 FROM leases o WHERE o.pacing_key = leases.pacing_key AND o.pacing_key != ''
				AND o.process != leases.process AND o.expires > ` + clock + `)`
		}
		// The rows are locked in the order of their accounts, as every
		// other write of several leases locks them (lockLeases), so two
		// such writes never wait on each other.
		rows, err := tx.QueryContext(ctx, `WITH due AS (SELECT account FROM leases WHERE `+due+` AND `+tx.c.inJSON("owner")+` ORDER BY account`+tx.c.forUpdate(!lapsed)+`)
			UPDATE leases SET heartbeat = ?, expires = ? FROM due WHERE leases.account = due.account RETURNING leases.account, leases.owner, leases.term`,
			string(list), formatTime(now), formatTime(now.Add(ttl)))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var t Term
			if err := rows.Scan(&t.Account, &t.Owner, &t.Term); err != nil {
				return err
			}
			if wanted[t] {
				renewed[t] = true
			}
		}
		return rows.Err()
	})
}

// AcquireLeases takes, for ttl, each account of ls that AcquireLease would
// give its l.Owner (free, lapsed, or l.Owner's already, keeping its term)
// or TakeOverLease would (held by a process whose session ended: it is
// gone, and neither its lease of the account nor those of the key pair's
// other accounts keep it), in one transaction and one write: a process
// owns all of a key pair's accounts at once, not one after another, and
// takes a dead process's key pair so too. It returns the leases taken
// and, by account, why each other was not: a *LeaseHeldError or a
// *KeyPairHeldError, as AcquireLease says. Every lease of ls is of one
// process (l.Process); the write is a compare-and-set on each term read,
// so a process that took one of them meanwhile keeps it. Only the lease
// rows of the key pairs it writes are locked (lockLeases): a take that
// refuses every account locks none. On Postgres the process holds its
// session first (see Attend).
func (s *Store) AcquireLeases(ctx context.Context, ls []locator.Lease, ttl time.Duration) ([]locator.Lease, map[string]error, error) {
	var taken []locator.Lease
	var refused map[string]error
	if len(ls) > 0 {
		if _, err := s.Attend(ctx, ls[0].Process); err != nil {
			return nil, nil, err
		}
	}
	err := s.inTx(ctx, func(ctx context.Context, tx *Tx) error {
		taken, refused = nil, map[string]error{}
		if err := lockKeyPairs(ctx, tx, pacingKeys(ls)...); err != nil {
			return err
		}
		// Read first without the rows' locks: a take that refuses every
		// account (another live process holds them: one that lost a
		// takeover's race) locks none of them. Its locks made the
		// renewals of the winner's leases skip them, round after round,
		// until owners that had just taken them on stepped down.
		write, err := s.planTakes(ctx, tx, ls, ttl, refused)
		if err != nil || len(write) == 0 {
			return err
		}
		// The rows of the key pairs to write locked (lockLeases), all is
		// read and planned again; a key pair refused at first stays
		// refused, its rows not locked.
		first := refused
		refused = map[string]error{}
		locked := pacingKeys(write)
		accounts := make([]any, len(write))
		for i, l := range write {
			accounts[i] = l.Account
		}
		if err := lockLeases(ctx, tx, locked, accounts...); err != nil {
			return err
		}
		if write, err = s.planTakes(ctx, tx, ls, ttl, refused); err != nil {
			return err
		}
		write = slices.DeleteFunc(write, func(l locator.Lease) bool {
			if first[l.Account] == nil {
				return false
			}
			refused[l.Account] = first[l.Account]
			return true
		})
		if len(write) == 0 {
			return nil
		}
		won, err := writeLeases(ctx, tx, write)
		if err != nil {
			return err
		}
		for _, l := range write {
			if won[l.Account] {
				taken = append(taken, l)
				continue
			}
			other, err := getLease(ctx, tx, l.Account)
			if err != nil {
				return err
			}
			refused[l.Account] = &LeaseHeldError{Holder: *other}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return taken, refused, nil
}

// pacingKeys are the key pairs of ls, sorted, each once ("" for none
// left out).
func pacingKeys(ls []locator.Lease) []string {
	var keys []string
	for _, l := range ls {
		if l.PacingKey != "" && !slices.Contains(keys, l.PacingKey) {
			keys = append(keys, l.PacingKey)
		}
	}
	slices.Sort(keys)
	return keys
}

// planTakes reads, in tx, the leases of ls's accounts and of every
// account on their key pairs, and the sessions of their processes, and
// returns the leases of ls to write by the rules of AcquireLease
// (leaseTakes), each refusal put in refused. The time they are written
// at is the database's as they are read, once the key pairs' locks are
// held: read before them, a take that waited seconds for a key pair's
// lock would write leases that lapse that much sooner, or have lapsed
// already (a desk starting on a loaded database lost its fresh leases
// so, and took them back).
func (s *Store) planTakes(ctx context.Context, tx *Tx, ls []locator.Lease, ttl time.Duration, refused map[string]error) ([]locator.Lease, error) {
	now, err := s.leaseNow(ctx, tx)
	if err != nil {
		return nil, err
	}
	var accounts, keyArgs []any
	for _, l := range ls {
		accounts = append(accounts, l.Account)
	}
	keys := pacingKeys(ls)
	for _, k := range keys {
		keyArgs = append(keyArgs, k)
	}
	q := `SELECT ` + leaseColumns + ` FROM leases WHERE account IN (` + marks(len(accounts)) + `)`
	if len(keys) > 0 {
		q += ` OR pacing_key IN (` + marks(len(keys)) + `)`
	}
	rows, err := tx.QueryContext(ctx, q, append(accounts, keyArgs...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cur := map[string]*locator.Lease{}
	var live []locator.Lease
	for rows.Next() {
		l, err := scanLease(rows)
		if err != nil {
			return nil, err
		}
		cur[l.Account] = l
		if l.Expires.After(now) {
			live = append(live, *l)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	gone, err := endedIn(ctx, tx, cur)
	if err != nil {
		return nil, err
	}
	live = slices.DeleteFunc(live, func(o locator.Lease) bool { return gone[o.Process] })
	return leaseTakes(ls, cur, live, now, ttl, refused), nil
}

// leaseTakes is the leases of ls to write, by the rules of AcquireLease,
// given the current leases (cur, by account; live, those that hold: live
// at now and of a process that lives): a lease of another owner among
// live refuses its account (LeaseHeldError), one of another process on
// the key pair refuses it too (KeyPairHeldError), each refusal put in
// refused.
func leaseTakes(ls []locator.Lease, cur map[string]*locator.Lease, live []locator.Lease, now time.Time, ttl time.Duration, refused map[string]error) []locator.Lease {
	var write []locator.Lease
	for _, l := range ls {
		if i := slices.IndexFunc(live, func(o locator.Lease) bool { return o.Account == l.Account && o.Owner != l.Owner }); i >= 0 {
			refused[l.Account] = &LeaseHeldError{Holder: live[i]}
			continue
		}
		if i := slices.IndexFunc(live, func(o locator.Lease) bool {
			return l.PacingKey != "" && o.PacingKey == l.PacingKey && o.Account != l.Account && o.Process != l.Process
		}); i >= 0 {
			refused[l.Account] = &KeyPairHeldError{Account: l.Account, Holder: live[i]}
			continue
		}
		l.Term, l.Since = 1, now
		if c := cur[l.Account]; c != nil {
			l.Term = c.Term + 1
			if c.Owner == l.Owner {
				l.Term, l.Since = c.Term, c.Since
			}
		}
		l.Heartbeat, l.Expires = now, now.Add(ttl)
		write = append(write, l)
	}
	return write
}

// writeLeases writes the leases in one statement, each only over the row
// it was planned from: the accounts written.
func writeLeases(ctx context.Context, tx *Tx, write []locator.Lease) (map[string]bool, error) {
	var w strings.Builder
	w.WriteString(`INSERT INTO leases (` + leaseColumns + `) VALUES `)
	var args []any
	for i, l := range write {
		if i > 0 {
			w.WriteString(`, `)
		}
		w.WriteString(`(` + marks(13) + `)`)
		args = append(args, l.Account, l.Owner, l.PID, l.Host, l.Endpoint, l.Address, l.Pin, l.PacingKey, l.Process, l.Term,
			formatTime(l.Since), formatTime(l.Heartbeat), formatTime(l.Expires))
	}
	// A new owner's term is one more than the term read, the same
	// owner's is that term: a row another process wrote meanwhile has
	// moved past either, and is left alone.
	w.WriteString(` ON CONFLICT (account) DO UPDATE SET owner = excluded.owner, pid = excluded.pid, host = excluded.host,
		endpoint = excluded.endpoint, address = excluded.address, pin = excluded.pin, pacing_key = excluded.pacing_key,
		process = excluded.process, term = excluded.term, since = excluded.since, heartbeat = excluded.heartbeat, expires = excluded.expires
		WHERE leases.term = excluded.term - 1 OR (leases.owner = excluded.owner AND leases.term = excluded.term)
		RETURNING account`)
	rows, err := tx.QueryContext(ctx, w.String(), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	won := map[string]bool{}
	for rows.Next() {
		var a string
		if err := rows.Scan(&a); err != nil {
			return nil, err
		}
		won[a] = true
	}
	return won, rows.Err()
}

// lockKeyPairsOf takes lockKeyPairs for the key pairs of the leases whose
// owners list names (a JSON array), in order.
func lockKeyPairsOf(ctx context.Context, tx *Tx, list string) error {
	if tx.c.dialect != "postgres" {
		return nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT pacing_key FROM leases WHERE `+tx.c.inJSON("owner")+` ORDER BY pacing_key`, list)
	if err != nil {
		return err
	}
	var keys []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			rows.Close()
			return err
		}
		keys = append(keys, k)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	return lockKeyPairs(ctx, tx, keys...)
}
