package brokersim

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

//go:embed scenario_default.json
var defaultScenarioJSON []byte

// Scenario is the simulated world: who holds which keys and accounts, which
// symbols are easy to borrow, restricted or on the Reg SHO list, the locate
// pools and their prices, market prices, and the timings of the asynchronous
// workflows. It is plain JSON so a test or a user can write their own.
type Scenario struct {
	// KeyHeaderPrefix is the prefix of the two key headers; default "TZ".
	KeyHeaderPrefix string `json:"keyHeaderPrefix,omitempty"`
	// Seed makes the settle delays and fault draws repeatable.
	Seed uint64 `json:"seed"`
	// Keys are the API key pairs and the accounts each owns.
	Keys []ScenarioKey `json:"keys"`
	// Accounts are the accounts, by id.
	Accounts []ScenarioAccount `json:"accounts"`
	// EasyToBorrow is the platform-wide easy-to-borrow list (exact, case-sensitive).
	EasyToBorrow []string `json:"easyToBorrow"`
	// Restricted symbols reject locates with R06 and limit orders outside the price band.
	Restricted []string `json:"restricted"`
	// RegSHO is the threshold list: one quote yields an id (PreBorrow) and id.SU (SingleUse) row.
	RegSHO []string `json:"regSHO"`
	// Pools hold the locatable shares per symbol and locate type.
	Pools []ScenarioPool `json:"pools"`
	// Prices are last prices per symbol; orders fill only on symbols with a price.
	Prices map[string]Decimal `json:"prices"`
	// Routes lists the route names per environment ("live", "paper").
	Routes map[string][]string `json:"routes"`
	// FloatPrices makes the broker write a quote's locatePrice as a float
	// it computed, not the pool's exact decimal: the shortest text of the
	// float64, one ulp off on about half the quotes (0.013 as
	// 0.013000000000000001). The fee charged is still the exact price times
	// the shares, rounded to the cent.
	FloatPrices bool `json:"floatPrices,omitempty"`
	// ShortsWithoutLocate has the venue fill a short sale that finds fewer
	// located shares free than it executes (tying those it finds) instead
	// of rejecting it ("no locate available"): the spec does not say the
	// broker checks at execution, and a firm's audit must catch a short
	// that filled after its located shares were credited back.
	ShortsWithoutLocate bool `json:"shortsWithoutLocate,omitempty"`
	// Timing holds the durations of the asynchronous workflows.
	Timing ScenarioTiming `json:"timing"`
	// CreditBackRefund is the fraction of the original fee paid back as a
	// `Locate Fees` deposit when a credit-back clears (0 disables credits).
	CreditBackRefund Decimal `json:"creditBackRefund"`
	// FeeMultiplier scales the fee charged in the ledger against price×shares;
	// 1 is the honest broker, other values let tests provoke a wrong fee.
	FeeMultiplier Decimal `json:"feeMultiplier"`
	// CommissionPerShare is charged on every fill.
	CommissionPerShare Decimal `json:"commissionPerShare"`
	// RateLimits turns the per-route token buckets on; benchmarks lift them.
	RateLimits bool `json:"rateLimits"`
	// DefaultRate is the bucket for routes whose rate the spec does not publish
	// (account list, account detail, cash ledger, positions-free reads).
	DefaultRate ScenarioRate `json:"defaultRate"`
	// RestrictedBand is the fraction around the last price outside which a
	// limit order on a restricted symbol is rejected with R06.
	RestrictedBand Decimal `json:"restrictedBand"`
	// Ledger seeds cash-ledger rows (history before the session).
	Ledger []ScenarioCashRow `json:"ledger"`
	// SyntheticLedger generates many dated rows on an account, for paging tests.
	SyntheticLedger []ScenarioSyntheticLedger `json:"syntheticLedger"`
	// Positions seeds open lots carried from earlier sessions.
	Positions []ScenarioPosition `json:"positions"`
	// ClosedPositions seeds closed-position lifecycle rows.
	ClosedPositions []ScenarioClosedPosition `json:"closedPositions"`
	// Partner is the direct partner OAuth program; nil serves no login page
	// and no token endpoint.
	Partner *ScenarioPartner `json:"partner,omitempty"`
	// Users sign in on the partner login page.
	Users []ScenarioUser `json:"users,omitempty"`
}

