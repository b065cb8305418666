package clock

import (
	"runtime/metrics"
	"time"
)

// Quiet tells a driver of virtual time whether the goroutines of this
// process are all asleep: none ready to run and none in a system call,
// beyond the few that always are. Its zero value is ready to use; one
// driver keeps one.
//
// A goroutine ready to run but not running is work under way, whatever
// woke it (a channel, a socket, a timer), that a driver waits for before
// it moves the clock (see Drive): one a fake timer or a channel woke is
// one until it runs (an event loop handed a history read, a worker handed
// an accept, a reader handed a stream push), and on a loaded machine it
// may wait for a thread longer than Drive's quiet spell. Running
// goroutines are not counted: a thread looking for work counts as one
// too, and with several tests or days at work in a process one nearly
// always is.
//
// A goroutine in a system call is work under way too: an fsync of
// SQLite's commit, or any file I/O, neither runs Go code nor waits for a
// thread, and on a machine whose disk is busy it may last longer than the
// quiet spell while its goroutine goes on to hand an accept over or send
// it. Virtual time that moved meanwhile ran an offer's window out under an
// approval already taken (generated days 350, 644 and 984 of 60
// operations, a thousand days run beside other builds). Some goroutines
// are in one for good (os/signal's receiver, once signal.Notify was
// called; a child process's waiter, as a browser under test's): the
// fewest seen at once over the last full second (foreverCall) is taken
// as theirs, and only those beyond it count. A system call longer than
// that is taken for one of them until it returns.
//
// The runtime's counts are approximate: a driver moves time only once
// Busy has said no for a quiet spell, as Drive does.
type Quiet struct {
	floor uint64    // the fewest goroutines in a system call at once, over the last full window
	least uint64    // the fewest seen so far in the window under way
	since time.Time // when the window under way began; zero before the first look
}

// foreverCall is how long a goroutine sits in a system call before Quiet
// takes it for one in it for good: far longer than a commit's fsync on a
// busy disk.
const foreverCall = time.Second

// Busy reports whether a goroutine is ready to run, or one more than
// always is sits in a system call.
func (q *Quiet) Busy() bool {
	s := []metrics.Sample{{Name: "/sched/goroutines/runnable:goroutines"}, {Name: "/sched/goroutines/not-in-go:goroutines"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return false
	}
	runnable, inCalls := s[0].Value.Uint64(), s[1].Value.Uint64()
	now := time.Now()
	switch {
	case q.since.IsZero():
		q.floor, q.least, q.since = inCalls, inCalls, now
	case now.Sub(q.since) >= foreverCall:
		q.floor, q.least, q.since = min(q.least, inCalls), inCalls, now
	default:
		q.least = min(q.least, inCalls)
		q.floor = min(q.floor, inCalls)
	}
	return runnable > 0 || inCalls > q.floor
}
