package brokerclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/locatorhq/locator/clock"
)

// DefaultHeaderPrefix is the key-header prefix of the public service that
// publishes this interface (TZ-API-KEY-ID, TZ-API-SECRET-KEY).
const DefaultHeaderPrefix = "TZ"

// maxErrorBody caps how much of an error body is read into an error value.
const maxErrorBody = 64 << 10

// maxAnswer bounds every answer read from the broker: a REST success body
// and a stream message (what it may decode into is bounded too: see
// answerRows). The largest legitimate ones are a cash ledger page
// at the service's 10,000-row maximum (about 200 bytes a row as sent,
// under 1 KiB with the longest notes: 2 to 10 MiB) and a busy day's locate
// history (10,000 locates at about 300 bytes: 3 MiB); 64 MiB leaves six
// times the widest of them. Past it the client stops reading and returns
// an *AnswerTooLargeError (ErrAnswerTooLarge), so a broken or hostile
// broker cannot take the process's memory.
const maxAnswer = 64 << 20

// maxTokenAnswer bounds a partner token answer (a few KiB of JWTs): it is
// the most golang.org/x/oauth2 reads of one, so a longer answer is refused
// as too large rather than parsed cut short.
const maxTokenAnswer = 1 << 20

// Client talks to the broker's REST interface. It is safe for concurrent use;
// every goroutine shares its per-route token buckets, so together they stay
// inside the spec's rate limits.
type Client struct {
	baseURL   *url.URL
	streamURL *url.URL // nil: derived from baseURL
	http      *http.Client
	keyID     string
	secret    string
	tokens    TokenSource
	partner   *PartnerConfig
	// partnerTok is tokens when they are partner tokens the client renews.
	partnerTok *partnerTokens
	prefix     string
	userAgent  string
	clock      clock.Clock
	logger     *slog.Logger
	pacer      *pacer
	offset     clockOffset
	observe    func(route string, status int, d time.Duration)

	rngMu sync.Mutex
	rng   *rand.Rand

	common service

	// Accounts reads accounts and profit and loss.
	Accounts *AccountsService
	// Orders places, reads and cancels orders, and reads routes and easy-to-borrow.
	Orders *OrdersService
	// Positions reads open, closed and historical positions.
	Positions *PositionsService
	// Locates runs the short-locate endpoints.
	Locates *LocatesService
	// Ledger reads the cash ledger.
	Ledger *LedgerService
	// Partner signs a user in through partner OAuth and renews the tokens.
	Partner *PartnerService
	// Streams dials the P&L and portfolio WebSocket streams.
	Streams *StreamsService
}

type service struct{ client *Client }

// TokenSource supplies a bearer token for the partner OAuth flow; when set,
// requests carry Authorization: Bearer instead of the key headers.
type TokenSource interface {
	Token(ctx context.Context) (string, error)
}

// Option configures a Client.
type Option func(*Client) error

// WithBaseURL sets the REST base address, for example the simulator's; it
// must pass CheckAddress as a BrokerAddress (https beyond loopback).
func WithBaseURL(raw string) Option {
	return func(c *Client) error {
		u, err := CheckAddress(strings.TrimSuffix(raw, "/"), BrokerAddress)
		if err != nil {
			return err
		}
		c.baseURL = u
		return nil
	}
}

// WithCredentials sets the API key pair. The secret is only ever written to
// the request header.
func WithCredentials(keyID, secret string) Option {
	return func(c *Client) error {
		if keyID == "" || secret == "" {
			return errors.New("credentials: key id and secret are both required")
		}
		c.keyID, c.secret = keyID, secret
		return nil
	}
}

// WithTokenSource authenticates with partner OAuth bearer tokens.
func WithTokenSource(ts TokenSource) Option {
	return func(c *Client) error { c.tokens = ts; return nil }
}

// WithHeaderPrefix sets the key-header prefix (default "TZ").
func WithHeaderPrefix(p string) Option {
	return func(c *Client) error {
		if p == "" || strings.ContainsAny(p, " :\r\n") {
			return fmt.Errorf("header prefix %q is not a header-name token", p)
		}
		c.prefix = p
		return nil
	}
}

// WithHTTPClient sets the *http.Client used for every call. The client
// uses a copy of it that follows no redirect (see RedirectError).
func WithHTTPClient(h *http.Client) Option {
	return func(c *Client) error { c.http = h; return nil }
}

// WithUserAgent sets the User-Agent header; the spec asks servers to send a
// stable, identifying one.
func WithUserAgent(ua string) Option { return func(c *Client) error { c.userAgent = ua; return nil } }