// ScenarioKey is one API key pair.
type ScenarioKey struct {
	KeyID    string   `json:"keyId"`
	Secret   string   `json:"secret"`
	Env      string   `json:"env"` // "live" or "paper"
	Accounts []string `json:"accounts"`
}

// ScenarioAccount is one account's starting state.
type ScenarioAccount struct {
	ID        string  `json:"id"`
	Type      string  `json:"type"`   // Paper, Margin, Cash, Live
	Status    string  `json:"status"` // Active or anything else
	Cash      Decimal `json:"cash"`
	SODEquity Decimal `json:"sodEquity"`
	Leverage  Decimal `json:"leverage"`
	OptLevel  int     `json:"optLevel"`
	// Routes overrides the environment's route list for this account.
	Routes []string `json:"routes,omitempty"`
}

// ScenarioPool is the locatable inventory of one symbol and locate type
// (1 or 2 for Locate, 3 PreBorrow, 4 SingleUse) at a price per share.
type ScenarioPool struct {
	Symbol     string  `json:"symbol"`
	LocateType int     `json:"locateType"`
	Shares     int64   `json:"shares"`
	Price      Decimal `json:"price"`
}

// ScenarioTiming holds the workflow timings, as Go duration strings in JSON.
type ScenarioTiming struct {
	SettleMin    Duration `json:"settleMin"`    // quote → settled, lower bound
	SettleMax    Duration `json:"settleMax"`    // quote → settled, upper bound
	OfferWindow  Duration `json:"offerWindow"`  // 65 → 67 without accept; 54 → 67
	QuoteSpacing Duration `json:"quoteSpacing"` // same-symbol quote spacing per account
	FeeDelay     Duration `json:"feeDelay"`     // fill → Locate Fees ledger row
	CreditClear  Duration `json:"creditClear"`  // sell (48) → credit cleared
	OrderAsync   Duration `json:"orderAsync"`   // PendingNew → async outcome
}

// ScenarioRate is a token bucket: sustained rate per second and burst.
type ScenarioRate struct {
	PerSecond float64 `json:"perSecond"`
	Burst     int     `json:"burst"`
}

// ScenarioCashRow is a seeded cash-ledger row.
type ScenarioCashRow struct {
	Account  string  `json:"account"`
	Date     string  `json:"date"` // YYYY-MM-DD
	CashType string  `json:"cashType"`
	Deposit  Decimal `json:"deposit"`
	Withdraw Decimal `json:"withdraw"`
	Note     string  `json:"note"`
}

// ScenarioSyntheticLedger generates PerDay rows per day for Days days ending
// the day before the session starts.
type ScenarioSyntheticLedger struct {
	Account string `json:"account"`
	Days    int    `json:"days"`
	PerDay  int    `json:"perDay"`
}

// ScenarioPosition is an open lot carried from an earlier session.
type ScenarioPosition struct {
	Account    string  `json:"account"`
	Symbol     string  `json:"symbol"`
	Shares     int64   `json:"shares"` // negative for a short
	PriceAvg   Decimal `json:"priceAvg"`
	PriorClose Decimal `json:"priorClose"`
	OpenedDate string  `json:"openedDate"` // YYYY-MM-DD
}

// ScenarioClosedPosition is a closed-position lifecycle row.
type ScenarioClosedPosition struct {
	Account    string  `json:"account"`
	PositionID string  `json:"positionId"` // decimal digits; may exceed 2^53
	Symbol     string  `json:"symbol"`
	SharesIn   int64   `json:"sharesIn"`
	SharesOut  int64   `json:"sharesOut"`
	PriceOpen  Decimal `json:"priceOpen"`
	PriceClose Decimal `json:"priceClose"`
	Realized   Decimal `json:"realized"`
	OpenedDate string  `json:"openedDate"`
	ClosedDate string  `json:"closedDate"`
}

// Duration is a time.Duration written as a Go duration string in JSON.
type Duration time.Duration

// UnmarshalJSON accepts "1.5s" style strings.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration must be a string like \"1.5s\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// DefaultScenario returns the embedded scenario documented in
// docs/simulator.md ("The default scenario").
func DefaultScenario() Scenario {
	sc, err := ParseScenario(defaultScenarioJSON)
	if err != nil {
		panic("brokersim: embedded default scenario is invalid: " + err.Error())
	}
	return sc
}

