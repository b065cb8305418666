package clock

import "runtime/metrics"

// Busy reports whether some goroutine of this process is ready to run but
// not running: work under way, whatever woke it (a channel, a socket, a
// timer), that a driver of virtual time waits for before it moves the
// clock (see RunWhen). A goroutine a fake timer or a channel woke is one
// until it runs (an event loop handed a history read, a worker handed an
// accept, a reader handed a stream push): on a loaded machine it may wait
// for a thread longer than RunWhen's quiet spell. Running goroutines are
// not counted: a thread looking for work counts as one too, and with a
// driver per day run side by side one nearly always is. The runtime's
// count is approximate: a driver moves time only once Busy has said no for
// a quiet spell, as RunWhen does.
func Busy() bool {
	s := []metrics.Sample{{Name: "/sched/goroutines/runnable:goroutines"}}
	metrics.Read(s)
	return s[0].Value.Kind() == metrics.KindUint64 && s[0].Value.Uint64() > 0
}
