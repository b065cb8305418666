package answerlink

import (
	"fmt"
	"log/slog"
	"net/url"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/notify"
)

// Links makes and serves the links of one daemon. The zero of *Links,
// nil, makes none: a daemon whose config asks for no links needs no check.
type Links struct {
	key  *Key
	base *url.URL
	clk  clock.Clock
	log  *slog.Logger
}

// Open makes the links cfg asks for (nil cfg: none, and a nil *Links),
// reading the secret with secret (which may remove it from the
// environment). An unset or short secret is an error naming the variable,
// never quoting its value.
func Open(cfg *Config, secret func(string) string, clk clock.Clock, log *slog.Logger) (*Links, error) {
	if cfg == nil {
		return nil, nil
	}
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	base, _ := ParseBase(cfg.BaseURL)
	s := secret(cfg.SecretEnv)
	if s == "" {
		return nil, fmt.Errorf("links: the environment variable %s is not set (the secret the links are signed with)", cfg.SecretEnv)
	}
	key, err := NewKey(s)
	if err != nil {
		return nil, fmt.Errorf("links: %s: %w", cfg.SecretEnv, err)
	}
	if clk == nil {
		clk = clock.Real{}
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Links{key: key, base: base, clk: clk, log: log}, nil
}

// URL is l's address: the base, "/link/" and its token.
func (ls *Links) URL(l Link) string {
	u := *ls.base
	u.Path += "/link/" + ls.key.Sign(l)
	return u.String()
}

// Notifier is the hook (local.Account.NotifyOffers) that tells n of each
// offer of account acct waiting on a person, with its approve and decline
// links; nil when ls or n is nil.
func (ls *Links) Notifier(acct string, n *notify.Notifier) func(account.Question) {
	if ls == nil || n == nil {
		return nil
	}
	return func(q account.Question) {
		if ev, ok := ls.Event(acct, q); ok {
			n.Notify(ev)
		}
	}
}

// Event is the notification of q's offer with its two links, valid until
// q's deadline; false when q holds no offer or no deadline (a link valid
// for ever is never made).
func (ls *Links) Event(acct string, q account.Question) (notify.Event, bool) {
	o := q.Offer
	if o == nil || q.Deadline.IsZero() {
		return notify.Event{}, false
	}
	l := Link{Account: acct, Workflow: o.WorkflowID, Offer: o.QuoteReqID, Price: o.Price, Symbol: o.Symbol, Shares: o.Shares,
		Answer: Approve, Deadline: q.Deadline}
	approve := ls.URL(l)
	l.Answer = Decline
	return notify.Event{Kind: notify.OfferWaiting, Account: acct, Time: ls.clk.Now(),
		Detail:      fmt.Sprintf("locate offer waits: %d %s at %s a share", o.Shares, o.Symbol, o.Price.StringFixed(4)),
		WorkflowIDs: []string{o.WorkflowID},
		Offer: &notify.Offer{WorkflowID: o.WorkflowID, Symbol: o.Symbol, Shares: o.Shares, PricePerShare: o.Price.StringFixed(4),
			Total: o.Total.StringFixed(2), LocateType: string(brokercode.LocateTypeForCode(o.LocateType)), Deadline: q.Deadline, ApproveURL: approve, DeclineURL: ls.URL(l)}}, true
}
