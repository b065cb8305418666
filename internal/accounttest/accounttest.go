// Package accounttest is the conformance suite of the account API: one
// set of cases, written once against account.Account, that every
// implementation must pass with the same results, updates and exit codes
// (the pattern of river's riverdrivertest). service runs it against the
// owner's in-process implementation and against a follower through the
// transport; a behaviour that differs between them fails here.
//
// Every case talks to the simulator over real HTTP on a fake clock (the
// simtest bundle of its Env) and judges what was sent from the
// simulator's request log.
package accounttest

import (
	"slices"
	"testing"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/simtest"
)

// Env is one case's world: the simulator, the owner's store, and the
// account (LV100001, live) as a caller sees it through the implementation
// under test.
type Env struct {
	Sim   *simtest.Bundle
	Store *store.Store
	// Open returns the account as caller c sees it.
	Open func(c account.Caller) account.Account
	// Reader, when set, is what the read cases read through (RunReads: the
	// same reads without an owner, local.Alone), the records they read
	// made through Open; without it they read through Open's account.
	Reader func() account.Reader
}

// reader is what a read case reads through: e.Reader's, else a itself.
func (e *Env) reader(a account.Account) account.Reader {
	if e.Reader != nil {
		return e.Reader()
	}
	return a
}

// Setup makes a fresh Env for one case.
type Setup func(t *testing.T) *Env

// Run runs every case against the implementation setup makes.
func Run(t *testing.T, setup Setup) {
	run(t, setup, append(slices.Clone(cases), readCases...))
}

// RunReads runs the read cases (account.Reader's: Read, Records, Audit,
// Plan, Size, Watch) against the reader setup's Env.Reader makes.
func RunReads(t *testing.T, setup Setup) { run(t, setup, readCases) }

func run(t *testing.T, setup Setup, cs []testCase) {
	for _, c := range cs {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, setup(t))
		})
	}
}

// testCase is one case of the suite.
type testCase struct {
	name string
	run  func(t *testing.T, e *Env)
}

var cases = []testCase{
	{"LocateFilled", locateFilled},
	{"EnvGuardSendsNothing", envGuard},
	{"InputRefusedSendsNothing", inputRefused},
	{"PromptNo", promptNo},
	{"DeclineByAPerson", declineByAPerson},
	{"ApproveElsewhereWithdrawsQuestion", approveElsewhere},
	{"ChangedOfferRefused", changedOffer},
	{"WaitingOfferSeenElsewhere", waitingOfferSeenElsewhere},
	{"AnswerByLinkOnce", answerByLink},
	{"LinkAfterAnswerElsewhere", linkAfterElsewhere},
	{"PolicyDecline", policyDecline},
	{"CancelByAPerson", cancelByAPerson},
	{"InterruptWithdraws", interrupt},
	{"NotOpen", notOpen},
	{"Batch", batch},
	{"SameIDNotStartedTwice", sameID},
	{"CreditBack", creditBack},
	{"CreditBackUnused", creditBackUnused},
	{"CreditBackKeepsWorkingSellsLocates", creditBackKeepsWorkingSells},
	{"CreditBackSingleUseAgain", creditBackSingleUseAgain},
	{"ShortConfirmed", shortConfirmed},
	{"ShortDeclinedAtConfirmation", shortDeclined},
	{"RunJob", runJob},
	{"StatusAndSubscribe", statusAndSubscribe},
	{"FollowByPrefix", followByPrefix},
	{"QuotePricesAndCancels", quotePrices},
	{"QuoteRefusedSendsNothing", quoteRefused},
	{"StatusShortable", statusShortable},
	{"FeesReconciled", feesReconciled},
	{"TodayPositionsOrdersLocates", today},
	{"ReportOfTheDay", reportOfTheDay},
	{"FeesStoredSendsNothing", feesStored},
}

// readCases are the cases of account.Reader, run against every reader.
var readCases = []testCase{
	{"ReadAsTheBrokerSays", readAsTheBrokerSays},
	{"RecordsAsTheOwnerRecorded", recordsAsRecorded},
	{"AuditPlanSizeOfAShort", auditPlanSize},
	{"WatchPnLStream", watchPnL},
	{"WatchPortfolioStreamOrders", watchOrders},
	{"WatchUnknownStreamRefused", watchUnknownStream},
}
