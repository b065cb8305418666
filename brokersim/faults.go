package brokersim

import (
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"time"
)

// Faults configures fault injection on the broker routes. It is off by
// default. Script steps are consumed first, in order; then each request
// matching Match draws one of the rates.
type Faults struct {
	// Match limits random faults to requests whose "METHOD /path" contains it.
	Match string `json:"match,omitempty"`
	// Rates are fractions of matching requests, between 0 and 1, summing to at most 1.
	Rate500        float64 `json:"rate500,omitempty"`
	Rate503        float64 `json:"rate503,omitempty"`
	Rate429        float64 `json:"rate429,omitempty"`
	RateReset      float64 `json:"rateReset,omitempty"`      // connection reset before processing
	RateResetAfter float64 `json:"rateResetAfter,omitempty"` // processed, then the connection is reset
	RateDelay      float64 `json:"rateDelay,omitempty"`
	// Delay is how long a delayed request waits (wall time) before processing.
	Delay Duration `json:"delay,omitempty"`
	// Script forces the next Count matching requests to get Kind.
	Script []FaultStep `json:"script,omitempty"`
	// RatePushLoss is the fraction, between 0 and 1, of the portfolio
	// stream's pushes (order and position updates) never sent, while the
	// connection stays up, as a broker or a network losing messages
	// would: the spec promises no delivery, so a client must still learn
	// an order's fate by reading it. Drawn from a stream of the seed's own.
	RatePushLoss float64 `json:"ratePushLoss,omitempty"`
}

// FaultStep forces a fault on the next Count requests matching Match.
type FaultStep struct {
	Match string `json:"match"`
	// Kind is one of 500, 503, 429, reset, reset-after, delay, or 403: the
	// network edge's refusal with an HTML body (spec: "Partner token
	// endpoint failures"), which only a script injects.
	Kind  string `json:"kind"`
	Count int    `json:"count"`
}

type faultKind int

const (
	faultNone faultKind = iota
	fault500
	fault503
	fault429
	faultReset
	faultResetAfter
	faultDelay
	fault403
)

var faultKinds = map[string]faultKind{
	"500": fault500, "503": fault503, "429": fault429,
	"reset": faultReset, "reset-after": faultResetAfter, "delay": faultDelay, "403": fault403,
}

func (f Faults) validate() error {
	sum := 0.0
	for _, r := range []float64{f.Rate500, f.Rate503, f.Rate429, f.RateReset, f.RateResetAfter, f.RateDelay} {
		if r < 0 || r > 1 {
			return fmt.Errorf("fault rates must be between 0 and 1")
		}
		sum += r
	}
	if f.RatePushLoss < 0 || f.RatePushLoss > 1 {
		return fmt.Errorf("the push loss rate must be between 0 and 1")
	}
	if sum > 1 {
		return fmt.Errorf("fault rates add up to %.2f, above 1", sum)
	}
	for _, st := range f.Script {
		if _, ok := faultKinds[st.Kind]; !ok {
			return fmt.Errorf("fault kind %q: want one of 500, 503, 429, reset, reset-after, delay, 403", st.Kind)
		}
		if st.Count < 1 {
			return fmt.Errorf("fault step %q needs count >= 1", st.Kind)
		}
	}
	return nil
}

type faultState struct {
	cfg     Faults
	rng     *rand.Rand
	pushRng *rand.Rand // RatePushLoss's draws
}

// pushLost draws whether one stream push is lost (Faults.RatePushLoss);
// under the simulator's lock.
func (s *Sim) pushLost() bool {
	f := &s.faults
	if f.cfg.RatePushLoss == 0 {
		return false
	}
	if f.pushRng == nil {
		f.pushRng = rand.New(rand.NewPCG(s.sc.Seed, 0x9054))
	}
	return f.pushRng.Float64() < f.cfg.RatePushLoss
}

// drawFaultLocked decides the fault, if any, for one broker request.
func (s *Sim) drawFaultLocked(r *http.Request) faultKind {
	f := &s.faults
	line := r.Method + " " + r.URL.Path
	for i := range f.cfg.Script {
		st := &f.cfg.Script[i]
		if st.Count > 0 && strings.Contains(line, st.Match) {
			st.Count--
			return faultKinds[st.Kind]
		}
	}
	c := f.cfg
	if c.Rate500+c.Rate503+c.Rate429+c.RateReset+c.RateResetAfter+c.RateDelay == 0 || !strings.Contains(line, c.Match) {
		return faultNone
	}
	if f.rng == nil {
		f.rng = rand.New(rand.NewPCG(s.sc.Seed, 0xfa017))
	}
	x := f.rng.Float64()
	for _, k := range []struct {
		p    float64
		kind faultKind
	}{{c.Rate500, fault500}, {c.Rate503, fault503}, {c.Rate429, fault429}, {c.RateReset, faultReset}, {c.RateResetAfter, faultResetAfter}, {c.RateDelay, faultDelay}} {
		if x < k.p {
			return k.kind
		}
		x -= k.p
	}
	return faultNone
}

// delay holds a delayed request for the configured wall time, or until the
// client goes away.
func (s *Sim) delay(r *http.Request) {
	s.mu.Lock()
	d := time.Duration(s.faults.cfg.Delay)
	s.mu.Unlock()
	if d <= 0 {
		d = 2 * time.Second
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
	}
}

// resetConn drops the connection with a TCP reset and no response.
func resetConn(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler) // HTTP/2 or a recorder: abort the stream instead
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	conn.Close()
}
