package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
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
	// FormatNtfy is an ntfy-style push to a topic URL: the message as plain
	// text, with Title, Priority and Tags headers, and for an offer an
	// Actions header with one view button per answer link.
	FormatNtfy Format = "ntfy"
)

// Formats lists the formats, for messages and docs.
func Formats() []Format { return []Format{FormatJSON, FormatSlack, FormatNtfy} }

// Webhook is one receiver as configured: the environment variable that
// holds its URL, the body format it takes and the kinds of event it is
// told of.
type Webhook struct {
	URLEnv string
	Format Format
	// Events are the kinds it is told of; none means DefaultEvents. An
	// offer's event carries links that answer it for the account, so a
	// webhook is told of offers only when it asks (OfferWaiting).
	Events []Kind
}

// Wants reports whether w is told of events of kind k.
func (w Webhook) Wants(k Kind) bool {
	if len(w.Events) == 0 {
		return slices.Contains(DefaultEvents(), k)
	}
	return slices.Contains(w.Events, k)
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
		return fmt.Errorf("format %q: want %s, %s or %s", w.Format, FormatJSON, FormatSlack, FormatNtfy)
	}
	for _, k := range w.Events {
		if !slices.Contains(Kinds(), k) {
			return fmt.Errorf("event %q: want one of %s, %s, %s", k, JobFailed, FeeProblem, OfferWaiting)
		}
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
	// OfferWaiting: an offer waits on a person's answer (the policy leaves
	// it to one); the event carries the offer and its signed approve and
	// decline links.
	OfferWaiting Kind = "offer_waiting"
)

// Kinds lists the event kinds, for messages and docs.
func Kinds() []Kind { return []Kind{JobFailed, FeeProblem, OfferWaiting} }

// DefaultEvents are the kinds a webhook that names none is told of.
func DefaultEvents() []Kind { return []Kind{JobFailed, FeeProblem} }

// Event is one notification. Its JSON form is the body of a json webhook.
type Event struct {
	Kind Kind `json:"event"`
	// Job and JobKind name the job whose run raised it (a job's events).
	Job     string `json:"job,omitempty"`
	JobKind string `json:"jobKind,omitempty"`
	Account string `json:"account"`
	// Time is when the run ended, or when the offer started waiting.
	Time time.Time `json:"time"`
	// RunID is the run's id in the store's job_runs (a job's events).
	RunID int64 `json:"run,omitempty"`
	// Detail is the run's account of itself, as recorded, or the offer in
	// words.
	Detail string `json:"detail"`
	// WorkflowIDs are the workflows behind the failure or the problems, or
	// the offer's.
	WorkflowIDs []string `json:"workflowIds"`
	// Offer is the offer waiting, for OfferWaiting.
	Offer *Offer `json:"offer,omitempty"`
}

// Offer is an offer waiting on a person, with the signed links that answer
// it (package answerlink): each opens a page that asks to confirm, and
// answers once, until Deadline.
type Offer struct {
	WorkflowID string `json:"workflowId"`
	Symbol     string `json:"symbol"`
	Shares     int64  `json:"shares"`
	// PricePerShare (four decimals), Total (two: cents) and LocateType
	// (Locate, SingleUse) read as every other output gives them.
	PricePerShare string `json:"pricePerShare"`
	Total         string `json:"total"`
	LocateType    string `json:"locateType"`
	// Deadline is the last moment an answer is acted on.
	Deadline   time.Time `json:"deadline"`
	ApproveURL string    `json:"approveUrl"`
	DeclineURL string    `json:"declineUrl"`
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
	// Secret signs every post (see Sign; nil: posts go unsigned). At
	// least MinSecret bytes, from SecretEnv.
	Secret []byte
}

// SecretEnv holds the secret webhook posts are signed with.
const SecretEnv = "LOCATOR_WEBHOOK_SECRET"

// MinSecret is the shortest signing secret, in bytes (openssl rand
// -base64 32).
const MinSecret = 32

// SignatureHeader carries a post's signature, as Stripe's does:
// "t=UNIX,v1=HEX", where HEX is the HMAC-SHA256, keyed by the secret, of
// the decimal UNIX time, a dot and the body. A receiver recomputes it,
// compares in constant time, and refuses a time further than five
// minutes from its own clock (a replay of an old post;
// contrib/webhook-receiver): each attempt is signed anew, so a receiver
// that refuses older posts refuses only replays.
const SignatureHeader = "Locator-Signature"

// Sign is the SignatureHeader value of body signed with secret at t.
func Sign(secret, body []byte, t time.Time) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(ts + "."))
	mac.Write(body)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac.Sum(nil))
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
	Webhook
	name string // the variable's name: what logs show
	url  string
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
	if cfg.Secret != nil && len(cfg.Secret) < MinSecret {
		// Never quotes the secret.
		return nil, fmt.Errorf("%s is %d bytes: want at least %d random ones (openssl rand -base64 32)", SecretEnv, len(cfg.Secret), MinSecret)
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
		if !t.Wants(ev.Kind) {
			continue
		}
		select {
		case t.queue <- ev:
		default:
			n.log.Warn("notification dropped: the webhook's queue is full", "webhook", t.name, "event", string(ev.Kind), "job", ev.Job)
		}
	}
}

// DrainBound bounds the delivery of queued notifications at a daemon's
// exit not asked for by a signal: one webhook's three tries with their
// timeouts.
const DrainBound = time.Minute