// WithClock sets the clock used for pacing and back-off waits.
func WithClock(clk clock.Clock) Option { return func(c *Client) error { c.clock = clk; return nil } }

// WithLogger sets the structured logger (default: discard).
func WithLogger(l *slog.Logger) Option { return func(c *Client) error { c.logger = l; return nil } }

// WithObserver has observe called after every attempt of every call, with
// the spec's route template of the call (RouteTemplate, never the path with
// its ids, so a metric keeps a bounded set of labels), the HTTP status (0
// when no answer came) and how long the attempt took on the client's clock.
// A 429 retried is one attempt; observe must be quick and safe for
// concurrent use.
func WithObserver(observe func(route string, status int, d time.Duration)) Option {
	return func(c *Client) error { c.observe = observe; return nil }
}

// WithRandSeed makes back-off jitter repeatable (tests).
func WithRandSeed(seed uint64) Option {
	return func(c *Client) error { c.rng = rand.New(rand.NewPCG(seed, seed+1)); return nil }
}

// WithoutPacing turns the client-side token buckets off; only for benchmarks
// against a simulator whose limits are lifted.
func WithoutPacing() Option { return func(c *Client) error { c.pacer.off = true; return nil } }

// NewClient builds a client. A base URL and a key pair, a token source or a
// partner program are required; a client with only the partner program can
// sign a user in but not call the REST interface yet.
func NewClient(opts ...Option) (*Client, error) {
	c := &Client{
		http:      &http.Client{Timeout: 15 * time.Second},
		prefix:    DefaultHeaderPrefix,
		userAgent: "locator-brokerclient/1",
		clock:     clock.Real{},
		logger:    slog.New(slog.DiscardHandler),
		pacer:     newPacer(),
		rng:       rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0x10ca7e)),
	}
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, fmt.Errorf("brokerclient: %w", err)
		}
	}
	if c.baseURL == nil {
		return nil, errors.New("brokerclient: a base URL is required (WithBaseURL)")
	}
	if c.keyID == "" && c.tokens == nil && c.partner == nil {
		return nil, errors.New("brokerclient: credentials are required (WithCredentials, WithTokenSource or WithPartner)")
	}
	if c.partnerTok != nil && c.partner == nil {
		return nil, errors.New("brokerclient: WithPartnerToken needs the program it was issued by (WithPartner)")
	}
	// Go drops only Authorization and Cookie when a redirect leaves the
	// host, not the key headers: no redirect is followed (RedirectError).
	hc := *c.http
	hc.CheckRedirect = noRedirect
	c.http = &hc
	c.common.client = c
	c.Accounts = (*AccountsService)(&c.common)
	c.Orders = (*OrdersService)(&c.common)
	c.Positions = (*PositionsService)(&c.common)
	c.Locates = (*LocatesService)(&c.common)
	c.Ledger = (*LedgerService)(&c.common)
	c.Partner = (*PartnerService)(&c.common)
	if c.partnerTok != nil {
		c.partnerTok.p = c.Partner
	}
	c.Streams = (*StreamsService)(&c.common)
	return c, nil
}

// BaseURL returns the configured base address.
func (c *Client) BaseURL() string { return c.baseURL.String() }

// KeyID returns the public key id (never the secret).
func (c *Client) KeyID() string { return c.keyID }

// Response wraps the final HTTP response of a call.
type Response struct {
	*http.Response
	// Attempts is how many times the request was sent (1 without retries).
	Attempts int
}

// retryPolicy says what may be repeated when an attempt fails.
type retryPolicy int

const (
	// retryRead: reads and writes the spec says are safe to repeat (locate
	// accept, locate cancel, order cancel): transport errors, 5xx and 429 retry.
	retryRead retryPolicy = iota
	// retryNever: writes that must not be duplicated (locate quote, locate
	// sell, order placement). Only a 429, which the service answers without
	// processing, is retried; a lost answer is an OutcomeUnknownError.
	retryNever
)

// call describes one endpoint invocation.
type call struct {
	method   string
	path     string // already escaped
	query    url.Values
	body     any    // JSON-encoded unless it is a formBody
	route    string // pacing bucket, a key of the spec's "Rate limits" table
	retry    retryPolicy
	clientID string // the client id a non-repeatable write carries
	op       string // human name, for errors and logs
}

// formBody is sent as application/x-www-form-urlencoded.
type formBody url.Values

