package console

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/locatorhq/locator/brokerclient"
)

// redraw clears the terminal and prints a status line and the table.
func redraw(w io.Writer, status string, draw func(Printer)) {
	fmt.Fprint(w, "\x1b[H\x1b[2J")
	fmt.Fprintln(w, status)
	draw(Printer{W: w})
}

func streamStatus(up bool) string {
	state := "live"
	if !up {
		state = "reconnecting…"
	}
	return fmt.Sprintf("%s  stream %s  (Ctrl-C to stop)", time.Now().Format(time.TimeOnly), state)
}

// pnlLine is one JSON line of watch pnl.
type pnlLine struct {
	Time      time.Time                `json:"time"`
	Account   string                   `json:"account"`
	Connected bool                     `json:"connected"`
	PnL       brokerclient.PnLSnapshot `json:"pnl"`
}

// WatchPnL follows the account's P&L on the broker's stream until ctx ends:
// on a terminal (live) a table redrawn in place with the stream's state,
// otherwise one JSON line per change while connected.
func WatchPnL(ctx context.Context, client *brokerclient.Client, account string, w io.Writer, live bool) error {
	pw, err := client.Streams.WatchPnL(ctx, []string{account})
	if err != nil {
		return err
	}
	defer pw.Close()
	if err := pw.Wait(ctx); err != nil {
		return err
	}
	for {
		changed := pw.Changed()
		if err := pw.Err(); err != nil {
			return err
		}
		snap, up := pw.Snapshot(account)
		if live {
			redraw(w, streamStatus(up), func(p Printer) { PnLSnapshot(p, snap) })
		} else if up {
			Printer{W: w, Format: JSON}.Event(pnlLine{Time: time.Now().UTC(), Account: account, Connected: up, PnL: snap}, "")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		}
	}
}

// WatchOrders follows the account's orders on the broker's portfolio
// stream until ctx ends: on a terminal (live) the orders seen redrawn in
// place with the stream's state, otherwise one JSON line per change.
func WatchOrders(ctx context.Context, client *brokerclient.Client, account string, w io.Writer, live bool) error {
	f, err := client.Streams.FollowOrders(ctx, account)
	if err != nil {
		return err
	}
	defer f.Close()
	ow := f.Watch("")
	defer ow.Close()
	if err := f.Load(ctx); err != nil {
		return err
	}
	var ids []string
	latest := map[string]brokerclient.Order{}
	for {
		o, err := ow.Next(ctx)
		if err != nil {
			return err
		}
		if !live {
			Printer{W: w, Format: JSON}.Event(o, "")
			continue
		}
		if _, seen := latest[o.ClientOrderID]; !seen {
			ids = append(ids, o.ClientOrderID)
		}
		latest[o.ClientOrderID] = *o
		up, _ := f.Connected()
		orders := make([]brokerclient.Order, len(ids))
		for i, id := range ids {
			orders[i] = latest[id]
		}
		redraw(w, streamStatus(up), func(p Printer) { OrderBook(p, orders) })
	}
}
