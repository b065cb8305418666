package dashboard

import (
	"context"
	"os"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// Metrics holds the service's Prometheus series on a registry of its own,
// so nothing a library registers globally leaks into the scrape. It is made
// before the broker clients, which report their calls to ObserveCall.
type Metrics struct {
	reg         *prometheus.Registry
	calls       *prometheus.CounterVec
	limited     *prometheus.CounterVec
	offerAccept *prometheus.HistogramVec
	ended       *prometheus.CounterVec
}

// NewMetrics builds the registry with the counters that events feed; the
// gauges are read from the owners at each scrape (see Server).
func NewMetrics() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "locator_broker_calls_total",
			Help: "Broker API calls by the spec's route template and HTTP status (0: no answer), each attempt counted.",
		}, []string{"route", "status"}),
		limited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "locator_broker_rate_limited_total",
			Help: "Broker answers of 429 Too Many Requests, by route template; pacing keeps it at zero on a healthy run.",
		}, []string{"route"}),
		offerAccept: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "locator_offer_to_accept_seconds",
			Help:    "From the broker's offer (on its clock) to the accept being decided, per account; the window is 30 s.",
			Buckets: []float64{0.25, 0.5, 1, 2, 5, 10, 15, 20, 25, 30},
		}, []string{"account"}),
		ended: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "locator_workflows_ended_total",
			Help: "Workflows that reached a final state since the service started, by account and state.",
		}, []string{"account", "state"}),
	}
	m.reg.MustRegister(m.calls, m.limited, m.offerAccept, m.ended, collectors.NewGoCollector())
	// Every route shows its 429 count from the start, zero on a healthy
	// run, so an alert on it needs no absent() clause.
	for route := range brokerclient.RateLimits {
		m.limited.WithLabelValues(brokerclient.RouteTemplate(route))
	}
	return m
}

// ObserveCall counts one broker call attempt; pass it to
// brokerclient.WithObserver.
func (m *Metrics) ObserveCall(route string, status int, _ time.Duration) {
	m.calls.WithLabelValues(route, strconv.Itoa(status)).Inc()
	if status == 429 {
		m.limited.WithLabelValues(route).Inc()
	}
}

// observe counts what one workflow change tells: an accept decided (timed
// from the offer to the record of the decision, both on the service's
// clock, so the feed's own delay does not count), a workflow ended.
func (m *Metrics) observe(account string, u workflow.Update) {
	w := u.Workflow
	if w == nil {
		return
	}
	if w.State == states.Accepting && u.From == states.Offered && !w.OfferedAt.IsZero() {
		m.offerAccept.WithLabelValues(account).Observe(w.UpdatedAt.Sub(w.OfferedAt).Seconds())
	}
	if w.Terminal() {
		m.ended.WithLabelValues(account, string(w.State)).Inc()
	}
}

// gauges reads the owners' state at each scrape.
type gauges struct {
	s          *Server
	host       string // this machine, as leases name it
	workflows  *prometheus.Desc
	queue      *prometheus.Desc
	lease      *prometheus.Desc
	term       *prometheus.Desc
	ownedHere  *prometheus.Desc
	standbys   *prometheus.Desc
	pollAge    *prometheus.Desc
	feeProblem *prometheus.Desc
	waiting    *prometheus.Desc
	waited     *prometheus.Desc
	notServed  *prometheus.Desc
	notSince   *prometheus.Desc
	retryIn    *prometheus.Desc
}

func newGauges(s *Server) *gauges {
	host, _ := os.Hostname()
	return &gauges{
		s: s, host: host,
		workflows: prometheus.NewDesc("locator_workflows", "Unfinished workflows by account, kind and state.",
			[]string{"account", "kind", "state"}, nil),
		queue: prometheus.NewDesc("locator_quote_queue", "Locates waiting for their turn to quote (same-symbol spacing, one open quote per symbol, the quote route's pace).",
			[]string{"account"}, nil),
		lease: prometheus.NewDesc("locator_lease_held", "1 while the account's owner holds its lease.",
			[]string{"account"}, nil),
		term: prometheus.NewDesc("locator_lease_term", "The term of the account's owner: it grows by one at each change of owner (its increase counts them).",
			[]string{"account"}, nil),
		ownedHere: prometheus.NewDesc("locator_owned_here", "1 while this process owns the account, 0 while it follows (a standby) another.",
			[]string{"account"}, nil),
		standbys: prometheus.NewDesc("locator_standbys", "Daemons standing by to take the account over.",
			[]string{"account"}, nil),
		pollAge: prometheus.NewDesc("locator_last_poll_age_seconds", "Seconds since the account's history was last read successfully.",
			[]string{"account"}, nil),
		waiting: prometheus.NewDesc("locator_pacing_waiting", "Requests of the owner's key pair waiting for a token of the route's bucket (shared by the key pair's accounts), by priority (urgent: a sent quote or sell-back waits on it; normal; idle: an idle account's refresh).",
			[]string{"account", "route", "priority"}, nil),
		waited: prometheus.NewDesc("locator_pacing_waited_seconds", "How long the last request of the priority waited for a token of the route's bucket of the owner's key pair: an idle account's history and inventory reads stretch past the spec's idle cadence when many accounts share the key pair.",
			[]string{"account", "route", "priority"}, nil),
		notServed: prometheus.NewDesc("locator_account_not_served", "1 while a daemon that lists the account cannot serve it (its lease held by another process, its keys rejected, its engine stopped on an error), with why; it is tried again.",
			[]string{"account", "pid", "host", "reason"}, nil),
		notSince: prometheus.NewDesc("locator_account_not_served_seconds", "Seconds since the account a daemon lists was last served (while it is not).",
			[]string{"account"}, nil),
		retryIn: prometheus.NewDesc("locator_account_retry_in_seconds", "Seconds until the daemon tries again the account it cannot serve (0 or less: it is trying now).",
			[]string{"account"}, nil),
		feeProblem: prometheus.NewDesc("locator_fee_problems", "Locate fees and credits the ledger reconciliation says need a person (missing, wrong amount, unexplained, a day that differs), over the reconciliation window.",
			[]string{"account"}, nil),
	}
}

