package brokerclient

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"sync"

	"github.com/shopspring/decimal"
)

// Account is an account list row or the account detail object (spec:
// Resources, "Account (list row and detail)"). Both shapes decode into it:
// buying power arrives as buyingPower on list rows and bp on the detail, the
// option level as optLevel or optionTradingLevel, and keys the spec does not
// document are kept, undecoded, in Extra.
type Account struct {
	// Account is the identifier usable in every {accountId} path; the
	// service echoes its canonical uppercase form.
	Account string `json:"account"`
	// AccountStatus is "Active" when trading is enabled; anything else is
	// non-trading. Gate writes on IsActive.
	AccountStatus string `json:"accountStatus"`
	// AccountType is "Paper" for paper accounts; any other value is live.
	AccountType string `json:"accountType"`
	// AvailableCash is settled cash available to trade.
	AvailableCash decimal.Decimal `json:"availableCash"`
	// BuyingPower is the maximum value of new positions (buyingPower on list
	// rows, bp on the detail object; same value).
	BuyingPower decimal.Decimal `json:"buyingPower"`
	// Equity is cash plus position market value (not repriced every tick).
	Equity decimal.Decimal `json:"equity"`
	// Leverage is the maximum allowed leverage multiplier.
	Leverage decimal.Decimal `json:"leverage"`
	// MaintenanceDeficit is the shortfall against maintenance margin.
	MaintenanceDeficit decimal.Decimal `json:"maintenanceDeficit"`
	// MarginDeficit is the shortfall against initial margin.
	MarginDeficit decimal.Decimal `json:"marginDeficit"`
	// MarginRatio is the margin coverage percentage (100 = fully margined).
	MarginRatio decimal.Decimal `json:"marginRatio"`
	// OptContractsTraded counts option contracts traded today.
	OptContractsTraded int64 `json:"optContractsTraded"`
	// OptLevel is the option approval level, 0 (none) to 4 (optLevel or
	// optionTradingLevel on the wire).
	OptLevel int `json:"optLevel"`
	// OptionCashTotalBalance is the cash balance attributable to options.
	OptionCashTotalBalance decimal.Decimal `json:"optionCashTotalBalance"`
	// OvernightBp is the buying power for overnight positions.
	OvernightBp decimal.Decimal `json:"overnightBp"`
	// Realized is today's realized P&L (session-open value on the detail).
	Realized decimal.Decimal `json:"realized"`
	// SharesTraded counts equity shares traded today.
	SharesTraded int64 `json:"sharesTraded"`
	// SodEquity is the start-of-day equity.
	SodEquity decimal.Decimal `json:"sodEquity"`
	// TotalCommissions is commissions paid today.
	TotalCommissions decimal.Decimal `json:"totalCommissions"`
	// TotalLocateCosts is locate fees paid today (always 0 on paper).
	TotalLocateCosts decimal.Decimal `json:"totalLocateCosts"`
	// UsedLeverage is the leverage deployed (0.03 = 3% of allowed).
	UsedLeverage decimal.Decimal `json:"usedLeverage"`

	// AvailableCashEMS is detail-only (0 when not applicable; nil on list rows).
	AvailableCashEMS *decimal.Decimal `json:"availableCashEMS,omitempty"`
	// IsFutureAccount is detail-only (false for equity API accounts; nil on list rows).
	IsFutureAccount *bool `json:"isFutureAccount,omitempty"`
	// MarginRequirement is detail-only; prefer BuyingPower, MarginDeficit and
	// MaintenanceDeficit for gates.
	MarginRequirement *decimal.Decimal `json:"marginRequirement,omitempty"`

	// Extra holds the keys the spec does not document (live detail objects
	// carry, for example, marginType, fractional, unrealized), as received.
	// They are opaque: kept so nothing is lost, never interpreted.
	Extra map[string]json.RawMessage `json:"-"`
}

// IsPaper reports whether the account is a paper account (accountType
// "Paper"); the environment is decided from this field, never from the id.
func (a *Account) IsPaper() bool { return a.AccountType == "Paper" }

// IsActive reports whether trading is enabled (accountStatus "Active").
func (a *Account) IsActive() bool { return a.AccountStatus == "Active" }

// accountWire has no methods, so it decodes with the default rules; the
// alternative spellings sit beside it.
type accountWire Account

// accountAliases are the second names of two Account fields.
type accountAliases struct {
	BP                 *decimal.Decimal `json:"bp"`
	OptionTradingLevel *int             `json:"optionTradingLevel"`
}

