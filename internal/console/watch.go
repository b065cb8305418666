package console

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/market"
)

// redraw clears the terminal and prints a status line and the table.
func redraw(w io.Writer, status string, draw func(Printer)) {
	fmt.Fprint(w, "\x1b[H\x1b[2J")
	fmt.Fprintln(w, status)
	draw(Printer{W: w})
}

func streamStatus(state string) string {
	if state != "live" {
		state += "…"
	}
	return fmt.Sprintf("%s  stream %s  (Ctrl-C to stop)", market.TimeOfDay(time.Now()), state)
}

// stateLine is the JSON line of a watch whose stream changed state.
type stateLine struct {
	Time    time.Time `json:"time"`
	Account string    `json:"account"`
	Stream  string    `json:"stream"` // pnl or orders
	State   string    `json:"state"`  // connecting, live or reconnecting
}

// streamShow follows a watch's stream connection: connecting until it is
// first live, then live or reconnecting. Off a terminal each change of
// state is a JSON line; on a terminal the redrawn status line says it.
type streamShow struct {
	w               io.Writer
	live            bool // a terminal
	account, stream string
	state           string // the last one shown
	everUp          bool
}

// begin shows the first connection under way, before anything has come
// (an unreachable broker shows as connecting, not as a blank screen).
func (s *streamShow) begin() {
	if s.set(false); s.live {
		redraw(s.w, streamStatus(s.state), func(Printer) {})
	}
}

// set records whether the stream is up and returns its state.
func (s *streamShow) set(up bool) string {
	state := "connecting"
	switch {
	case up:
		state, s.everUp = "live", true
	case s.everUp:
		state = "reconnecting"
	}
	if !s.live && state != s.state {
		Printer{W: s.w, Format: JSON}.Event(stateLine{Time: time.Now().UTC(), Account: s.account, Stream: s.stream, State: state}, "")
	}
	s.state = state
	return state
}

// pnlLine is one JSON line of watch pnl.
type pnlLine struct {
	Time      time.Time                `json:"time"`
	Account   string                   `json:"account"`
	Connected bool                     `json:"connected"`
	PnL       brokerclient.PnLSnapshot `json:"pnl"`
}

// watchPnL follows the account's P&L on the broker's stream until ctx ends:
// on a terminal (live) a table redrawn in place under the stream's state
// (connecting, live, reconnecting), otherwise one JSON line per change
// while connected and one per change of the stream's state.
func watchPnL(ctx context.Context, client *brokerclient.Client, account string, w io.Writer, live bool) error {
	show := streamShow{w: w, live: live, account: account, stream: "pnl"}
	show.begin()
	pw, err := client.Streams.WatchPnL(ctx, []string{account})
	if err != nil {
		return err
	}
	defer pw.Close()
	for {
		changed := pw.Changed()
		if err := pw.Err(); err != nil {
			return err
		}
		snap, up := pw.Snapshot(account)
		state := show.set(up)
		switch {
		case live:
			redraw(w, streamStatus(state), func(p Printer) {
				if show.everUp {
					PnLSnapshot(p, snap)
				}
			})
		case up:
			Printer{W: w, Format: JSON}.Event(pnlLine{Time: time.Now().UTC(), Account: account, Connected: up, PnL: snap}, "")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		}
	}
}

// watchOrders follows the account's orders on the broker's portfolio
// stream until ctx ends: on a terminal (live) the orders seen redrawn in
// place under the stream's state, otherwise one JSON line per order change
// and one per change of the stream's state (while it is down the orders
// come from the order book).
func watchOrders(ctx context.Context, client *brokerclient.Client, account string, w io.Writer, live bool) error {
	show := streamShow{w: w, live: live, account: account, stream: "orders"}
	show.begin()
	f, err := client.Streams.FollowOrders(ctx, account)
	if err != nil {
		return err
	}
	defer f.Close()
	ow := f.Watch("")
	defer ow.Close()
	up, changed := f.Connected()
	if state := show.set(up); live {
		redraw(w, streamStatus(state), func(Printer) {})
	}
	if err := f.Load(ctx); err != nil {
		return err
	}
	next, failed := make(chan *brokerclient.Order), make(chan error, 1)
	go func() {
		for {
			o, err := ow.Next(ctx)
			if err != nil {
				failed <- err
				return
			}
			next <- o
		}
	}()
	var ids []string
	latest := map[string]brokerclient.Order{}
	for {
		select {
		case err := <-failed:
			return err
		case <-changed:
		case o := <-next:
			if !live {
				Printer{W: w, Format: JSON}.Event(o, "")
			}
			if _, seen := latest[o.ClientOrderID]; !seen {
				ids = append(ids, o.ClientOrderID)
			}
			latest[o.ClientOrderID] = *o
		}
		up, changed = f.Connected()
		state := show.set(up)
		if live {
			orders := make([]brokerclient.Order, len(ids))
			for i, id := range ids {
				orders[i] = latest[id]
			}
			redraw(w, streamStatus(state), func(p Printer) { OrderBook(p, orders) })
		}
	}
}

// Watch follows stream what ("pnl" or "orders") of account on client
// until ctx ends (exit 130), printing to w, redrawn in place when live.
// The broker's refusal of the keys or of the account on the stream is a
// usage error (exit 2): nothing was sent.
func Watch(ctx context.Context, client *brokerclient.Client, what, account string, w io.Writer, live bool) error {
	var err error
	if what == "pnl" {
		err = watchPnL(ctx, client, account, w, live)
	} else {
		err = watchOrders(ctx, client, account, w, live)
	}
	switch {
	case ctx.Err() != nil:
		return &CodeError{Code: ExitInterrupted, Msg: "interrupted"}
	case errors.Is(err, brokerclient.ErrStreamAuth):
		return Usagef("the broker refused these keys on the stream: check LOCATOR_KEY_ID and LOCATOR_SECRET")
	case errors.Is(err, brokerclient.ErrStreamSubscribe):
		return Usagef("account %s not found for these keys; nothing was sent", account)
	}
	return err
}
