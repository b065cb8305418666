package brokersim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// RequestRecord is one request the broker routes received, as served by
// GET /_sim/requests. Status is the HTTP status answered (0 when the
// connection was reset by fault injection). Auth says which credentials came:
// "keys" (the key headers), "bearer" (a partner token) or "" (none).
type RequestRecord struct {
	Time   time.Time `json:"time"`
	KeyID  string    `json:"keyId"`
	Auth   string    `json:"auth,omitempty"`
	Method string    `json:"method"`
	Path   string    `json:"path"`
	Query  string    `json:"query"`
	Body   string    `json:"body"`
	Status int       `json:"status"`
	// UserAgent tells one process's requests from another's (locator's
	// CLI names its pid there).
	UserAgent string `json:"userAgent,omitempty"`
}

type requestLog struct{ entries []RequestRecord }

// logRequest appends the request to the log and returns its index.
func (s *Sim) logRequest(r *http.Request, body []byte) int {
	rec := s.requestRecord(r, body)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logLocked(rec, s.clockNow())
}

// requestRecord is the log's record of a request, but its time. Secrets are
// never logged: only the public key id, and of the partner login and token
// bodies only the form with its secrets redacted.
func (s *Sim) requestRecord(r *http.Request, body []byte) RequestRecord {
	keyID := r.Header.Get(s.sc.KeyHeaderPrefix + "-API-KEY-ID")
	auth := ""
	if _, ok := bearerToken(r); ok {
		auth = "bearer"
	}
	if keyID != "" || r.Header.Get(s.sc.KeyHeaderPrefix+"-API-SECRET-KEY") != "" {
		auth = "keys"
	}
	text := string(body)
	if p := s.sc.Partner; p != nil && (r.URL.Path == TokenPath || r.URL.Path == p.LoginPath) && len(body) > 0 {
		text = redactedForm(r, body)
	}
	return RequestRecord{
		KeyID:     keyID,
		Auth:      auth,
		Method:    r.Method,
		Path:      r.URL.Path,
		Query:     r.URL.RawQuery,
		Body:      text,
		UserAgent: r.UserAgent(),
	}
}

// logLocked appends rec, arrived at at, to the log and returns its index.
func (s *Sim) logLocked(rec RequestRecord, at time.Time) int {
	rec.Time = at
	s.log.entries = append(s.log.entries, rec)
	return len(s.log.entries) - 1
}

func (s *Sim) setStatus(i, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i < len(s.log.entries) {
		s.log.entries[i].Status = status
	}
}

// Requests returns a copy of the request log, oldest first.
func (s *Sim) Requests() []RequestRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]RequestRecord(nil), s.log.entries...)
}

// Advance moves the simulator's clock forward by d: a clock that can jump
// (fake, scaled) is moved, so code sharing it moves too; otherwise the
// simulator keeps an offset of its own.
func (s *Sim) Advance(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := s.clk.(interface{ Advance(time.Duration) }); ok {
		a.Advance(d)
	} else {
		s.offset += d
	}
	s.advanceLocked()
}

// SetPrice sets a symbol's last price and lets working orders and P&L
// stream subscribers react.
func (s *Sim) SetPrice(symbol string, price decimal.Decimal) {
	s.SetPrices([]Tick{{Symbol: symbol, Price: Dec(price)}})
}

// SetPrices applies ticks in order; their P&L stream messages may
// interleave (spec: P&L stream rule 1).
func (s *Sim) SetPrices(ticks []Tick) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked()
	s.applyTicks(ticks)
}

// SetFaults replaces the fault configuration.
func (s *Sim) SetFaults(f Faults) error {
	if err := f.validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.cfg = f
	return nil
}

// Reset rebuilds the world from the scenario and clears the request log and
// faults; the clock keeps running.
func (s *Sim) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = faultState{}
	s.dropStreamsLocked()
	s.resetLocked()
}

// Settings are the scenario values that can change at run time.
type Settings struct {
	FeeDelay         *Duration `json:"feeDelay,omitempty"`
	CreditClear      *Duration `json:"creditClear,omitempty"`
	FeeMultiplier    *Decimal  `json:"feeMultiplier,omitempty"`
	CreditBackRefund *Decimal  `json:"creditBackRefund,omitempty"`
	RateLimits       *bool     `json:"rateLimits,omitempty"`
}

