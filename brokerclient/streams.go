package brokerclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/clock"
)

// StreamsService dials the two WebSocket streams (spec: "WebSocket
// streams", "WebSocket handshake", "Events"): the P&L stream and the
// portfolio stream. Dial gives one authenticated connection; WatchPnL and
// FollowOrders keep a subscription alive across failures.
type StreamsService service

// StreamKind names a stream: the last segment of {ws_base_url}/stream/{kind}.
type StreamKind string

// The two streams.
const (
	StreamPnL       StreamKind = "pnl"
	StreamPortfolio StreamKind = "portfolio"
)

// Stream error kinds, for errors.Is. Authentication and subscription
// failures are irrecoverable: reconnecting would fail the same way.
var (
	// ErrStreamAuth: the server answered FAILED_AUTH.
	ErrStreamAuth = errors.New("stream authentication failed")
	// ErrStreamSubscribe: a subscribe was refused (account not found,
	// TERMINATED, INVALID_DATA).
	ErrStreamSubscribe = errors.New("stream subscribe refused")
)

// StreamAuthError is FAILED_AUTH. It never carries the secret.
type StreamAuthError struct {
	Kind    StreamKind
	Message string
}

func (e *StreamAuthError) Error() string {
	return fmt.Sprintf("brokerclient: %s stream: authentication failed: %s", e.Kind, e.Message)
}

// Is reports ErrStreamAuth.
func (e *StreamAuthError) Is(target error) bool { return target == ErrStreamAuth }

// StreamSubscribeError is a refused subscribe: the `account not found` data
// message, or a TERMINATED or INVALID_DATA system message.
type StreamSubscribeError struct {
	Kind    StreamKind
	Account string
	Status  string // "error", "TERMINATED" or "INVALID_DATA"
	Message string
}

func (e *StreamSubscribeError) Error() string {
	return fmt.Sprintf("brokerclient: %s stream: subscribe %s refused (%s): %s", e.Kind, e.Account, e.Status, e.Message)
}

// Is reports ErrStreamSubscribe, and ErrNotFound for an account the
// credentials do not reach.
func (e *StreamSubscribeError) Is(target error) bool {
	return target == ErrStreamSubscribe || (target == ErrNotFound && e.Status == "error")
}

// WithStreamURL sets the WebSocket base address ({ws_base_url}); by
// default it is the REST base address with ws or wss for http or https. It
// must pass CheckAddress as a StreamAddress (wss beyond loopback).
func WithStreamURL(raw string) Option {
	return func(c *Client) error {
		u, err := CheckAddress(strings.TrimSuffix(raw, "/"), StreamAddress)
		if err != nil {
			return err
		}
		c.streamURL = u
		return nil
	}
}

// streamAddress is {ws_base_url}/stream/{kind}.
func (c *Client) streamAddress(kind StreamKind) string {
	u := c.streamURL
	if u == nil {
		v := *c.baseURL
		v.Scheme = map[string]string{"http": "ws", "https": "wss"}[v.Scheme]
		u = &v
	}
	return u.String() + "/stream/" + string(kind)
}

// handshakeTimeout bounds dial plus authentication. It is an I/O timeout
// on the wall clock, like the REST client's, not a protocol window.
const handshakeTimeout = 15 * time.Second

// StreamConn is one authenticated stream connection. Next must be called
// by one goroutine at a time; Subscribe, Ping and Close may be called
// concurrently with it.
type StreamConn struct {
	kind StreamKind
	ws   *websocket.Conn
	sec  secrets // the handshake's secret, masked in what the broker sends back
}

