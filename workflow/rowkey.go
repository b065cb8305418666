package workflow

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// RowKey authenticates the request part of the workflow and order rows an
// owner writes: whoever can write the database but does not hold the
// account's secret can neither add a row the owner will act on nor change
// what one asks for (docs/design.md rule 10). The key is derived from the
// secret (brokerclient.Client.RowKey); the MAC is stored with the row.
//
// Only what the owner decided when it made the row is covered, never what
// the broker or a later step writes, so a row's MAC is made once, at its
// creation, and holds for its whole life.
type RowKey []byte

// Workflow is the MAC of w's request: its id, kind, account, symbol, the
// shares asked for and the cost policy. The shares quoted (Quantity) and
// the quoteReqID are the engine's to change as it goes (a shortfall, a
// quote sent again) and are not covered.
func (k RowKey) Workflow(w *Workflow) string {
	return k.mac("workflow", w.ID, string(w.Kind), w.Account, w.Symbol, strconv.FormatInt(w.Requested, 10),
		w.Policy.MaxPrice.String(), w.Policy.MaxCost.String(), strconv.FormatBool(w.Policy.AutoAccept),
		strconv.FormatBool(w.Policy.AllowSingleUse))
}

// Order is the MAC of o's request: everything that decides what is sent
// (its ids, account, symbol, side, type, time in force, quantity, prices
// and route as placed, and the locate that covers it).
func (k RowKey) Order(o *Order) string {
	return k.orderMAC(o, o.Route)
}

func (k RowKey) orderMAC(o *Order, route string) string {
	return k.mac("order", o.ClientOrderID, o.Account, o.Symbol, o.Side, o.OpenClose, o.OrderType, o.TimeInForce,
		strconv.FormatInt(o.Quantity, 10), o.LimitPrice.String(), o.StopPrice.String(), route, o.LocateWorkflowID)
}

// VerifyWorkflow reports whether w's stored MAC is the one k makes of it.
func (k RowKey) VerifyWorkflow(w *Workflow) bool { return k.equal(w.MAC, k.Workflow(w)) }

// VerifyOrder reports whether o's stored MAC is the one k makes of it. An
// order placed without a route and since answered carries the route paper
// assigned (see OrderSeen), which its MAC, made before it was sent, does
// not: such an order verifies without its route.
func (k RowKey) VerifyOrder(o *Order) bool {
	return k.equal(o.MAC, k.Order(o)) || (o.Settled() && k.equal(o.MAC, k.orderMAC(o, "")))
}

// equal compares in constant time; an empty MAC (a row written without
// the key) never verifies.
func (k RowKey) equal(stored, want string) bool {
	return stored != "" && hmac.Equal([]byte(stored), []byte(want))
}

// mac is the HMAC-SHA256 of the fields, each length-prefixed so that no
// two different rows encode alike, in hex.
func (k RowKey) mac(fields ...string) string {
	h := hmac.New(sha256.New, k)
	for _, f := range fields {
		h.Write(strconv.AppendInt(nil, int64(len(f)), 10))
		h.Write([]byte{':'})
		h.Write([]byte(f))
	}
	return hex.EncodeToString(h.Sum(nil))
}