// ApplySettings changes the given settings for what happens from now on.
func (s *Sim) ApplySettings(st Settings) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st.FeeDelay != nil {
		s.sc.Timing.FeeDelay = *st.FeeDelay
	}
	if st.CreditClear != nil {
		s.sc.Timing.CreditClear = *st.CreditClear
	}
	if st.FeeMultiplier != nil {
		s.sc.FeeMultiplier = *st.FeeMultiplier
	}
	if st.CreditBackRefund != nil {
		s.sc.CreditBackRefund = *st.CreditBackRefund
	}
	if st.RateLimits != nil {
		s.sc.RateLimits = *st.RateLimits
		s.limits.on = *st.RateLimits
	}
}

// AddCashRows appends rows to the cash ledger, as a broker back office would.
func (s *Sim) AddCashRows(rows []ScenarioCashRow) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range rows {
		if err := s.cash.addSeed(r); err != nil {
			return err
		}
	}
	return nil
}

// serveAdmin answers the /_sim/ routes. They are not part of the broker
// interface: no credentials, no rate limits, no faults, not logged.
func (s *Sim) serveAdmin(w http.ResponseWriter, r *http.Request) {
	route := r.Method + " " + strings.TrimSuffix(r.URL.Path, "/")
	a := adminCall{w: w, r: r}
	switch route {
	case "GET /_sim/requests":
		s.adminRequests(a)
	case "DELETE /_sim/requests":
		s.mu.Lock()
		s.log = requestLog{}
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	case "GET /_sim/locates":
		a.writeJSON(s.Locates())
	case "GET /_sim/inventory":
		a.writeJSON(s.Inventory())
	case "GET /_sim/orders":
		a.writeJSON(s.Orders())
	case "GET /_sim/fills":
		a.writeJSON(s.Fills())
	case "GET /_sim/ledger":
		a.writeJSON(s.Cash())
	case "GET /_sim/clock":
		a.writeJSON(map[string]any{"now": s.Now().UTC().Format(time.RFC3339Nano)})
	case "POST /_sim/clock":
		s.adminClock(a)
	case "POST /_sim/prices":
		s.adminPrices(a)
	case "POST /_sim/streams":
		var c StreamControl
		if !a.decode(&c) {
			return
		}
		n, err := s.ControlStreams(c)
		if err != nil {
			a.bad(err)
			return
		}
		a.writeJSON(map[string]int{"connections": n})
	case "GET /_sim/faults":
		s.mu.Lock()
		f := s.faults.cfg
		s.mu.Unlock()
		a.writeJSON(f)
	case "PUT /_sim/faults", "POST /_sim/faults":
		var f Faults
		if a.decode(&f) && a.ok(s.SetFaults(f)) {
			w.WriteHeader(http.StatusNoContent)
		}
	case "PATCH /_sim/settings", "POST /_sim/settings":
		var st Settings
		if a.decode(&st) {
			s.ApplySettings(st)
			w.WriteHeader(http.StatusNoContent)
		}
	case "POST /_sim/ledger":
		var rows []ScenarioCashRow
		if a.decode(&rows) && a.ok(s.AddCashRows(rows)) {
			w.WriteHeader(http.StatusNoContent)
		}
	case "POST /_sim/reset":
		s.Reset()
		w.WriteHeader(http.StatusNoContent)
	case "GET /_sim/scenario":
		s.mu.Lock()
		sc := s.sc
		s.mu.Unlock()
		a.writeJSON(sc)
	default:
		http.Error(w, "unknown admin route "+route, http.StatusNotFound)
	}
}

// adminCall is one /_sim/ request and its response writer, with the
// answers every admin route shares: JSON out, a strict JSON body in, 400.
type adminCall struct {
	w http.ResponseWriter
	r *http.Request
}

func (a adminCall) writeJSON(v any) {
	a.w.Header().Set("Content-Type", ctypeJSON)
	json.NewEncoder(a.w).Encode(v)
}

func (a adminCall) bad(err error) { http.Error(a.w, err.Error(), http.StatusBadRequest) }

// ok answers 400 with err when there is one, and reports whether there was none.
func (a adminCall) ok(err error) bool {
	if err != nil {
		a.bad(err)
	}
	return err == nil
}

// decode reads the body into v, refusing unknown fields; on failure it has
// answered 400.
func (a adminCall) decode(v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(a.w, a.r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		a.bad(fmt.Errorf("body: %w", err))
		return false
	}
	return true
}

