package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// NoticeOffer records that a person is being told of the offer of
// workflowID whose leg is quoteReqID, and reports whether this is the first
// time: the notification is raised once per offer, not again by an owner
// that resumes the workflow after a restart or a handover.
func (s *Store) NoticeOffer(ctx context.Context, account, workflowID, quoteReqID string) (first bool, err error) {
	err = s.inTx(ctx, func(ctx context.Context, tx *Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO offer_links (account, workflow_id, quote_req_id, noticed_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (account, workflow_id, quote_req_id) DO UPDATE SET noticed_at = excluded.noticed_at WHERE offer_links.noticed_at = ''`,
			account, workflowID, quoteReqID, formatTime(tx.now))
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		first = n == 1
		return err
	})
	return first, err
}

// LinkUse is the one use of an offer's answer links: when, and the answer
// it gave (approve or decline).
type LinkUse struct {
	At     time.Time
	Answer string
}

// UseOfferLink records the use of a link of the offer of workflowID whose
// leg is quoteReqID, answering answer, and reports whether it is the first:
// when it is not, the use recorded before is returned and nothing is
// written. It commits before the answer is given (write-ahead), so an
// offer's links answer once between them, even across a restart.
func (s *Store) UseOfferLink(ctx context.Context, account, workflowID, quoteReqID, answer string) (prev LinkUse, first bool, err error) {
	err = s.inTx(ctx, func(ctx context.Context, tx *Tx) error {
		var at string
		err := tx.QueryRowContext(ctx, `SELECT used_at, used_answer FROM offer_links WHERE account = ? AND workflow_id = ? AND quote_req_id = ?`,
			account, workflowID, quoteReqID).Scan(&at, &prev.Answer)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		case at != "":
			prev.At, err = parseTime(at)
			return err
		}
		first = true
		_, err = tx.ExecContext(ctx, `INSERT INTO offer_links (account, workflow_id, quote_req_id, used_at, used_answer) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (account, workflow_id, quote_req_id) DO UPDATE SET used_at = excluded.used_at, used_answer = excluded.used_answer`,
			account, workflowID, quoteReqID, formatTime(tx.now), answer)
		return err
	})
	return prev, first, err
}