// Dial opens a stream and authenticates: it waits for PENDING_AUTH, sends
// {key, secret} and returns once CONNECTED arrives. FAILED_AUTH is a
// *StreamAuthError. Partner tokens cannot authenticate a stream (the spec's
// handshake takes a key pair only).
//
// Spec: {ws_base_url}/stream/pnl, {ws_base_url}/stream/portfolio.
func (s *StreamsService) Dial(ctx context.Context, kind StreamKind) (*StreamConn, error) {
	c := s.client
	if c.keyID == "" {
		return nil, brokercode.Invalid("credentials", "the stream handshake needs a key pair (WithCredentials)")
	}
	if err := gateRequest(ctx, call{method: http.MethodGet, op: "stream " + string(kind)}); err != nil {
		return nil, err
	}
	hctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
	defer cancel()
	ws, _, err := websocket.Dial(hctx, c.streamAddress(kind), &websocket.DialOptions{
		HTTPHeader: http.Header{"User-Agent": {c.userAgent}},
		// No redirect is followed: the key pair is sent on the
		// connection once it is up, wherever it went.
		HTTPClient: &http.Client{CheckRedirect: noRedirect},
	})
	if err != nil {
		return nil, fmt.Errorf("brokerclient: %s stream: dial: %w", kind, err)
	}
	ws.SetReadLimit(maxAnswer) // a snapshot of many lots exceeds the 32 KiB default
	conn := &StreamConn{kind: kind, ws: ws, sec: c.secretsSent(nil)}
	expect := func(want SystemStatus) error {
		m, err := conn.Next(hctx)
		if err != nil {
			return err
		}
		sys, ok := m.(*SystemMessage)
		switch {
		case ok && sys.Status == want:
			return nil
		case ok && sys.Status == StatusFailedAuth:
			return &StreamAuthError{Kind: kind, Message: sys.Message}
		}
		return fmt.Errorf("brokerclient: %s stream: handshake: got %T, want %s", kind, m, want)
	}
	if err := expect(StatusPendingAuth); err != nil {
		ws.CloseNow()
		return nil, err
	}
	if err := conn.send(hctx, map[string]string{"key": c.keyID, "secret": c.secret}); err != nil {
		ws.CloseNow()
		return nil, err
	}
	if err := expect(StatusConnected); err != nil {
		ws.CloseNow()
		return nil, err
	}
	return conn, nil
}

func (sc *StreamConn) send(ctx context.Context, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := sc.ws.Write(ctx, websocket.MessageText, b); err != nil {
		return fmt.Errorf("brokerclient: %s stream: write: %w", sc.kind, err)
	}
	return nil
}

// Subscribe asks for an account's messages: `{account}` on the P&L stream
// (spec: P&L stream); on the portfolio stream `{account, topics}` with
// topics among "Order" and "Position" (none: both), the simulator's
// documented payload, since the spec does not show it.
func (sc *StreamConn) Subscribe(ctx context.Context, accountID string, topics ...string) error {
	if strings.TrimSpace(accountID) == "" {
		return brokercode.Invalid("account", "required")
	}
	req := map[string]any{"account": accountID}
	if sc.kind == StreamPortfolio && len(topics) > 0 {
		req["topics"] = topics
	}
	return sc.send(ctx, req)
}

// Next reads and decodes the next message, the client's secret masked in
// it wherever the broker echoed it. A message that does not decode is a
// *StreamDecodeError and the connection stays usable; one longer than the
// client's bound (64 MiB) is an *AnswerTooLargeError, and one over its
// cap of rows or fields (streamCap: a P&L snapshot's positions as the P&L
// answer's lots) a *TooManyRowsError, counted as it is read and never
// decoded: either way the connection is closed.
func (sc *StreamConn) Next(ctx context.Context) (StreamMessage, error) {
	data, err := sc.read(ctx)
	if err != nil {
		if errors.Is(err, ErrAnswerTooLarge) || errors.Is(err, ErrTooManyRows) {
			sc.ws.CloseNow()
			return nil, err
		}
		return nil, fmt.Errorf("brokerclient: %s stream: read: %w", sc.kind, err)
	}
	return DecodeStreamMessage(sc.sec.maskBody(data))
}

// read reads the next message whole, within its bounds.
func (sc *StreamConn) read(ctx context.Context) ([]byte, error) {
	_, r, err := sc.ws.Reader(ctx)
	if err != nil {
		return nil, err
	}
	op := string(sc.kind) + " stream"
	src, err := newAnswerReader(r, -1, op, "{ws_base_url}/stream/"+string(sc.kind), maxAnswer, streamCap(sc.kind))
	if err != nil {
		return nil, err
	}
	data, err := src.readAll()
	if errors.Is(err, websocket.ErrMessageTooBig) {
		return nil, &AnswerTooLargeError{Op: op, Limit: maxAnswer}
	}
	return data, err
}

// Ping sends a protocol ping and waits for the pong; neither stream sends a
// keepalive, so this is how a client tells a dead connection from a quiet
// one. It needs Next running on another goroutine to read the pong.
func (sc *StreamConn) Ping(ctx context.Context) error { return sc.ws.Ping(ctx) }

// Close ends the connection.
func (sc *StreamConn) Close() error { return sc.ws.CloseNow() }

// StreamOption configures WatchPnL and FollowOrders.
type StreamOption func(*streamConfig)

type streamConfig struct {
	pingInterval time.Duration
	pingTimeout  time.Duration
	pollInterval time.Duration
}

func newStreamConfig(opts []StreamOption) streamConfig {
	cfg := streamConfig{pingInterval: 15 * time.Second, pingTimeout: 5 * time.Second, pollInterval: 2 * time.Second}
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}