// UnmarshalJSON decodes a list row or a detail object, accepting both
// spellings of buying power and of the option level, and keeps every
// undocumented key in Extra.
func (a *Account) UnmarshalJSON(b []byte) error {
	var w accountWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	var al accountAliases
	if err := json.Unmarshal(b, &al); err != nil {
		return err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	// The list spelling wins when both are present; the spec says they
	// carry the same value.
	if _, ok := lookupFold(raw, "buyingPower"); !ok && al.BP != nil {
		w.BuyingPower = *al.BP
	}
	if _, ok := lookupFold(raw, "optLevel"); !ok && al.OptionTradingLevel != nil {
		w.OptLevel = *al.OptionTradingLevel
	}
	w.Extra = extraKeys(raw, reflect.TypeFor[accountWire](), "bp", "optionTradingLevel")
	*a = Account(w)
	return nil
}

// MarshalJSON writes the documented fields under their list spellings
// (buyingPower, optLevel) followed by the Extra keys, so an Account stored as
// JSON loses nothing.
func (a Account) MarshalJSON() ([]byte, error) {
	return marshalWithExtra(accountWire(a), a.Extra)
}

// PnL is the profit and loss response (spec: Resources, "Profit and loss
// response"): account aggregates repriced on every call, plus one row per lot.
type PnL struct {
	PnLTotals
	// Lots are the per-lot rows; a lot closed today stays with exposure 0.
	Lots []PnLRow `json:"pnl"`
}

// PnLTotals are the account-level figures of the P&L response, which the
// P&L stream's snapshot carries under the same names.
type PnLTotals struct {
	// AccountValue is the current equity, repriced on every call.
	AccountValue decimal.Decimal `json:"accountValue"`
	// AllowedLeverage is the maximum leverage multiplier.
	AllowedLeverage decimal.Decimal `json:"allowedLeverage"`
	// AvailableCash is settled cash available.
	AvailableCash decimal.Decimal `json:"availableCash"`
	// DayPnl is DayRealized + DayUnrealized.
	DayPnl decimal.Decimal `json:"dayPnl"`
	// DayRealized is P&L locked in today (the sum of the rows' DayRealizedPnl).
	DayRealized decimal.Decimal `json:"dayRealized"`
	// DayUnrealized is today's floating P&L (the sum of the rows' DayUnrealizedPnL).
	DayUnrealized decimal.Decimal `json:"dayUnrealized"`
	// EquityRatio is 1 for unlevered accounts, lower as margin is used.
	EquityRatio decimal.Decimal `json:"equityRatio"`
	// Exposure is the notional of open equity positions (options excluded).
	Exposure decimal.Decimal `json:"exposure"`
	// OptionCashUsed is the cash tied in open options.
	OptionCashUsed decimal.Decimal `json:"optionCashUsed"`
	// SharesTraded counts shares traded today.
	SharesTraded int64 `json:"sharesTraded"`
	// TotalUnrealized is lifetime unrealized P&L over open positions.
	TotalUnrealized decimal.Decimal `json:"totalUnrealized"`
	// UsedLeverage is the leverage in use.
	UsedLeverage decimal.Decimal `json:"usedLeverage"`
}

// PnLRow is one lot of the pnl[] array. Key spellings are exact (spec: P&L
// rule 1). Rows carry no quantity and no side: join to open positions on
// PositionID.
type PnLRow struct {
	// PositionID is the stable lot id.
	PositionID ID `json:"positionId"`
	// Symbol is the ticker, or the OCC symbol for options.
	Symbol string `json:"symbol"`
	// PnLCalc holds the lot's figures, flat on the wire as in the spec.
	PnLCalc
}

// PnLCalc is a lot's P&L figures: the REST row carries them flat, the P&L
// stream nests them under `pnlCalc` (key spellings as the spec's).
type PnLCalc struct {
	// Exposure is the lot notional (negative for short options); 0 means
	// the lot is closed.
	Exposure decimal.Decimal `json:"exposure"`
	// DayRealizedPnl is realized today.
	DayRealizedPnl decimal.Decimal `json:"dayRealizedPnl"`
	// DayUnrealizedPnL is today's floating change; 0 once closed.
	DayUnrealizedPnL decimal.Decimal `json:"dayUnrealizedPnL"`
	// DayPctPnLMove is the lot's percentage change today.
	DayPctPnLMove decimal.Decimal `json:"dayPctPnLMove"`
	// RealizedPnl is lifetime realized.
	RealizedPnl decimal.Decimal `json:"realizedPnl"`
	// UnrealizedPnL is lifetime floating; 0 once closed.
	UnrealizedPnL decimal.Decimal `json:"unrealizedPnL"`
	// PctPnLMove is the lifetime percentage move.
	PctPnLMove decimal.Decimal `json:"pctPnLMove"`
}

// Closed reports whether the lot is closed: exposure 0 (spec: P&L rule 3).
func (r PnLRow) Closed() bool { return r.Exposure.IsZero() }

// OpenPosition finds the open position behind the lot, which carries no
// side or shares: by positionId, then tradedSymbol, then symbol (spec
// "Profit and loss response" rule 5). A symbol match is used only when it
// is unambiguous.
func (r PnLRow) OpenPosition(open []Position) (Position, bool) {
	for _, p := range open {
		if r.PositionID != "" && p.PositionID == r.PositionID {
			return p, true
		}
	}
	for _, key := range []func(Position) string{
		func(p Position) string { return p.TradedSymbol },
		func(p Position) string { return p.Symbol },
	} {
		var found []Position
		for _, p := range open {
			if key(p) == r.Symbol {
				found = append(found, p)
			}
		}
		if len(found) == 1 {
			return found[0], true
		}
	}
	return Position{}, false
}

// List returns the accounts the credentials own. It doubles as a
// credential check: invalid keys answer 404 (ErrNotFound).
//
// Spec: GET /v1/api/accounts.
func (s *AccountsService) List(ctx context.Context) ([]Account, *Response, error) {
	var out []Account
	resp, err := s.client.do(ctx, call{
		method: "GET", path: "/v1/api/accounts",
		route: routeAccountsList, op: "list accounts",
	}, &listOf[Account]{out: &out, key: "accounts"})
	if err != nil {
		return nil, resp, err
	}
	return out, resp, nil
}

// Get returns one account's detail object (with bp and the detail-only
// fields).
//
// Spec: GET /v1/api/account/{accountId}.
func (s *AccountsService) Get(ctx context.Context, accountID string) (*Account, *Response, error) {
	seg, err := accountSegment(accountID)
	if err != nil {
		return nil, nil, err
	}
	var out Account
	resp, err := s.client.do(ctx, call{
		method: "GET", path: "/v1/api/account/" + seg,
		route: routeAccountDetail, op: "get account",
	}, &out)
	if err != nil {
		return nil, resp, err
	}
	return &out, resp, nil
}

// PnL returns the account's profit and loss, the live source of today's
// counters.
//
// Spec: GET /v1/api/accounts/{accountId}/pnl.
func (s *AccountsService) PnL(ctx context.Context, accountID string) (*PnL, *Response, error) {
	seg, err := accountSegment(accountID)
	if err != nil {
		return nil, nil, err
	}
	var out PnL
	resp, err := s.client.do(ctx, call{
		method: "GET", path: "/v1/api/accounts/" + seg + "/pnl",
		route: routePnL, op: "get pnl",
	}, &listOf[PnLRow]{out: &out.Lots, key: "pnl", rest: &out.PnLTotals})
	if err != nil {
		return nil, resp, err
	}
	return &out, resp, nil
}

// accountSegment checks an account id before it goes into a path and
// returns it escaped. Ids are case-insensitive in paths, so case is kept;
// an empty id would make a malformed URL (the router's 404).
func accountSegment(accountID string) (string, error) {
	if err := validateAccount("accountId", accountID); err != nil {
		return "", err
	}
	return pathEscape(accountID), nil
}

// lookupFold finds key in m the way encoding/json matches struct fields:
// exactly first, then case-insensitively.
func lookupFold(m map[string]json.RawMessage, key string) (json.RawMessage, bool) {
	if v, ok := m[key]; ok {
		return v, true
	}
	for k, v := range m {
		if strings.EqualFold(k, key) {
			return v, true
		}
	}
	return nil, false
}

// knownKeysCache maps a struct type to the lower-cased JSON names of its
// fields.
var knownKeysCache sync.Map

// jsonFieldNames lists the lower-cased JSON names of t's exported fields.
func jsonFieldNames(t reflect.Type) map[string]bool {
	if v, ok := knownKeysCache.Load(t); ok {
		return v.(map[string]bool)
	}
	names := map[string]bool{}
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		names[strings.ToLower(name)] = true
	}
	knownKeysCache.Store(t, names)
	return names
}