// maxTransientRetries bounds retries of transport errors and 5xx.
const maxTransientRetries = 4

// maxRateLimitRetries bounds 429 recoveries (1–2 s, then 2, 4, 8, 16, 32, 60 s).
const maxRateLimitRetries = 7

// maxForbiddenRetries bounds the retries of a 403 on bearer calls: the spec
// says a fresh partner token may briefly meet one.
const maxForbiddenRetries = 3

// do runs a call: pacing, sending, the spec's 429 recovery, narrow retries,
// the error taxonomy and decoding of a JSON success body into v, whose
// strings are then CleanText. A secret the request carried, echoed in an
// answer, is secretMask in v and in any error.
func (c *Client) do(ctx context.Context, cl call, v any) (*Response, error) {
	payload, ctype, err := encodeBody(cl)
	if err != nil {
		return nil, err
	}
	target := c.baseURL.String() + cl.path
	if len(cl.query) > 0 {
		target += "?" + cl.query.Encode()
	}
	var tries retryCounts
	for attempt := 1; ; attempt++ {
		if err := c.pacer.wait(ctx, c.clock, cl.route); err != nil {
			return nil, err
		}
		req, err := c.newRequest(ctx, cl, target, payload, ctype)
		if err != nil {
			return nil, err
		}
		resp, err := c.send(ctx, cl, req)
		if err != nil {
			if err := c.retryTransport(ctx, cl, attempt, &tries, err); err != nil {
				return nil, err
			}
			continue
		}
		r := &Response{Response: resp, Attempts: attempt}
		retry, err := c.retryStatus(ctx, cl, r, &tries)
		if retry {
			continue
		}
		if err != nil {
			return r, err
		}
		return r, c.decodeAnswer(cl, resp, v)
	}
}

// encodeBody is the payload of a call and its Content-Type: none, a form,
// or JSON.
func encodeBody(cl call) ([]byte, string, error) {
	switch b := cl.body.(type) {
	case nil:
		return nil, "", nil
	case formBody:
		return []byte(url.Values(b).Encode()), "application/x-www-form-urlencoded", nil
	default:
		payload, err := json.Marshal(b)
		if err != nil {
			return nil, "", fmt.Errorf("brokerclient: %s: encode body: %w", cl.op, err)
		}
		return payload, "application/json", nil
	}
}

// newRequest builds one attempt of a call, headers and authorization set.
func (c *Client) newRequest(ctx context.Context, cl call, target string, payload []byte, ctype string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, cl.method, target, bytes.NewReader(payload))
	if err != nil {
		return nil, fmt.Errorf("brokerclient: %s: %w", cl.op, err)
	}
	if payload == nil {
		// net/http replays a bodiless GET by itself when a reused
		// connection fails, outside the pacer and this loop's policy;
		// a body with no GetBody makes the request non-replayable, and
		// an empty one never reaches the wire.
		req.Body, req.GetBody, req.ContentLength = noReplay{}, nil, 0
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	if err := c.authorize(ctx, req); err != nil {
		return nil, err
	}
	return req, nil
}

// send puts one attempt on the wire in the pacer's turn, behind the gate,
// and records the clock offset and the call's metrics.
func (c *Client) send(ctx context.Context, cl call, req *http.Request) (*http.Response, error) {
	answered, err := c.pacer.turn(ctx, c.clock, cl.route)
	if err != nil {
		return nil, err
	}
	// The last thing before the wire: a request leaves only while the
	// gate allows it.
	if err := gateRequest(ctx, cl); err != nil {
		answered()
		return nil, err
	}
	sent := c.clock.Now()
	resp, err := c.http.Do(req)
	answered()
	if err == nil {
		c.offset.observe(sent, c.clock.Now(), resp.Header.Get("Date"))
	}
	if c.observe != nil {
		status := 0
		if err == nil {
			status = resp.StatusCode
		}
		c.observe(RouteTemplate(cl.route), status, c.clock.Now().Sub(sent))
	}
	return resp, err
}

// retryCounts counts one call's retries by cause, each with its own bound.
type retryCounts struct{ transient, limited, forbidden int }

// retryTransport decides after a transport error: nil after waiting out
// the backoff of a retry, else the error that ends the call (an unknown
// outcome for a call never retried).
func (c *Client) retryTransport(ctx context.Context, cl call, attempt int, tries *retryCounts, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if cl.retry == retryNever {
		return &OutcomeUnknownError{Op: cl.op, ClientID: cl.clientID, Err: redact(err)}
	}
	if tries.transient++; tries.transient > maxTransientRetries {
		return fmt.Errorf("brokerclient: %s: %w", cl.op, redact(err))
	}
	c.logger.Debug("transport error, retrying", "op", cl.op, "attempt", attempt, "err", redact(err))
	return clock.Sleep(ctx, c.clock, c.backoff(tries.transient))
}

