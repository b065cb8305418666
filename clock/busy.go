package clock

import (
	"runtime/metrics"
	"sync/atomic"
)

// busyMetrics are the runtime's counts of goroutines at work: running, ready
// to run, or in a system call (a database's write to its file, say).
var busyMetrics = []string{
	"/sched/goroutines/running:goroutines",
	"/sched/goroutines/runnable:goroutines",
	"/sched/goroutines/not-in-go:goroutines",
}

// busyCallers counts the drivers of RunWhen handling a tick (Busy's
// callers among them): days run side by side each have a driver, which is
// not their work.
var busyCallers atomic.Int64

// Busy reports whether some goroutine of this process, other than its
// caller and the drivers of RunWhen handling a tick, is running, ready to run or in a system call: work
// under way, whatever woke it (a channel, a socket, a timer), that a driver
// of virtual time waits for before it moves the clock (see RunWhen). A
// goroutine a fake timer woke is one, and so is an event loop handling
// what a request or a reply handed it, or a reader taking a stream push.
// The runtime's counts are approximate (a thread looking for work counts
// as running for a moment): a driver moves time only once Busy has said no
// for a quiet spell, as RunWhen does, and asks again otherwise.
func Busy() bool {
	s := make([]metrics.Sample, len(busyMetrics))
	for i, name := range busyMetrics {
		s[i].Name = name
	}
	metrics.Read(s)
	var n int64
	for _, x := range s {
		if x.Value.Kind() == metrics.KindUint64 {
			n += int64(x.Value.Uint64())
		}
	}
	return n > max(busyCallers.Load(), 1) // the caller runs, a driver or not
}
