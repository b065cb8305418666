package clock

import "runtime/metrics"

// Quiet tells a driver of virtual time whether the goroutines of this
// process are all asleep: none ready to run and none in a system call,
// beyond the few that always are. Its zero value is ready to use; one
// driver keeps one.
//
// A goroutine ready to run but not running is work under way, whatever
// woke it (a channel, a socket, a timer), that a driver waits for before
// it moves the clock (see RunWhen): one a fake timer or a channel woke is
// one until it runs (an event loop handed a history read, a worker handed
// an accept, a reader handed a stream push), and on a loaded machine it
// may wait for a thread longer than RunWhen's quiet spell. Running
// goroutines are not counted: a thread looking for work counts as one
// too, and with a driver per day run side by side one nearly always is.
//
// A goroutine in a system call is work under way too: an fsync of
// SQLite's commit, or any file I/O, neither runs Go code nor waits for a
// thread, and on a machine whose disk is busy it may last longer than the
// quiet spell while its goroutine goes on to hand an accept over or send
// it. Virtual time that moved meanwhile ran an offer's window out under an
// approval already taken (generated days 350, 644 and 984 of 60
// operations, a thousand days run beside other builds). Some goroutines
// are in one for good (os/signal's receiver, once signal.Notify was
// called): the fewest seen at once is taken as theirs, and only those
// beyond it count.
//
// The runtime's counts are approximate: a driver moves time only once
// Busy has said no for a quiet spell, as RunWhen does.
type Quiet struct {
	floor uint64 // the fewest goroutines seen in a system call at once
	seen  bool
}

// Busy reports whether a goroutine is ready to run, or one more than
// always is sits in a system call.
func (q *Quiet) Busy() bool {
	s := []metrics.Sample{{Name: "/sched/goroutines/runnable:goroutines"}, {Name: "/sched/goroutines/not-in-go:goroutines"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return false
	}
	runnable, inCalls := s[0].Value.Uint64(), s[1].Value.Uint64()
	if !q.seen || inCalls < q.floor {
		q.floor, q.seen = inCalls, true
	}
	return runnable > 0 || inCalls > q.floor
}