// retryStatus decides on an answer's status: retry (after waiting out its
// backoff) on a 429, a bearer call's brief 403 or a 5xx; else the error of
// a failed answer, or none for a success.
func (c *Client) retryStatus(ctx context.Context, cl call, r *Response, tries *retryCounts) (bool, error) {
	resp := r.Response
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		drain(resp)
		tries.limited++
		if tries.limited > maxRateLimitRetries {
			return false, &RateLimitError{Op: cl.op, Attempts: r.Attempts}
		}
		wait := c.rateLimitWait(tries.limited)
		c.logger.Warn("rate limited (429); backing off", "op", cl.op, "wait", wait)
		return sleepRetry(ctx, c, wait)
	case resp.StatusCode == http.StatusForbidden && c.tokens != nil && tries.forbidden < maxForbiddenRetries:
		// Spec: "Brief 403 on REST after a fresh token: retry with
		// short backoff." The edge answers it before processing.
		drain(resp)
		tries.forbidden++
		c.logger.Debug("403 on a bearer call; retrying", "op", cl.op, "attempt", r.Attempts)
		return sleepRetry(ctx, c, c.backoff(tries.forbidden))
	case resp.StatusCode >= 500:
		errResp := checkResponse(cl, resp, c.secretsSent(resp.Request))
		if cl.retry == retryNever {
			return false, &OutcomeUnknownError{Op: cl.op, ClientID: cl.clientID, Err: errResp}
		}
		if tries.transient++; tries.transient > maxTransientRetries {
			return false, errResp
		}
		return sleepRetry(ctx, c, c.backoff(tries.transient))
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		drain(resp)
		err := &RedirectError{Op: cl.op, StatusCode: resp.StatusCode, Host: locationHost(resp)}
		if cl.retry == retryNever {
			return false, &OutcomeUnknownError{Op: cl.op, ClientID: cl.clientID, Err: err}
		}
		return false, err
	case resp.StatusCode >= 400:
		return false, checkResponse(cl, resp, c.secretsSent(resp.Request))
	}
	return false, nil
}

// sleepRetry waits d before a retry; an interrupted wait ends the call.
func sleepRetry(ctx context.Context, c *Client, d time.Duration) (bool, error) {
	if err := clock.Sleep(ctx, c.clock, d); err != nil {
		return false, err
	}
	return true, nil
}

// decodeAnswer decodes a success answer into v (or drains it when v is
// nil), read within the answer's bounds: maxAnswer bytes and the route's
// cap of rows and fields (routeCap); a list (a listOf) row by row. The
// secrets the request carried are masked in what it decodes.
func (c *Client) decodeAnswer(cl call, resp *http.Response, v any) error {
	defer resp.Body.Close()
	if v == nil {
		drain(resp)
		return nil
	}
	src, err := newAnswerReader(resp.Body, resp.ContentLength, cl.op, RouteTemplate(cl.route), maxAnswer, routeCap(cl.route))
	if err == nil {
		err = decodeAnswerFrom(src, c.secretsSent(resp.Request), cl.op, v)
	}
	var de *DecodeError
	switch {
	case err == nil, errors.As(err, &de):
		return err
	case cl.retry == retryNever:
		return &OutcomeUnknownError{Op: cl.op, ClientID: cl.clientID, Err: redact(err)}
	case errors.Is(err, ErrAnswerTooLarge), errors.Is(err, ErrTooManyRows):
		return err
	}
	return fmt.Errorf("brokerclient: %s: read body: %w", cl.op, redact(err))
}

// secretsSent is what a request of c carried that only c may know: the key
// secret, the partner client secret and req's bearer token (none when
// req is nil).
func (c *Client) secretsSent(req *http.Request) secrets {
	sec := secrets{c.secret}
	if c.partner != nil {
		sec = append(sec, c.partner.ClientSecret)
	}
	if req != nil {
		if tok, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer "); ok {
			sec = append(sec, tok)
		}
	}
	return sec
}