// adminRequests answers GET /_sim/requests: the request log, from the
// index ?since= on when given.
func (s *Sim) adminRequests(a adminCall) {
	all := s.Requests()
	if v := a.r.URL.Query().Get("since"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			a.bad(fmt.Errorf("since must be a non-negative index"))
			return
		}
		all = all[min(n, len(all)):]
	}
	a.writeJSON(all)
}

// adminClock answers POST /_sim/clock: advance the fake clock by a duration
// or to a later instant, never backwards.
func (s *Sim) adminClock(a adminCall) {
	var req struct {
		Advance Duration  `json:"advance"`
		Set     time.Time `json:"set"`
	}
	if !a.decode(&req) {
		return
	}
	if !req.Set.IsZero() {
		now := s.Now()
		if req.Set.Before(now) {
			a.bad(fmt.Errorf("set: the clock only moves forward (now %s)", now.UTC().Format(time.RFC3339Nano)))
			return
		}
		req.Advance += Duration(req.Set.Sub(now))
	}
	if req.Advance < 0 {
		a.bad(fmt.Errorf("advance must not be negative"))
		return
	}
	s.Advance(time.Duration(req.Advance))
	a.writeJSON(map[string]any{"now": s.Now().UTC().Format(time.RFC3339Nano)})
}

// adminPrices answers POST /_sim/prices: one tick {symbol, price}, or
// several {ticks: [...]} whose P&L stream messages may interleave.
func (s *Sim) adminPrices(a adminCall) {
	var req struct {
		Tick
		Ticks []Tick `json:"ticks"`
	}
	if !a.decode(&req) {
		return
	}
	ticks := req.Ticks
	if req.Symbol != "" || len(ticks) == 0 {
		ticks = append([]Tick{req.Tick}, ticks...)
	}
	for _, t := range ticks {
		if t.Symbol == "" || !t.Price.IsPositive() {
			a.bad(fmt.Errorf("need a symbol and a positive price"))
			return
		}
	}
	s.SetPrices(ticks)
	a.w.WriteHeader(http.StatusNoContent)
}

// SetLocatePrice sets the price per share of every locate pool of symbol,
// for the quotes settled from now on: a test or a demo can move what
// locating costs from day to day. It reports false when the scenario has
// no pool of symbol.
func (s *Sim) SetLocatePrice(symbol string, price decimal.Decimal) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	found := false
	for k, p := range s.loc.pools {
		if k.symbol == symbol {
			p.price, found = price, true
		}
	}
	return found
}

// LocateRecord is one locate history row of any day, as the admin read of
// GET /_sim/locates serves it: what a checker that trusts only the broker
// needs (the exact price besides the text written on the wire).
type LocateRecord struct {
	Account    string    `json:"account"`
	Symbol     string    `json:"symbol"`
	QuoteReqID string    `json:"quoteReqID"`
	Shares     int64     `json:"shares"` // negative for a credit-back
	Filled     int64     `json:"filled"`
	Status     int       `json:"status"`
	Type       int       `json:"type"`
	Price      Decimal   `json:"price"`
	Wire       string    `json:"wire"` // locatePrice as history writes it
	Text       *string   `json:"text"`
	Created    time.Time `json:"created"`
	Updated    time.Time `json:"updated"`
	// Offered is when the quote settled as Offered (absent: never), the
	// moment history could first show the offer.
	Offered time.Time `json:"offered,omitzero"`
}

// InventoryRecord is one located inventory row, with what the spec's row
// folds into unavailable kept apart.
type InventoryRecord struct {
	Account   string `json:"account"`
	Symbol    string `json:"symbol"`
	Type      int    `json:"type"`
	Available int64  `json:"available"`
	Sold      int64  `json:"sold"`
	ToBeSold  int64  `json:"toBeSold"`
	Locked    int64  `json:"locked"`
	Tied      int64  `json:"tied"`
	// UsedForShort marks a SingleUse row that opened a short.
	UsedForShort bool `json:"usedForShort"`
}

// Locates returns every locate history row of every day, oldest first,
// after running the events due.
func (s *Sim) Locates() []LocateRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked()
	out := make([]LocateRecord, len(s.loc.rows))
	for i, r := range s.loc.rows {
		out[i] = LocateRecord{Account: r.account, Symbol: r.symbol, QuoteReqID: r.id, Shares: r.shares, Filled: r.filled,
			Status: r.status, Type: r.typ, Price: Dec(r.price), Wire: r.wirePrice().String(), Text: r.text, Created: r.created, Updated: r.updated, Offered: r.offered}
	}
	return out
}