// WithPing sets how often an idle connection is pinged and how long a pong
// may take before the connection is declared dead and replaced (default
// 15 s and 5 s). The interval runs on the client's clock; the pong's wait
// is an I/O timeout on the wall clock, like the handshake's, so a virtual
// clock that jumps while the pong is on the wire does not kill a live
// connection. An interval of 0 turns pinging off.
func WithPing(interval, timeout time.Duration) StreamOption {
	return func(c *streamConfig) { c.pingInterval, c.pingTimeout = interval, timeout }
}

// WithPollInterval sets how often FollowOrders reads the order book while
// the stream is down (default 2 s, the book's rate limit being 2 per
// second). 0 leaves REST to the caller: the follower reads nothing, reports
// Connected as soon as it is subscribed, and a caller that saw Connected
// false must settle its orders itself (ResolveOrder, then Observe).
func WithPollInterval(d time.Duration) StreamOption {
	return func(c *streamConfig) { c.pollInterval = d }
}

// sessionHandler is what a resilient stream does with its connections.
type sessionHandler interface {
	// connected subscribes on a fresh connection.
	connected(ctx context.Context, conn *StreamConn) error
	// message handles one message; an error ends the connection, and a
	// subscribe or auth error ends the session.
	message(m StreamMessage) error
	// disconnected is told the connection is gone.
	disconnected(err error)
	// failed is told the session stopped for good: an irrecoverable error,
	// or ctx's when it ended.
	failed(err error)
}

// session keeps one stream connected: dial, subscribe, read, ping, and on
// any transient failure reconnect after an exponential backoff with
// jitter, capped at 60 s (spec: "clients implement their own reconnection
// with exponential backoff").
type session struct {
	svc  *StreamsService
	kind StreamKind
	cfg  streamConfig
	h    sessionHandler
}

// irrecoverable errors stop the session: the same credentials or account
// would fail again, or the broker would send the same oversized message
// (a snapshot, too long or of too many rows) again.
func irrecoverable(err error) bool {
	return errors.Is(err, ErrStreamAuth) || errors.Is(err, ErrStreamSubscribe) || errors.Is(err, brokercode.ErrInput) ||
		errors.Is(err, ErrAnswerTooLarge) || errors.Is(err, ErrTooManyRows)
}

// run keeps the stream up until ctx ends or an irrecoverable error, and
// tells the handler which one stopped it.
func (s *session) run(ctx context.Context) {
	s.h.failed(s.loop(ctx))
}

func (s *session) loop(ctx context.Context) error {
	c := s.svc.client
	failures := 0
	for {
		conn, err := s.svc.Dial(ctx, s.kind)
		if err == nil {
			failures = 0
			err = s.serve(ctx, conn)
		}
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case irrecoverable(err):
			return err
		}
		s.h.disconnected(err)
		failures++
		wait := c.backoff(failures)
		c.logger.Debug("stream down; reconnecting", "stream", s.kind, "wait", wait, "err", err)
		if err := clock.Sleep(ctx, c.clock, wait); err != nil {
			return err
		}
	}
}

// serve runs one connection until it fails: subscribe, then read, with a
// pinger beside the reader when pinging is on.
func (s *session) serve(ctx context.Context, conn *StreamConn) error {
	defer conn.Close()
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if err := s.h.connected(cctx, conn); err != nil {
		return err
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel(nil)
	if s.cfg.pingInterval > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.ping(cctx, conn, cancel)
		}()
	}
	for {
		m, err := conn.Next(cctx)
		var de *StreamDecodeError
		switch {
		case errors.As(err, &de):
			s.svc.client.logger.Warn("stream message skipped", "stream", s.kind, "err", err)
			continue
		case err != nil:
			if cause := context.Cause(cctx); cause != nil && ctx.Err() == nil {
				return cause
			}
			return err
		}
		if err := s.h.message(m); err != nil {
			return err
		}
	}
}

// errDeadConnection is a connection that did not answer a ping in time.
var errDeadConnection = errors.New("brokerclient: stream: no pong in time; the connection is dead")

func (s *session) ping(ctx context.Context, conn *StreamConn, kill context.CancelCauseFunc) {
	clk := s.svc.client.clock
	for {
		if clock.Sleep(ctx, clk, s.cfg.pingInterval) != nil {
			return
		}
		pctx, cancel := context.WithTimeout(ctx, s.cfg.pingTimeout)
		err := conn.Ping(pctx)
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				kill(errDeadConnection)
			}
			return
		}
	}
}

// stateSignal is a value with a channel closed whenever it changes, so
// waiters select on the change instead of polling.
type stateSignal struct {
	mu sync.Mutex
	ch chan struct{}
}

// changed returns the channel closed at the next notify.
func (s *stateSignal) changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

func (s *stateSignal) notify() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}
