package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/market"
)

// Format is the shape of a webhook's body.
type Format string

// Formats.
const (
	// FormatJSON is the Event as a JSON object (see Event's fields).
	FormatJSON Format = "json"
	// FormatSlack is {"text": "..."}, what Slack's incoming webhooks (and
	// the chat tools that copy them) take.
	FormatSlack Format = "slack"
)

// Formats lists the formats, for messages and docs.
func Formats() []Format { return []Format{FormatJSON, FormatSlack} }

// Webhook is one receiver as configured: the environment variable that
// holds its URL, and the body format it takes.
type Webhook struct {
	URLEnv string
	Format Format
}

// envName is what URLEnv must look like: a variable's name, so a URL pasted
// there by mistake is refused without being echoed.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Check reports what is wrong with w, without quoting a value that might be
// the secret itself.
func (w Webhook) Check() error {
	if !envName.MatchString(w.URLEnv) {
		return errors.New("urlEnv must name an environment variable (letters, digits and '_'), not hold the URL: a webhook URL is a secret")
	}
	if !slices.Contains(Formats(), w.Format) {
		return fmt.Errorf("format %q: want %s or %s", w.Format, FormatJSON, FormatSlack)
	}
	return nil
}

// Kind is what happened.
type Kind string

// Event kinds.
const (
	// JobFailed: a scheduled job's run did not reach its goal.
	JobFailed Kind = "job_failed"
	// FeeProblem: reconciliation found a locate fee missing, of the wrong
	// amount, or charged with no locate behind it.
	FeeProblem Kind = "fee_problem"
)

// Event is one notification. Its JSON form is the body of a json webhook.
type Event struct {
	Kind Kind `json:"event"`
	// Job and JobKind name the job whose run raised it.
	Job     string `json:"job"`
	JobKind string `json:"jobKind"`
	Account string `json:"account"`
	// Time is when the run ended.
	Time time.Time `json:"time"`
	// RunID is the run's id in the store's job_runs.
	RunID int64 `json:"run"`
	// Detail is the run's account of itself, as recorded.
	Detail string `json:"detail"`
	// WorkflowIDs are the workflows behind the failure or the problems.
	WorkflowIDs []string `json:"workflowIds"`
}

// Defaults for Config's zero values.
const (
	DefaultTimeout = 10 * time.Second
	DefaultRetries = 2
	DefaultBackoff = 2 * time.Second
	// queueSize bounds what waits per webhook; past it events are dropped
	// (and logged) rather than blocking the job that raised them.
	queueSize = 64
	// maxSlackDetail keeps a Slack message well inside what it shows.
	maxSlackDetail = 3000
)

// Config configures New.
type Config struct {
	Webhooks []Webhook
	// LookupEnv resolves URLEnv (os.LookupEnv): the package reads no
	// environment itself.
	LookupEnv func(string) (string, bool)
	// Clock times the waits between retries (nil: the wall clock).
	Clock clock.Clock
	// Logger receives a line per delivery given up or dropped, and debug
	// lines per delivery (nil: none). It never sees a URL.
	Logger *slog.Logger
	// HTTPClient posts (nil: a client that follows no redirect).
	HTTPClient *http.Client
	// Timeout bounds each attempt; it is wall time, as the network's is
	// (zero: DefaultTimeout).
	Timeout time.Duration
	// Retries after a failed attempt (zero: DefaultRetries; negative: none).
	Retries int
	// Backoff is the wait before the first retry, doubled for each next
	// (zero: DefaultBackoff).
	Backoff time.Duration
}

// Notifier posts events to the configured webhooks. The zero of *Notifier,
// nil, notifies nobody, so callers need no check.
type Notifier struct {
	cfg     Config
	log     *slog.Logger
	targets []*target

	ctx    context.Context // ends when Close gives up waiting
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.RWMutex
	closed bool
}

// target is a resolved webhook with its queue.
type target struct {
	name   string // the variable's name: what logs show
	format Format
	url    string
	// hosts are the URL's host with its port and without (dial and DNS
	// errors name the bare host name), longest first.
	hosts []string
	queue chan Event
}