// Inventory returns the located inventory of the current trading day.
func (s *Sim) Inventory() []InventoryRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked()
	out := make([]InventoryRecord, len(s.loc.inv))
	for i, r := range s.loc.inv {
		out[i] = InventoryRecord{Account: r.account, Symbol: r.symbol, Type: r.typ, Available: r.available, Sold: r.sold,
			ToBeSold: r.toBeSold, Locked: r.locked, Tied: r.tied, UsedForShort: r.usedForShort}
	}
	return out
}

// OrderRecord is one order placement of any account, as the admin read of
// GET /_sim/orders serves it: what a checker that trusts only the broker
// needs of the order book (times on the broker's clock).
type OrderRecord struct {
	Account       string    `json:"account"`
	ClientOrderID string    `json:"clientOrderId"`
	Symbol        string    `json:"symbol"`
	Side          string    `json:"side"`
	OpenClose     string    `json:"openClose"`
	OrderType     string    `json:"orderType"`
	TimeInForce   string    `json:"timeInForce"`
	Quantity      int64     `json:"quantity"`
	Executed      int64     `json:"executed"`
	Canceled      int64     `json:"canceled"`
	PriceAvg      Decimal   `json:"priceAvg"`
	Status        string    `json:"status"`
	Text          *string   `json:"text"`
	Start         time.Time `json:"start"`
	Updated       time.Time `json:"updated"`
}

// Orders returns every order placed, in arrival order, after running the
// events due.
func (s *Sim) Orders() []OrderRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked()
	out := make([]OrderRecord, len(s.ord.orders))
	for i, o := range s.ord.orders {
		out[i] = OrderRecord{Account: o.acct.id, ClientOrderID: o.id, Symbol: o.symbol, Side: o.side, OpenClose: o.openClose,
			OrderType: o.orderType, TimeInForce: o.tif, Quantity: o.qty, Executed: o.executed, Canceled: o.canceled,
			PriceAvg: Dec(o.priceAvg), Status: o.status, Text: o.text, Start: o.start, Updated: o.updated}
	}
	return out
}

// FillRecord is one execution of an order placed in this run, as GET
// /_sim/fills serves it: what a checker needs to judge when orders
// executed (the spec's fill rows carry no clientOrderId; this record does).
type FillRecord struct {
	Account       string    `json:"account"`
	ClientOrderID string    `json:"clientOrderId"`
	Symbol        string    `json:"symbol"`
	Side          string    `json:"side"`
	OrderType     string    `json:"orderType"`
	TimeInForce   string    `json:"timeInForce"`
	Quantity      int64     `json:"quantity"`
	Price         Decimal   `json:"price"`
	Placed        time.Time `json:"placed"`
	At            time.Time `json:"at"`
}

// Fills returns every execution of an order placed in this run (not the
// scenario's seeded history), oldest first, after running the events due.
func (s *Sim) Fills() []FillRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked()
	out := []FillRecord{} // [] when none, as every admin list
	for _, f := range s.ord.fills {
		if o := f.order; o != nil {
			out = append(out, FillRecord{Account: f.account, ClientOrderID: o.id, Symbol: f.symbol, Side: f.side, OrderType: o.orderType,
				TimeInForce: o.tif, Quantity: f.qty, Price: Dec(f.price), Placed: o.start, At: f.at})
		}
	}
	return out
}

// CashRecord is one cash ledger row of any account, as GET /_sim/ledger
// serves it.
type CashRecord struct {
	Account  string    `json:"account"`
	Date     time.Time `json:"date"`
	CashType string    `json:"cashType"`
	Deposit  Decimal   `json:"deposit"`
	Withdraw Decimal   `json:"withdraw"`
	Note     string    `json:"note"`
}

// Cash returns the cash ledger's rows, by date then entry, after running
// the events due (a fee row posted late is there once its delay passed).
func (s *Sim) Cash() []CashRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked()
	out := make([]CashRecord, len(s.cash.rows))
	for i, r := range s.cash.rows {
		out[i] = CashRecord{Account: r.account, Date: r.date, CashType: r.cashType, Deposit: Dec(r.deposit), Withdraw: Dec(r.withdraw), Note: r.note}
	}
	return out
}
