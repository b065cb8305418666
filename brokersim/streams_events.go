package brokersim

// What the two streams carry (spec: "Events"): P&L snapshots and partial
// updates driven by price ticks, and portfolio order and position updates
// driven by order changes. Everything here runs under the simulator's lock.

// pnlMsg is a P&L data message: `ts`, `action`, `target` and the content
// under the target's name. `account` is the simulator's addition (the spec
// shows none): with several accounts on one connection, it says whose
// snapshot or update this is.
type pnlMsg struct {
	TS        int64          `json:"ts"`
	Account   string         `json:"account"`
	Action    string         `json:"action"`
	Target    string         `json:"target"`
	PnLReturn map[string]any `json:"pnlReturn,omitempty"`
	AggCalcs  *fields        `json:"aggCalcs,omitempty"` // {} when a tick changed no aggregate
	Position  *pnlPosition   `json:"position,omitempty"`
}

// fields are named numbers, as decimal strings so unchanged values compare
// equal; they are written as JSON numbers.
type fields map[string]Decimal

type pnlPosition struct {
	PositionID string `json:"positionId"`
	Symbol     string `json:"symbol"`
	PnLCalc    fields `json:"pnlCalc"`
}

// pnlSent is what a connection last told a client about one account, so an
// update can carry only the fields that changed (spec: "only changed fields
// present, absent means unchanged").
type pnlSent struct {
	agg fields
	pos map[string]fields
}

// pnlState is the stream's view of an account: the snapshot's aggregates
// and one pnlCalc per lot (spec: "pnlReturn fields").
func (s *Sim) pnlState(a *account) (fields, []pnlPosition) {
	p := s.pnlSnapshot(a)
	agg := fields{
		"accountValue": p.AccountValue, "availableCash": p.AvailableCash, "optionCashUsed": p.OptionCashUsed,
		"usedLeverage": p.UsedLeverage, "allowedLeverage": p.AllowedLeverage, "sharesTraded": DecInt(p.SharesTraded),
		"exposure": p.Exposure, "dayUnrealized": p.DayUnrealized, "dayRealized": p.DayRealized, "dayPnl": p.DayPnl,
		"totalUnrealized": p.TotalUnrealized, "equityRatio": p.EquityRatio,
	}
	var pos []pnlPosition
	for _, r := range p.Pnl {
		pos = append(pos, pnlPosition{PositionID: r.PositionID, Symbol: r.Symbol, PnLCalc: fields{
			"unrealizedPnL": r.UnrealizedPnL, "dayUnrealizedPnL": r.DayUnrealizedPnL, "pctPnLMove": r.PctPnLMove,
			"dayPctPnLMove": r.DayPctPnLMove, "exposure": r.Exposure, "realizedPnl": r.RealizedPnl,
			"dayRealizedPnl": r.DayRealizedPnl,
		}})
	}
	return agg, pos
}

// pnlSubscribe sends the init snapshot, once per subscribe (spec: P&L
// stream), and remembers it as the base of later updates.
func (s *Sim) pnlSubscribe(c *streamConn, a *account) {
	agg, pos := s.pnlState(a)
	sent := &pnlSent{agg: agg, pos: map[string]fields{}}
	snap := map[string]any{}
	for k, v := range agg {
		snap[k] = v
	}
	positions := []pnlPosition{}
	for _, p := range pos {
		sent.pos[p.PositionID] = p.PnLCalc
		positions = append(positions, p)
	}
	snap["positions"] = positions
	c.pnl[a.id] = sent
	c.queue(pnlMsg{TS: s.now.UnixMilli(), Account: a.id, Action: "init", Target: "pnlReturn", PnLReturn: snap})
}

// diff returns the fields of now that differ from before.
func diff(before, now fields) fields {
	out := fields{}
	for k, v := range now {
		if b, ok := before[k]; !ok || !b.Equal(v.Decimal) {
			out[k] = v
		}
	}
	return out
}

// Tick is one price change of the admin route POST /_sim/prices.
type Tick struct {
	Symbol string  `json:"symbol"`
	Price  Decimal `json:"price"`
}