// New resolves each webhook's URL and starts its worker. A variable that is
// unset, empty or holds an address brokerclient.CheckAddress refuses (plain
// http beyond loopback, say) is an error naming the variable; the latter
// errors.Is brokerclient.ErrAddress.
func New(cfg Config) (*Notifier, error) {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.HTTPClient == nil {
		// A redirect would re-send the event elsewhere, as a GET: a
		// webhook that moves is a configuration to fix.
		cfg.HTTPClient = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	switch {
	case cfg.Retries == 0:
		cfg.Retries = DefaultRetries
	case cfg.Retries < 0:
		cfg.Retries = 0
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = DefaultBackoff
	}
	n := &Notifier{cfg: cfg, log: cfg.Logger}
	if n.log == nil {
		n.log = slog.New(slog.DiscardHandler)
	}
	for i, w := range cfg.Webhooks {
		if err := w.Check(); err != nil {
			return nil, fmt.Errorf("webhook %d: %w", i+1, err) // not its URLEnv: Check refused it
		}
		var raw string
		if cfg.LookupEnv != nil {
			raw, _ = cfg.LookupEnv(w.URLEnv)
		}
		if raw == "" {
			return nil, fmt.Errorf("webhook %s: the environment variable is not set", w.URLEnv)
		}
		t, err := newTarget(w, raw)
		if err != nil {
			return nil, err
		}
		n.targets = append(n.targets, t)
	}
	n.ctx, n.cancel = context.WithCancel(context.Background())
	for _, t := range n.targets {
		n.wg.Add(1)
		go n.work(t)
	}
	return n, nil
}

// Notify queues ev for every webhook and returns at once. After Close, or
// with a webhook's queue full, the event is dropped (and logged).
func (n *Notifier) Notify(ev Event) {
	if n == nil {
		return
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	if n.closed {
		n.log.Warn("notification dropped: the notifier is closed", "event", string(ev.Kind), "job", ev.Job)
		return
	}
	for _, t := range n.targets {
		select {
		case t.queue <- ev:
		default:
			n.log.Warn("notification dropped: the webhook's queue is full", "webhook", t.name, "event", string(ev.Kind), "job", ev.Job)
		}
	}
}

// Close stops taking events and waits until the queued ones are delivered
// or given up, or until ctx ends, when deliveries in flight are abandoned.
func (n *Notifier) Close(ctx context.Context) {
	if n == nil {
		return
	}
	n.mu.Lock()
	if !n.closed {
		n.closed = true
		for _, t := range n.targets {
			close(t.queue)
		}
	}
	n.mu.Unlock()
	done := make(chan struct{})
	go func() {
		n.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		n.cancel()
		<-done
	}
	n.cancel()
}

func (n *Notifier) work(t *target) {
	defer n.wg.Done()
	for ev := range t.queue {
		n.deliver(t, ev)
	}
}

// deliver posts ev to t, retrying network errors, 429 and 5xx with a
// doubling backoff; a 2xx ends it, any other status gives up at once.
func (n *Notifier) deliver(t *target, ev Event) {
	log := n.log.With("webhook", t.name, "format", string(t.format), "event", string(ev.Kind), "job", ev.Job)
	body, err := t.body(ev)
	if err != nil {
		log.Error("notification not sent: cannot encode it", "err", err)
		return
	}
	wait := n.cfg.Backoff
	for attempt := 0; ; attempt++ {
		status, err := n.post(t, body)
		if err == nil && status/100 == 2 {
			log.Debug("notification sent", "status", status, "attempts", attempt+1)
			return
		}
		why := fmt.Sprintf("HTTP %d", status)
		if err != nil {
			why = t.redact(err)
		}
		retryable := err != nil || status == http.StatusTooManyRequests || status >= 500
		if !retryable || attempt == n.cfg.Retries {
			log.Warn("notification not delivered", "reason", why, "attempts", attempt+1)
			return
		}
		log.Debug("notification attempt failed; retrying", "reason", why, "wait", wait)
		if clock.Sleep(n.ctx, n.cfg.Clock, wait) != nil {
			log.Warn("notification abandoned at shutdown", "reason", why, "attempts", attempt+1)
			return
		}
		wait *= 2
	}
}

// post makes one attempt and returns the response's status.
func (n *Notifier) post(t *target, body []byte) (int, error) {
	ctx, cancel := context.WithTimeout(n.ctx, n.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "locator-notify")
	resp, err := n.cfg.HTTPClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // drain, so the connection is reused
	return resp.StatusCode, nil
}

// newTarget is webhook w posting to raw, its URL, which must pass the
// client's address rule (https beyond loopback: an event names accounts).
func newTarget(w Webhook, raw string) (*target, error) {
	u, err := brokerclient.CheckAddress(raw, brokerclient.WebhookAddress)
	if err != nil {
		return nil, fmt.Errorf("webhook %s: %w", w.URLEnv, err)
	}
	return &target{name: w.URLEnv, format: w.Format, url: raw, hosts: []string{u.Host, u.Hostname()}, queue: make(chan Event, queueSize)}, nil
}

// redact turns a transport error into text without the URL or its host:
// net/http quotes the whole URL, and dial errors the host.
func (t *target) redact(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	s := strings.ReplaceAll(err.Error(), t.url, "["+t.name+"]")
	for _, h := range t.hosts {
		s = strings.ReplaceAll(s, h, "["+t.name+" host]")
	}
	return s
}

// body encodes ev in t's format.
func (t *target) body(ev Event) ([]byte, error) {
	if ev.WorkflowIDs == nil {
		ev.WorkflowIDs = []string{}
	}
	if t.format == FormatSlack {
		return json.Marshal(struct {
			Text string `json:"text"`
		}{slackText(ev)})
	}
	return json.Marshal(ev)
}

// slackText is the event as one Slack message; Slack reads &, < and > as
// markup, so they are escaped.
func slackText(ev Event) string {
	esc := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	what := fmt.Sprintf("job %s (%s) failed", ev.Job, ev.JobKind)
	if ev.Kind == FeeProblem {
		what = fmt.Sprintf("fee problem found by job %s (%s)", ev.Job, ev.JobKind)
	}
	detail := ev.Detail
	if len(detail) > maxSlackDetail {
		detail = detail[:maxSlackDetail] + "..."
	}
	s := fmt.Sprintf(":warning: locator: %s on account %s at %s (run %d)\n%s",
		esc.Replace(what), esc.Replace(ev.Account), ev.Time.In(market.NewYork).Format("2006-01-02 15:04:05 MST"), ev.RunID, esc.Replace(detail))
	if len(ev.WorkflowIDs) > 0 {
		s += "\nworkflows: " + esc.Replace(strings.Join(ev.WorkflowIDs, ", "))
	}
	return s
}
