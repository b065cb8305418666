package console

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/internal/safetext"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// Board is a watchlist's live table on a terminal: one row per symbol,
// redrawn in place on every change, so a hundred symbols stay readable
// where a hundred interleaved progress lines would not.
type Board struct {
	mu    sync.Mutex
	w     io.Writer
	rows  []boardRow
	byID  map[string]int
	drawn int // lines on screen, to move back over
}

type boardRow struct {
	id, symbol, state, detail string
	requested, shares         int64
	price                     string
}

// NewBoard draws the board of a batch's items on w.
func NewBoard(w io.Writer, reqs []account.LocateItem) *Board {
	b := &Board{w: w, byID: map[string]int{}}
	for _, r := range reqs {
		b.rows = append(b.rows, boardRow{symbol: r.Symbol, requested: r.Quantity, state: "checking"})
	}
	b.draw()
	return b
}

// Update shows one change: it changes a row and redraws.
func (b *Board) Update(u workflow.Update) {
	w := u.Workflow
	if w == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	i, ok := b.byID[w.ID]
	if !ok {
		// A workflow's first update claims the first unclaimed row of its
		// symbol (a watchlist may name a symbol twice).
		i = -1
		for j, r := range b.rows {
			if r.id == "" && r.symbol == w.Symbol {
				i = j
				break
			}
		}
		if i < 0 {
			return
		}
		b.byID[w.ID] = i
	}
	r := &b.rows[i]
	r.id, r.state, r.shares, r.price = w.ID, string(w.State), w.Quantity, LocatePrice(w.Price)
	switch {
	case !u.QueuedUntil.IsZero():
		r.detail = "queued: same-symbol spacing"
	case u.Offer != nil:
		r.price = Price4(u.Offer.Price)
		r.detail = "offer " + Money(u.Offer.Total)
	case w.State != states.Quoting:
		r.detail = u.Reason
	}
	b.draw()
}

// Close leaves the final table on screen: each row as its workflow ended
// (one that ended before it was followed sent no change).
func (b *Board) Close(final []*workflow.Workflow) {
	for _, w := range final {
		if w != nil {
			b.Update(workflow.Update{Workflow: w, Reason: w.Reason})
		}
	}
}

// draw rewrites the table over the one drawn before (cursor up, clear
// line: the two ANSI sequences every terminal understands).
func (b *Board) draw() {
	var sb strings.Builder
	if b.drawn > 0 {
		fmt.Fprintf(&sb, "\x1b[%dA", b.drawn)
	}
	line := func(cols ...any) {
		sb.WriteString("\x1b[2K")
		fmt.Fprintf(&sb, "%-8s %10v %-11s %10v %-8s %s\n", cols...)
	}
	line("SYMBOL", "REQUESTED", "STATE", "SHARES", "PRICE", "DETAIL")
	for _, r := range b.rows {
		shares := ""
		if r.shares > 0 {
			shares = fmt.Sprint(r.shares)
		}
		line(safetext.Cell(r.symbol), r.requested, r.state, shares, r.price, safetext.Cell(r.detail))
	}
	b.drawn = len(b.rows) + 1
	io.WriteString(b.w, sb.String())
}

// IsTerminalWriter says whether w is a terminal, where a table can be
// redrawn in place.
func IsTerminalWriter(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && IsTerminal(f)
}

// IsTerminal reports whether f is a terminal (a person typing): a character
// device that is not /dev/null.
func IsTerminal(f *os.File) bool {
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(st, null)
}