// applyTicks sets each price in turn, lets working orders react, and sends
// every P&L subscriber holding the symbol one aggCalcs and one position
// message per lot with equal ts (spec: P&L stream rule 1). A price that does
// not change sends nothing (rule 2: updates only when a held position's
// quote changes). Within one call the messages of different ticks are
// interleaved at random, keeping each target's own order, so the account
// aggregates and each position still end at their latest values.
func (s *Sim) applyTicks(ticks []Tick) {
	// Per connection, one lane per target: the aggregates of an account,
	// then each position.
	type lanes struct {
		order []string
		byKey map[string][]pnlMsg
	}
	out := map[*streamConn]*lanes{}
	for _, t := range ticks {
		old, had := s.prices[t.Symbol]
		s.prices[t.Symbol] = t.Price.Decimal
		s.ord.tryWorking(s, t.Symbol)
		if had && old.Equal(t.Price.Decimal) {
			continue
		}
		ts := s.now.UnixMilli()
		for c := range s.str.conns {
			for id, sent := range c.pnl {
				a := s.accounts[id]
				if long, short := s.ord.held(id, t.Symbol); a == nil || long+short == 0 {
					continue
				}
				l := out[c]
				if l == nil {
					l = &lanes{byKey: map[string][]pnlMsg{}}
					out[c] = l
				}
				add := func(key string, m pnlMsg) {
					if _, ok := l.byKey[key]; !ok {
						l.order = append(l.order, key)
					}
					l.byKey[key] = append(l.byKey[key], m)
				}
				agg, pos := s.pnlState(a)
				changed := diff(sent.agg, agg)
				add("agg "+id, pnlMsg{TS: ts, Account: id, Action: "update", Target: "aggCalcs", AggCalcs: &changed})
				sent.agg = agg
				for _, p := range pos {
					if p.Symbol != t.Symbol {
						continue
					}
					calc := diff(sent.pos[p.PositionID], p.PnLCalc)
					sent.pos[p.PositionID] = p.PnLCalc
					p.PnLCalc = calc
					add("pos "+p.PositionID, pnlMsg{TS: ts, Account: id, Action: "update", Target: "position", Position: &p})
				}
			}
		}
	}
	for c, l := range out {
		for {
			var ready []string
			for _, k := range l.order {
				if len(l.byKey[k]) > 0 {
					ready = append(ready, k)
				}
			}
			if len(ready) == 0 {
				break
			}
			k := ready[s.rng.IntN(len(ready))]
			c.queue(l.byKey[k][0])
			l.byKey[k] = l.byKey[k][1:]
		}
	}
}

// portfolioMsg is a portfolio data message. The spec shows neither the
// subscribe payload nor this envelope; the simulator mirrors the P&L
// stream's (`ts`, `action`, `target`, content under a key) and adds
// `account`.
type portfolioMsg struct {
	TS       int64          `json:"ts"`
	Account  string         `json:"account"`
	Action   string         `json:"action"`
	Target   string         `json:"target"`
	Topics   []string       `json:"topics,omitempty"`
	Order    *streamOrder   `json:"order,omitempty"`
	Position *positionEvent `json:"position,omitempty"`
}

// positionEvent is an open-position row with the stream's `id` for the
// position id (spec: "position events carry `id`").
type positionEvent struct {
	positionJSON
	ID string `json:"id"`
}

// streamOrder is an order record with the stream's userOrderId
// (`<accountId>:<clientOrderId>`, spec: "Names that differ between surfaces").
type streamOrder struct {
	orderJSON
	UserOrderID string `json:"userOrderId"`
}

// subscribers returns the portfolio connections subscribed to topic on account.
func (s *Sim) subscribers(account, topic string) []*streamConn {
	var out []*streamConn
	for c := range s.str.conns {
		for _, t := range c.topics[account] {
			if t == topic {
				out = append(out, c)
			}
		}
	}
	return out
}

// pushOrder sends the order's current state to the portfolio subscribers
// of its account (spec: "POST order, cancel and fills change order state;
// the portfolio stream carries those updates").
func (s *Sim) pushOrder(o *order) {
	cs := s.subscribers(o.acct.id, topicOrder)
	if len(cs) == 0 {
		return
	}
	m := portfolioMsg{TS: s.now.UnixMilli(), Account: o.acct.id, Action: "update", Target: topicOrder,
		Order: &streamOrder{orderJSON: o.toJSON(), UserOrderID: o.acct.id + ":" + o.id}}
	s.send(cs, m)
}

// pushPositions sends the account's lots on symbol that a fill just changed.
func (s *Sim) pushPositions(account, symbol string) {
	cs := s.subscribers(account, topicPosition)
	if len(cs) == 0 {
		return
	}
	for _, l := range s.ord.lots {
		if l.account != account || l.symbol != symbol || !l.updated.Equal(s.now) {
			continue
		}
		s.send(cs, portfolioMsg{TS: s.now.UnixMilli(), Account: account, Action: "update", Target: topicPosition,
			Position: &positionEvent{positionJSON: s.positionRow(l), ID: l.id}})
	}
}

// send queues m on each connection, twice when the admin route asked for
// duplicates, and not at all when the push is lost (Faults.RatePushLoss).
func (s *Sim) send(cs []*streamConn, m any) {
	for _, c := range cs {
		if s.pushLost() {
			continue
		}
		c.queue(m)
		if s.str.duplicate {
			c.queue(m)
		}
	}
}