// extraKeys returns the members of raw that no field of t (nor one of the
// aliases) decodes, or nil when there are none. Matching is
// case-insensitive, as encoding/json's is.
func extraKeys(raw map[string]json.RawMessage, t reflect.Type, aliases ...string) map[string]json.RawMessage {
	known := jsonFieldNames(t)
	var extra map[string]json.RawMessage
	for k, v := range raw {
		lk := strings.ToLower(k)
		if known[lk] || containsFold(aliases, k) {
			continue
		}
		if extra == nil {
			extra = map[string]json.RawMessage{}
		}
		extra[k] = append(json.RawMessage(nil), v...)
	}
	return extra
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

// marshalWithExtra encodes v (a struct without a MarshalJSON of its own)
// and appends the extra keys that v does not already carry.
func marshalWithExtra(v any, extra map[string]json.RawMessage) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil || len(extra) == 0 {
		return b, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for k, val := range extra {
		if _, ok := lookupFold(m, k); !ok {
			m[k] = val
		}
	}
	return json.Marshal(m)
}

// getList is one GET of a list (cl names its path, route and op) whose
// envelope the spec does not show: bare, or in an object under key or as
// its one array (listOf, loose). The one way the client reads such a list.
func getList[T any](ctx context.Context, c *Client, cl call, key string) ([]T, *Response, error) {
	cl.method = "GET"
	var out []T
	resp, err := c.do(ctx, cl, &listOf[T]{out: &out, key: key, loose: true})
	if err != nil {
		return nil, resp, err
	}
	return out, resp, nil
}
