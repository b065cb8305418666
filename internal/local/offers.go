package local

import (
	"context"
	"fmt"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/market"
	"github.com/locatorhq/locator/workflow"
)

// NotifyOffers has fn told of each offer that starts waiting on a person
// (a question with an Offer, its Deadline the last moment an answer is
// acted on), once per offer: an offer noticed before, by this owner or an
// earlier one of the same database (a restart, a handover), is not told
// again. fn must return quickly (queue a notification, say); nil stops it.
func (l *Account) NotifyOffers(fn func(account.Question)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.offers = fn
}

// noticeOffer tells the NotifyOffers hook of q's offer the first time it
// waits on a person.
func (l *Account) noticeOffer(ctx context.Context, q account.Question) {
	l.mu.Lock()
	fn := l.offers
	l.mu.Unlock()
	if fn == nil || q.Offer == nil {
		return
	}
	first, err := l.st.NoticeOffer(ctx, l.account, q.Offer.WorkflowID, q.Offer.QuoteReqID)
	switch {
	case err != nil:
		// Not noticed, not told: a notification that might come twice is
		// worse than one a person misses beside the prompt and the page.
		l.log.Warn("offer notification not raised: its record could not be written", "id", q.Offer.WorkflowID, "err", err)
	case first:
		fn(q)
	}
}

// useLink records the use of the signed links of the offer req answers,
// when the answer came by one, before anything is answered (write-ahead):
// the offer's links answer once between them, so a link used before is
// refused (KindUsed), even when that answer never went through or came
// after the offer was answered another way.
func (l *Account) useLink(ctx context.Context, w *workflow.Workflow, req account.AnswerRequest) error {
	if !req.ByLink {
		return nil
	}
	if req.Offer == "" {
		return account.Errorf(account.KindInput, "an answer by link names the offer it answers; nothing was sent")
	}
	answer := "decline"
	if req.Accept {
		answer = "approve"
	}
	prev, first, err := l.st.UseOfferLink(ctx, l.account, w.ID, req.Offer, answer)
	if err != nil {
		return kinded(err)
	}
	if !first {
		return account.Errorf(account.KindUsed, fmt.Sprintf("this offer's answer link was used at %s (to %s): a link answers once; nothing was sent",
			market.DateTime(prev.At), prev.Answer))
	}
	return nil
}
