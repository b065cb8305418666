package account

import (
	"time"

	"github.com/locatorhq/locator/brokerclient"
)

// WatchStream names one of the broker's push streams Watch follows (spec
// "WebSocket streams").
type WatchStream string

// The streams Watch follows.
const (
	// WatchPnL: the P&L stream, the account's figures and its lots' kept
	// in one model (spec "P&L stream": a snapshot, then partial updates).
	WatchPnL WatchStream = "pnl"
	// WatchOrders: the portfolio stream's order updates, after the order
	// book read once (spec "Portfolio stream": buffer the stream while
	// loading REST state).
	WatchOrders WatchStream = "orders"
)

// WatchRequest asks for one push stream of the account.
type WatchRequest struct {
	Stream WatchStream `json:"stream"`
}

// WatchEvent is one change of a watched stream: of its connection, of the
// account's P&L model, or of one order. Every event says the stream's
// state as of it, so a reader needs no memory of the ones before.
type WatchEvent struct {
	// Time is when the watcher saw the change, on its clock.
	Time time.Time `json:"time"`
	// State is the stream's state: StreamConnecting until it is first
	// live, StreamLive, StreamDown while it reconnects.
	State StreamState `json:"state"`
	// PnL is the account's P&L model as the stream left it (stream pnl,
	// while live): one event per change of it.
	PnL *brokerclient.PnLSnapshot `json:"pnl,omitempty"`
	// Order is one order's next state (stream orders): the order book's
	// first, then the stream's, each state of an order once and in order.
	Order *brokerclient.Order `json:"order,omitempty"`
}