// Drain is Close for a daemon's exit, ctx its run: what was queued is
// delivered within grace after a signal (ctx ended), else within
// DrainBound (each delivery is bounded by its timeout and retries too), so
// an unreachable webhook cannot hold the exit for its whole queue.
func (n *Notifier) Drain(ctx context.Context, grace time.Duration) {
	bound := DrainBound
	if ctx.Err() != nil {
		bound = grace
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), bound)
	defer cancel()
	n.Close(ctx)
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
	log := n.log.With("webhook", t.name, "format", string(t.Format), "event", string(ev.Kind), "job", ev.Job)
	msg, err := t.message(ev)
	if err != nil {
		log.Error("notification not sent: cannot encode it", "err", err)
		return
	}
	wait := n.cfg.Backoff
	for attempt := 0; ; attempt++ {
		status, err := n.post(t, msg)
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
func (n *Notifier) post(t *target, msg message) (int, error) {
	ctx, cancel := context.WithTimeout(n.ctx, n.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, bytes.NewReader(msg.body))
	if err != nil {
		return 0, err
	}
	for k, v := range msg.header {
		req.Header[k] = v
	}
	req.Header.Set("User-Agent", "locator-notify")
	if n.cfg.Secret != nil {
		req.Header.Set(SignatureHeader, Sign(n.cfg.Secret, msg.body, n.cfg.Clock.Now()))
	}
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
	return &target{Webhook: w, name: w.URLEnv, url: raw, hosts: []string{u.Host, u.Hostname()}, queue: make(chan Event, queueSize)}, nil
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

// message is one delivery's body and headers.
type message struct {
	body   []byte
	header http.Header
}

// message encodes ev in t's format.
func (t *target) message(ev Event) (message, error) {
	if ev.WorkflowIDs == nil {
		ev.WorkflowIDs = []string{}
	}
	jsonHeader := http.Header{"Content-Type": {"application/json"}}
	switch t.Format {
	case FormatSlack:
		body, err := json.Marshal(struct {
			Text string `json:"text"`
		}{slackText(ev)})
		return message{body, jsonHeader}, err
	case FormatNtfy:
		return ntfyMessage(ev), nil
	}
	body, err := json.Marshal(ev)
	return message{body, jsonHeader}, err
}

// title is what ev is about, in a line.
func title(ev Event) string {
	switch ev.Kind {
	case OfferWaiting:
		if o := ev.Offer; o != nil {
			return fmt.Sprintf("locate offer waits: %d %s at %s a share (%s)", o.Shares, o.Symbol, o.PricePerShare, o.Total)
		}
		return "locate offer waits"
	case FeeProblem:
		return fmt.Sprintf("fee problem found by job %s (%s)", ev.Job, ev.JobKind)
	}
	return fmt.Sprintf("job %s (%s) failed", ev.Job, ev.JobKind)
}

// offerText is the offer in words: the account, the workflow and the
// deadline, after the title.
func offerText(ev Event) string {
	o := ev.Offer
	return fmt.Sprintf("account %s, workflow %s: answer by %s", ev.Account, o.WorkflowID, o.Deadline.In(market.NewYork).Format("15:04:05")+" ET")
}

// slackText is the event as one Slack message; Slack reads &, < and > as
// markup, so they are escaped (an offer's links are Slack links, whose
// URLs hold none of them).
func slackText(ev Event) string {
	esc := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	if ev.Kind == OfferWaiting && ev.Offer != nil {
		o := ev.Offer
		return fmt.Sprintf(":bell: locator: %s\n%s\n<%s|Approve> · <%s|Decline>",
			esc.Replace(title(ev)), esc.Replace(offerText(ev)), o.ApproveURL, o.DeclineURL)
	}
	detail := ev.Detail
	if len(detail) > maxSlackDetail {
		detail = detail[:maxSlackDetail] + "..."
	}
	s := fmt.Sprintf(":warning: locator: %s on account %s at %s (run %d)\n%s",
		esc.Replace(title(ev)), esc.Replace(ev.Account), ev.Time.In(market.NewYork).Format("2006-01-02 15:04:05 MST"), ev.RunID, esc.Replace(detail))
	if len(ev.WorkflowIDs) > 0 {
		s += "\nworkflows: " + esc.Replace(strings.Join(ev.WorkflowIDs, ", "))
	}
	return s
}

// ntfyMessage is the event as an ntfy-style publish: the text as the body,
// its title, priority and tags as headers, and for an offer one view
// button per link (Actions: "view, LABEL, URL" joined by "; "). A view
// button opens the link's page, which asks before it answers; an http
// button would answer unseen. Header values are one line of text.
func ntfyMessage(ev Event) message {
	h := http.Header{"Content-Type": {"text/plain; charset=utf-8"}}
	oneLine := strings.NewReplacer("\r", " ", "\n", " ")
	h.Set("Title", oneLine.Replace("locator: "+title(ev)))
	var body string
	if ev.Kind == OfferWaiting && ev.Offer != nil {
		o := ev.Offer
		h.Set("Priority", "high")
		h.Set("Tags", "bell")
		h.Set("Actions", fmt.Sprintf("view, Approve, %s; view, Decline, %s", o.ApproveURL, o.DeclineURL))
		body = title(ev) + "\n" + offerText(ev)
	} else {
		h.Set("Priority", "default")
		h.Set("Tags", "warning")
		body = fmt.Sprintf("account %s at %s (run %d)\n%s", ev.Account, ev.Time.In(market.NewYork).Format("2006-01-02 15:04:05 MST"), ev.RunID, ev.Detail)
		if len(ev.WorkflowIDs) > 0 {
			body += "\nworkflows: " + strings.Join(ev.WorkflowIDs, ", ")
		}
	}
	return message{[]byte(body), h}
}
