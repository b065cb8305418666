package console

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/market"
)

// redraw clears the terminal and prints a status line and the table.
func redraw(w io.Writer, status string, draw func(Printer)) {
	fmt.Fprint(w, "\x1b[H\x1b[2J")
	fmt.Fprintln(w, status)
	draw(Printer{W: w})
}

// streamStatus is the status line of a watch on a terminal, as of at.
func streamStatus(at time.Time, state string) string {
	if state != "live" {
		state += "…"
	}
	return fmt.Sprintf("%s  stream %s  (Ctrl-C to stop)", market.TimeOfDay(at), state)
}

// stateLine is the JSON line of a watch whose stream changed state.
type stateLine struct {
	Time    time.Time `json:"time"`
	Account string    `json:"account"`
	Stream  string    `json:"stream"` // pnl or orders
	State   string    `json:"state"`  // connecting, live or reconnecting
}

// pnlLine is one JSON line of watch pnl.
type pnlLine struct {
	Time      time.Time                `json:"time"`
	Account   string                   `json:"account"`
	Connected bool                     `json:"connected"`
	PnL       brokerclient.PnLSnapshot `json:"pnl"`
}

// watchShow prints a watch's events: on a terminal (live) a table redrawn
// in place under the stream's state, otherwise one JSON line per change
// of the stream's state and one per change of what it carries (the P&L
// model while live; an order's state, as the broker names its fields).
// The stream is connecting until it is first live, then live or
// reconnecting.
type watchShow struct {
	w               io.Writer
	live            bool // a terminal
	account, stream string
	state           string // the last one shown
	pnl             *brokerclient.PnLSnapshot
	ids             []string // the orders seen, first seen first
	orders          map[string]brokerclient.Order
}

// set records the stream's state as of e and returns it in words, with a
// JSON line off a terminal when it changed.
func (s *watchShow) set(e account.WatchEvent) string {
	state := "connecting"
	switch e.State {
	case account.StreamLive:
		state = "live"
	case account.StreamDown:
		state = "reconnecting"
	}
	if !s.live && state != s.state {
		Printer{W: s.w, Format: JSON}.Event(stateLine{Time: e.Time.UTC(), Account: s.account, Stream: s.stream, State: state}, "")
	}
	s.state = state
	return state
}

// show prints one event of the watch.
func (s *watchShow) show(e account.WatchEvent) {
	state := s.set(e)
	if e.PnL != nil {
		s.pnl = e.PnL
		if !s.live {
			Printer{W: s.w, Format: JSON}.Event(pnlLine{Time: e.Time.UTC(), Account: s.account, Connected: true, PnL: *e.PnL}, "")
		}
	}
	if o := e.Order; o != nil {
		if !s.live {
			Printer{W: s.w, Format: JSON}.Event(o, "")
		}
		if _, seen := s.orders[o.ClientOrderID]; !seen {
			s.ids = append(s.ids, o.ClientOrderID)
		}
		s.orders[o.ClientOrderID] = *o
	}
	if !s.live {
		return
	}
	redraw(s.w, streamStatus(e.Time, state), func(p Printer) {
		switch {
		case s.stream == string(account.WatchOrders):
			orders := make([]brokerclient.Order, len(s.ids))
			for i, id := range s.ids {
				orders[i] = s.orders[id]
			}
			OrderBook(p, orders)
		case s.pnl != nil:
			PnLSnapshot(p, *s.pnl)
		}
	})
}

// Watch follows stream what of acct through the account API (r.Watch:
// the owner's streams relayed, or this process's own when none runs)
// until ctx ends (exit 130), printing to w, redrawn in place when live.
// Its errors are the account API's: the broker's refusal of the keys or
// of the account on the stream is KindRefused (exit 2, nothing was sent).
func Watch(ctx context.Context, r account.Reader, what account.WatchStream, acct string, w io.Writer, live bool) error {
	s := watchShow{w: w, live: live, account: acct, stream: string(what), orders: map[string]brokerclient.Order{}}
	err := r.Watch(ctx, account.WatchRequest{Stream: what}, s.show)
	if ctx.Err() != nil {
		return &CodeError{Code: ExitInterrupted, Msg: "interrupted"}
	}
	return err
}