// LoadScenario reads a scenario file.
func LoadScenario(path string) (Scenario, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Scenario{}, err
	}
	sc, err := ParseScenario(b)
	if err != nil {
		return Scenario{}, fmt.Errorf("scenario %s: %w", path, err)
	}
	return sc, nil
}

// ParseScenario decodes a scenario, rejecting unknown keys, and validates it.
func ParseScenario(b []byte) (Scenario, error) {
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	var sc Scenario
	if err := dec.Decode(&sc); err != nil {
		return Scenario{}, err
	}
	return sc, sc.Validate()
}

// Validate reports the first inconsistency in the scenario.
func (sc *Scenario) Validate() error {
	if sc.KeyHeaderPrefix == "" {
		sc.KeyHeaderPrefix = "TZ"
	}
	accounts := map[string]bool{}
	for _, a := range sc.Accounts {
		if a.ID == "" || a.ID != strings.ToUpper(a.ID) {
			return fmt.Errorf("account id %q must be non-empty uppercase", a.ID)
		}
		if accounts[a.ID] {
			return fmt.Errorf("account %s listed twice", a.ID)
		}
		accounts[a.ID] = true
	}
	owned := map[string]string{}
	for _, k := range sc.Keys {
		if k.KeyID == "" || k.Secret == "" {
			return fmt.Errorf("key pair needs keyId and secret")
		}
		if k.Env != "live" && k.Env != "paper" {
			return fmt.Errorf("key %s: env must be live or paper, not %q", k.KeyID, k.Env)
		}
		for _, id := range k.Accounts {
			if !accounts[id] {
				return fmt.Errorf("key %s owns unknown account %s", k.KeyID, id)
			}
			if other, ok := owned[id]; ok {
				return fmt.Errorf("account %s owned by both %s and %s", id, other, k.KeyID)
			}
			owned[id] = k.KeyID
			paper := sc.account(id).Type == "Paper"
			if paper != (k.Env == "paper") {
				return fmt.Errorf("key %s (%s) owns account %s of type %s", k.KeyID, k.Env, id, sc.account(id).Type)
			}
		}
	}
	for _, p := range sc.Pools {
		if p.LocateType < 1 || p.LocateType > 4 {
			return fmt.Errorf("pool %s: locateType must be 1..4", p.Symbol)
		}
		reg := slices.Contains(sc.RegSHO, p.Symbol)
		if reg != (p.LocateType >= 3) {
			return fmt.Errorf("pool %s type %d: types 3 and 4 are for Reg SHO symbols only, 1 and 2 for the others", p.Symbol, p.LocateType)
		}
		if p.Shares < 0 || !p.Price.IsPositive() {
			return fmt.Errorf("pool %s type %d: shares must be >= 0 and price > 0", p.Symbol, p.LocateType)
		}
	}
	t := &sc.Timing
	def := func(d *Duration, v time.Duration) {
		if *d <= 0 {
			*d = Duration(v)
		}
	}
	def(&t.SettleMin, 1500*time.Millisecond)
	def(&t.SettleMax, 3*time.Second)
	def(&t.OfferWindow, 30*time.Second)
	def(&t.QuoteSpacing, 30*time.Second)
	def(&t.FeeDelay, 5*time.Second)
	def(&t.CreditClear, 10*time.Second)
	def(&t.OrderAsync, 50*time.Millisecond)
	if t.SettleMax < t.SettleMin {
		return fmt.Errorf("timing: settleMax below settleMin")
	}
	if sc.DefaultRate.PerSecond <= 0 {
		sc.DefaultRate = ScenarioRate{PerSecond: 2, Burst: 2}
	}
	if sc.FeeMultiplier.IsZero() {
		sc.FeeMultiplier = Dec(decimal.NewFromInt(1))
	}
	if sc.RestrictedBand.IsZero() {
		sc.RestrictedBand = Dec(decimal.RequireFromString("0.05"))
	}
	return sc.validatePartner()
}

func (sc *Scenario) account(id string) ScenarioAccount {
	for _, a := range sc.Accounts {
		if a.ID == id {
			return a
		}
	}
	return ScenarioAccount{}
}