func (g *gauges) Describe(ch chan<- *prometheus.Desc) {
	ch <- g.workflows
	ch <- g.queue
	ch <- g.lease
	ch <- g.term
	ch <- g.ownedHere
	ch <- g.standbys
	ch <- g.pollAge
	ch <- g.feeProblem
	ch <- g.waiting
	ch <- g.waited
	ch <- g.notServed
	ch <- g.notSince
	ch <- g.retryIn
}

func (g *gauges) Collect(ch chan<- prometheus.Metric) {
	now := g.s.clk.Now()
	for _, st := range g.s.statuses(context.Background()) {
		acct := st.Account
		if ns := st.NotServed; ns != nil {
			ch <- prometheus.MustNewConstMetric(g.notServed, prometheus.GaugeValue, 1, acct, strconv.Itoa(ns.PID), ns.Host, ns.Reason)
			ch <- prometheus.MustNewConstMetric(g.notSince, prometheus.GaugeValue, now.Sub(ns.Since).Seconds(), acct)
			ch <- prometheus.MustNewConstMetric(g.retryIn, prometheus.GaugeValue, ns.Retry.Sub(now).Seconds(), acct)
		}
		count := map[states.Kind]map[states.State]int{}
		for _, k := range []states.Kind{states.Locate, states.CreditBack} {
			count[k] = map[states.State]int{}
			for _, st := range states.All(k) {
				if !states.Terminal(st) {
					count[k][st] = 0
				}
			}
		}
		for _, w := range st.Open {
			if count[w.Kind] != nil {
				count[w.Kind][w.State]++
			}
		}
		for k, byState := range count {
			for st, n := range byState {
				ch <- prometheus.MustNewConstMetric(g.workflows, prometheus.GaugeValue, float64(n), acct, string(k), string(st))
			}
		}
		ch <- prometheus.MustNewConstMetric(g.queue, prometheus.GaugeValue, float64(st.Queued), acct)
		ch <- prometheus.MustNewConstMetric(g.lease, prometheus.GaugeValue, boolValue(st.Held), acct)
		ch <- prometheus.MustNewConstMetric(g.term, prometheus.GaugeValue, float64(st.Owner.Term), acct)
		ch <- prometheus.MustNewConstMetric(g.ownedHere, prometheus.GaugeValue, boolValue(st.Owner.PID == os.Getpid() && st.Owner.Host == g.host), acct)
		ch <- prometheus.MustNewConstMetric(g.standbys, prometheus.GaugeValue, float64(len(st.Standbys)), acct)
		if at := st.LastPoll; !at.IsZero() {
			ch <- prometheus.MustNewConstMetric(g.pollAge, prometheus.GaugeValue, now.Sub(at).Seconds(), acct)
		}
		for _, p := range st.Broker.Pacing {
			for prio, n := range p.Waiting {
				ch <- prometheus.MustNewConstMetric(g.waiting, prometheus.GaugeValue, float64(n), acct, p.Route, prio)
			}
			for prio, d := range p.Waited {
				ch <- prometheus.MustNewConstMetric(g.waited, prometheus.GaugeValue, d, acct, p.Route, prio)
			}
		}
		if st.NotServed != nil {
			continue // no owner to ask for its fee check
		}
		if rep, err := g.s.reconcile(context.Background(), acct, g.s.feeDays); err == nil {
			ch <- prometheus.MustNewConstMetric(g.feeProblem, prometheus.GaugeValue, float64(rep.Problems()), acct)
		} else {
			g.s.log.Warn("fee problems not counted", "account", acct, "err", err)
		}
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