// authorize sets the key headers or the bearer token.
func (c *Client) authorize(ctx context.Context, req *http.Request) error {
	if c.tokens == nil && c.keyID == "" {
		return &LoginRequiredError{Reason: "the client holds no partner token yet"}
	}
	if c.tokens != nil {
		tok, err := c.tokens.Token(ctx)
		if err != nil {
			return fmt.Errorf("brokerclient: token: %w", err)
		}
		req.Header.Set("Authorization", "Bearer "+tok)
		return nil
	}
	req.Header.Set(c.prefix+"-API-KEY-ID", c.keyID)
	req.Header.Set(c.prefix+"-API-SECRET-KEY", c.secret)
	return nil
}

// rateLimitWait is the spec's recovery: wait 1 to 2 seconds and retry once;
// if it persists, 2, 4, 8 seconds with jitter, capped at 60.
func (c *Client) rateLimitWait(n int) time.Duration {
	if n == 1 {
		return time.Second + c.jitter(time.Second)
	}
	base := min(time.Duration(1<<(n-1))*time.Second, 60*time.Second)
	return min(base+c.jitter(base/4), 60*time.Second)
}

// backoff is the wait before the n-th retry of a transport error or 5xx,
// or the n-th reconnection of a stream: 250 ms doubling, with jitter,
// capped at the spec's 60 s.
func (c *Client) backoff(n int) time.Duration {
	base := min(250*time.Millisecond<<min(n-1, 20), 60*time.Second)
	return min(base+c.jitter(base/2), 60*time.Second)
}

func (c *Client) jitter(max time.Duration) time.Duration {
	if max <= 0 {
		return 0
	}
	c.rngMu.Lock()
	defer c.rngMu.Unlock()
	return time.Duration(c.rng.Int64N(int64(max)))
}

// clockOffset estimates how far the broker's clock runs ahead of this
// machine's (negative: behind) from the Date header of its answers: the
// broker's time when it answered lay within the header's whole second, and
// this machine's between sending and receiving. The median of recent
// samples rides out a slow answer.
type clockOffset struct {
	mu      sync.Mutex
	samples []time.Duration // newest last
}

const offsetSamples = 15

func (o *clockOffset) observe(sent, recv time.Time, header string) {
	date, err := http.ParseTime(header)
	if err != nil {
		return
	}
	mid := sent.Add(recv.Sub(sent) / 2)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.samples = append(o.samples, date.Add(500*time.Millisecond).Sub(mid))
	if len(o.samples) > offsetSamples {
		o.samples = o.samples[1:]
	}
}

// BrokerClockOffset is how far the broker's clock runs ahead of this
// machine's (negative: behind), from the Date headers of its answers; ok is
// false before any answer carried one. The estimate is good to about half
// a second plus half a round trip: the header has whole seconds.
func (c *Client) BrokerClockOffset() (offset time.Duration, ok bool) {
	c.offset.mu.Lock()
	defer c.offset.mu.Unlock()
	if len(c.offset.samples) == 0 {
		return 0, false
	}
	s := slices.Clone(c.offset.samples)
	slices.Sort(s)
	return s[len(s)/2], true
}

// ClockSkew is the broker's clock offset when it is evidence of skew: zero
// before any answer, and within the Date header's resolution (a second),
// where the estimate cannot tell skew from rounding. Add it to this
// machine's time for the broker's; subtract it from the broker's for this
// machine's.
func (c *Client) ClockSkew() time.Duration {
	if off, ok := c.BrokerClockOffset(); ok && (off > time.Second || off < -time.Second) {
		return off
	}
	return 0
}

// noRedirect is the CheckRedirect of every HTTP client of ours: the
// redirect comes back as the answer.
func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// noReplay is an empty request body that net/http cannot rewind, so it
// never silently sends the request again.
type noReplay struct{}

func (noReplay) Read([]byte) (int, error) { return 0, io.EOF }
func (noReplay) Close() error             { return nil }

func drain(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
}

// redact strips the query from URL errors; secrets travel only in headers,
// but a query may carry account data the logs need not see.
func redact(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		if u, perr := url.Parse(ue.URL); perr == nil {
			u.RawQuery = ""
			return &url.Error{Op: ue.Op, URL: u.String(), Err: ue.Err}
		}
	}
	return err
}

// truncate is what an error keeps of a body: at most 512 bytes of it, as
// CleanText (a body that did not decode is broker text too).
func truncate(b []byte) string {
	const n = 512
	if len(b) > n {
		return CleanText(string(b[:n])) + "…"
	}
	return CleanText(string(b))
}

// pathEscape escapes one path segment.
func pathEscape(s string) string { return url.PathEscape(s) }
