package main

import (
	"strings"
	"testing"

	"github.com/locatorhq/locator/internal/console"
)

// The engine says when a locate is queued behind the same-symbol spacing,
// and the command shows it at once rather than nothing for half a minute
// (here as its JSON event), whether this process owns the account or hands
// the locate to the owner, then withdraws it on Ctrl-C: nothing more was
// quoted, exit 130.
func TestQueuedQuoteIsShown(t *testing.T) {
	t.Parallel()
	// At a person's speed: the command is interrupted inside a window of
	// the broker's.
	bothWays(t, personSpeed, func(t *testing.T, b *cliBundle) {
		if code, out, errOut := b.MustRunMain(t, nil, "locate", "HTBX", "300", "--max-price", "0.02"); code != console.ExitOK {
			t.Fatalf("first locate: exit %d\n%s\n%s", code, out, errOut)
		}
		quotes := b.quotes()
		r := b.startMain(t, "locate", "HTBX", "600", "--max-price", "0.02", "--json")
		waitFor(t, "the queued event", func() bool { return strings.Contains(r.stdout.String(), `"event":"queued"`) })
		if code := r.stop(t); code != console.ExitInterrupted {
			t.Errorf("exit %d after the interrupt, want 130\n%s", code, r.stderr)
		}
		for _, o := range jsonLines(t, r.stdout.String()) {
			if o["event"] == "queued" && (o["symbol"] != "HTBX" || o["until"] == nil) {
				t.Errorf("queued event %v", o)
			}
		}
		if n := b.quotes(); n != quotes {
			t.Errorf("%d more quotes sent", n-quotes)
		}
	})
}
