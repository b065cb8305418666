package console

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/safetext"
)

// What a person watching a terminal sees while the command waits: the
// seconds an offer has left, counting down in the prompt, and a spinner
// while a quote is queued behind the broker's same-symbol spacing or a
// credit-back is on its way. Each is one line redrawn in place every
// second; without a terminal the line is printed once, since a log file
// wants no carriage returns.

// spinFrames are the spinner's frames, one a tick.
var spinFrames = []string{"|", "/", "-", `\`}

// tickEvery is how often a ticking line is redrawn.
const tickEvery = time.Second

// ticker redraws one line in place on each tick of its clock until stop.
type ticker struct {
	stopOnce sync.Once
	stopc    chan struct{}
	done     chan struct{}
}

// startTicker draws line(now, n) at once, then again every tickEvery of clk
// (n counts the ticks), each time over the last: carriage return, erase
// the line, draw.
func startTicker(w io.Writer, clk clock.Clock, line func(now time.Time, n int) string) *ticker {
	t := &ticker{stopc: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(t.done)
		for n := 0; ; n++ {
			fmt.Fprint(w, "\r\x1b[K"+line(clk.Now(), n))
			tm := clk.NewTimer(tickEvery)
			select {
			case <-t.stopc:
				tm.Stop()
				return
			case <-tm.C():
			}
		}
	}()
	return t
}

// stop ends the ticking and returns once the line is no longer drawn; erase
// also clears it (a spinner), otherwise it stays (an answered prompt).
func (t *ticker) stop(w io.Writer, erase bool) {
	t.stopOnce.Do(func() {
		close(t.stopc)
		<-t.done
		if erase {
			fmt.Fprint(w, "\r\x1b[K")
		}
	})
}

// Display is a command's progress on stderr: lines that stay, and at most
// one spinner below them, erased before each new line.
type Display struct {
	w    io.Writer
	live bool // a terminal: lines may tick in place
	clk  clock.Clock

	mu     sync.Mutex
	spin   *ticker
	starts map[string]time.Time // by workflow id: when the display first saw it
}

// NewDisplay shows progress on w, ticking in place when live (a
// terminal), on clk.
func NewDisplay(w io.Writer, live bool, clk clock.Clock) *Display {
	return &Display{w: w, live: live, clk: clk}
}

// Live reports whether the display is a terminal, where a person watches.
func (d *Display) Live() bool { return d.live }

// since is when the display first asked about workflow id: a spinner's
// seconds count from there across the workflow's steps.
func (d *Display) since(id string) time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.starts == nil {
		d.starts = map[string]time.Time{}
	}
	if _, ok := d.starts[id]; !ok {
		d.starts[id] = d.clk.Now()
	}
	return d.starts[id]
}

// Println prints a line that stays, under the spinner's erased line.
func (d *Display) Println(line string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stopSpinLocked()
	fmt.Fprintln(d.w, safetext.Terminal(line))
}

// spinner shows text (with its elapsed seconds) after a turning frame until
// the next line or close; only on a terminal.
func (d *Display) spinner(text func(now time.Time) string) {
	if !d.live {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stopSpinLocked()
	d.spin = startTicker(d.w, d.clk, func(now time.Time, n int) string {
		return spinFrames[n%len(spinFrames)] + " " + text(now)
	})
}

// Close erases the spinner, if one turns.
func (d *Display) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stopSpinLocked()
}

func (d *Display) stopSpinLocked() {
	if d.spin != nil {
		d.spin.stop(d.w, true)
		d.spin = nil
	}
}

// countdown shows question, in which left is the time until deadline: on a
// terminal redrawn each second, else printed once. The returned stop ends
// the ticking and leaves the line as it was.
func countdown(w io.Writer, live bool, clk clock.Clock, deadline time.Time, question func(left time.Duration) string) (stop func()) {
	left := func(now time.Time) time.Duration { return max(deadline.Sub(now), 0).Round(time.Second) }
	if !live {
		fmt.Fprint(w, question(left(clk.Now())))
		return func() {}
	}
	t := startTicker(w, clk, func(now time.Time, _ int) string { return question(left(now)) })
	return func() { t.stop(w, false) }
}
