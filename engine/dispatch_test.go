package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/states"
)

// BenchmarkNextQuotable measures the dispatcher's choice of the next quote
// with 1,000 queued requests, the first 500 of them on symbols that already
// have a quote open (so it must look past them).
func BenchmarkNextQuotable(b *testing.B) {
	start := time.Date(2026, 11, 26, 14, 0, 0, 0, time.UTC)
	l := &loop{
		e:    &Engine{clock: clock.NewFake(start), cfg: Config{QuoteSpacing: 30 * time.Second}},
		open: map[string]*Workflow{}, busy: map[string]int{}, byQuote: map[string]string{}, lastQuote: map[string]time.Time{},
	}
	for i := range 1000 {
		sym := fmt.Sprintf("S%04d", i)
		queued := &Workflow{ID: fmt.Sprintf("q%d", i), Kind: states.Locate, Symbol: sym, State: states.Requested}
		l.track(queued)
		l.queue = append(l.queue, queued.ID)
		if i < 500 {
			l.track(&Workflow{ID: "o" + sym, Kind: states.Locate, Symbol: sym, State: states.Quoting})
		}
	}
	b.ResetTimer()
	for b.Loop() {
		if id, _ := l.nextQuotable(); id != "q500" {
			b.Fatalf("next %q, want q500", id)
		}
	}
}
