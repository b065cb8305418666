package brokersim

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// The two WebSocket streams of the spec ("WebSocket streams", "WebSocket
// handshake", "Events"). Each connection is a streamConn: its reader runs on
// the handler's goroutine and handles messages under the simulator's lock;
// whatever the world pushes (ticks, order changes) is queued under that lock
// and written by the connection's own writer goroutine, so a slow or
// stalled client never holds the lock.

// Stream kinds, the last segment of {ws_base_url}/stream/{kind}.
const (
	streamPnL       = "pnl"
	streamPortfolio = "portfolio"
)

// System message statuses (spec: "System messages (both streams)").
const (
	sysPendingAuth = "PENDING_AUTH"
	sysConnected   = "CONNECTED"
	sysFailedAuth  = "FAILED_AUTH"
	sysTerminated  = "TERMINATED"
	sysInvalidData = "INVALID_DATA"
)

// Portfolio topics a subscribe may name (the simulator's choice of payload:
// the spec does not show it).
const (
	topicOrder    = "Order"
	topicPosition = "Position"
)

// streamConn is one accepted stream connection.
type streamConn struct {
	kind string
	gate *gate

	// Under the simulator's lock.
	keyID  string // set once authenticated
	failed bool   // FAILED_AUTH sent: the connection is ignored from then on
	pnl    map[string]*pnlSent
	topics map[string][]string // portfolio: account → subscribed topics

	mu   sync.Mutex
	out  [][]byte
	wake chan struct{} // capacity 1: the writer has something to send
}

// queue adds one message for the writer; it never blocks.
func (c *streamConn) queue(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // our own message types always encode
	}
	c.mu.Lock()
	c.out = append(c.out, b)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *streamConn) take() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.out
	c.out = nil
	return out
}

// systemMsg is a system message: `@system: true`, `ts`, `status`, `message`.
type systemMsg struct {
	System  bool   `json:"@system"`
	TS      int64  `json:"ts"`
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
}

func (s *Sim) system(c *streamConn, status, message string) {
	c.queue(systemMsg{System: true, TS: s.now.UnixMilli(), Status: status, Message: message})
}

// errorMsg is the subscription-level error data message (spec: P&L stream
// rule 4); the portfolio stream uses the same shape.
type errorMsg struct {
	TS      int64  `json:"ts"`
	Account string `json:"account,omitempty"`
	Action  string `json:"action"`
	Message string `json:"message"`
}

// streams is the set of open stream connections and the admin controls.
type streams struct {
	conns     map[*streamConn]bool
	duplicate bool // every portfolio push is sent twice (client de-duplication tests)
	pumping   bool
}

// serveStream upgrades {ws}/stream/{kind} and runs the connection until
// either side ends it. The upgrade request is logged like any other.
func (s *Sim) serveStream(w http.ResponseWriter, r *http.Request, kind string) {
	entry := s.logRequest(r, nil)
	g := newGate()
	ws, err := websocket.Accept(&gatedWriter{ResponseWriter: w, gate: g}, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		s.setStatus(entry, http.StatusBadRequest) // Accept has answered
		return
	}
	s.setStatus(entry, http.StatusSwitchingProtocols)
	defer ws.CloseNow()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	c := &streamConn{kind: kind, gate: g, pnl: map[string]*pnlSent{}, topics: map[string][]string{}, wake: make(chan struct{}, 1)}
	s.mu.Lock()
	s.advanceLocked()
	s.str.conns[c] = true
	s.startPumpLocked()
	s.system(c, sysPendingAuth, "Send authenticate message")
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.str.conns, c)
		s.mu.Unlock()
		g.drop()
	}()

	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-c.wake:
			}
			for _, b := range c.take() {
				if ws.Write(ctx, websocket.MessageText, b) != nil {
					cancel()
					return
				}
			}
		}
	}()
	for {
		_, data, err := ws.Read(ctx)
		if err != nil {
			return
		}
		s.mu.Lock()
		s.advanceLocked()
		s.streamMessage(c, data)
		s.mu.Unlock()
	}
}

// streamMessage handles one client message under the lock: the handshake
// first (spec: "WebSocket handshake"), then subscribes.
func (s *Sim) streamMessage(c *streamConn, data []byte) {
	switch {
	case c.failed:
		return // spec: after FAILED_AUTH the client should close
	case c.keyID == "":
		var auth struct {
			Key    *string `json:"key"`
			Secret *string `json:"secret"`
		}
		if json.Unmarshal(data, &auth) != nil || auth.Key == nil || auth.Secret == nil || *auth.Key == "" {
			c.failed = true
			s.system(c, sysFailedAuth, "Authentication parameters not properly provided")
			return
		}
		if k := s.keys[*auth.Key]; k == nil || k.secret != *auth.Secret {
			c.failed = true
			s.system(c, sysFailedAuth, "Invalid API key or secret")
			return
		}
		c.keyID = *auth.Key
		s.system(c, sysConnected, "Authenticated")
		return
	}
	var req map[string]json.RawMessage
	if err := json.Unmarshal(data, &req); err != nil || req == nil {
		msg := "subscribe request must be a JSON object"
		if err != nil {
			msg = err.Error()
		}
		s.system(c, sysInvalidData, msg)
		return
	}
	raw, ok := req["account"]
	var id string
	switch {
	case !ok || string(raw) == "null":
	case json.Unmarshal(raw, &id) == nil:
	case isJSONNumber(raw):
		// Spec: a numeric account value is "account not found".
		c.queue(errorMsg{TS: s.now.UnixMilli(), Action: "error", Message: "account not found"})
		return
	default:
		s.system(c, sysInvalidData, "account: expected a string")
		return
	}
	if strings.TrimSpace(id) == "" {
		s.system(c, sysTerminated, "account must be a non-empty value")
		return
	}
	a := s.ownedAccount(s.keys[c.keyID], id)
	if a == nil {
		c.queue(errorMsg{TS: s.now.UnixMilli(), Account: id, Action: "error", Message: "account not found"})
		return
	}
	if c.kind == streamPnL {
		s.pnlSubscribe(c, a)
		return
	}
	topics := []string{topicOrder, topicPosition}
	if raw, ok := req["topics"]; ok {
		if err := json.Unmarshal(raw, &topics); err != nil {
			s.system(c, sysInvalidData, "topics: "+err.Error())
			return
		}
		for _, t := range topics {
			if t != topicOrder && t != topicPosition {
				s.system(c, sysInvalidData, fmt.Sprintf("topics: %q is not one of Order, Position", t))
				return
			}
		}
	}
	c.topics[a.id] = topics
	c.queue(portfolioMsg{TS: s.now.UnixMilli(), Account: a.id, Action: "subscribed", Target: "portfolio", Topics: topics})
}

func isJSONNumber(raw json.RawMessage) bool {
	var n json.Number
	return json.Unmarshal(raw, &n) == nil
}

// startPumpLocked runs the event queue while streams are open. Without a
// stream, events run lazily before each request; a pushed update (the
// Rejected a few milliseconds after PendingNew) must leave when it happens,
// with no request to carry it. The pump reads the simulator's clock every
// couple of wall milliseconds; it never defines time, so a fake clock still
// decides when anything is due.
func (s *Sim) startPumpLocked() {
	if s.str.pumping {
		return
	}
	s.str.pumping = true
	go func() {
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for range tick.C {
			s.mu.Lock()
			if len(s.str.conns) == 0 {
				s.str.pumping = false
				s.mu.Unlock()
				return
			}
			s.advanceLocked()
			s.mu.Unlock()
		}
	}()
}

// StreamControl is what the admin route POST /_sim/streams does to the open
// stream connections of one kind ("pnl", "portfolio", or "" for both).
type StreamControl struct {
	Stream string `json:"stream,omitempty"`
	// Action: "drop" closes the connections without a close frame, as a
	// network failure would; "stall" freezes them (nothing read or written,
	// so protocol pings go unanswered, like a dead peer); "resume" undoes a
	// stall.
	Action string `json:"action,omitempty"`
	// Duplicate, when set, turns on or off sending every portfolio push twice.
	Duplicate *bool `json:"duplicate,omitempty"`
}

// ControlStreams applies c and returns how many connections it touched.
func (s *Sim) ControlStreams(c StreamControl) (int, error) {
	if c.Stream != "" && c.Stream != streamPnL && c.Stream != streamPortfolio {
		return 0, fmt.Errorf("stream %q: want pnl, portfolio or empty for both", c.Stream)
	}
	if !slices.Contains([]string{"", "drop", "stall", "resume"}, c.Action) {
		return 0, fmt.Errorf("action %q: want drop, stall or resume", c.Action)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.Duplicate != nil {
		s.str.duplicate = *c.Duplicate
	}
	n := 0
	for sc := range s.str.conns {
		if c.Stream != "" && sc.kind != c.Stream {
			continue
		}
		n++
		switch c.Action {
		case "drop":
			sc.gate.drop()
		case "stall":
			sc.gate.stall()
		case "resume":
			sc.gate.resume()
		}
	}
	return n, nil
}

// dropStreamsLocked ends every stream connection (on Reset: their accounts
// and keys are rebuilt).
func (s *Sim) dropStreamsLocked() {
	for c := range s.str.conns {
		c.gate.drop()
	}
}

// gate sits between a stream's WebSocket and its TCP connection, so the
// admin route can stall or drop it the way a network does.
type gate struct {
	mu   sync.Mutex
	open chan struct{} // closed while traffic may flow
	dead chan struct{} // closed once dropped
	conn net.Conn
	once sync.Once
}

func newGate() *gate {
	g := &gate{open: make(chan struct{}), dead: make(chan struct{})}
	close(g.open)
	return g
}

func (g *gate) stall() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
		g.open = make(chan struct{})
	default:
	}
}

func (g *gate) resume() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
	default:
		close(g.open)
	}
}

func (g *gate) drop() {
	g.once.Do(func() {
		close(g.dead)
		g.mu.Lock()
		conn := g.conn
		g.mu.Unlock()
		if conn != nil {
			conn.Close()
		}
	})
}

// wait blocks while the gate is stalled; it fails once the gate is dropped.
func (g *gate) wait() error {
	g.mu.Lock()
	open := g.open
	g.mu.Unlock()
	select {
	case <-g.dead:
		return net.ErrClosed
	case <-open:
		return nil
	}
}

// gatedWriter hands the WebSocket library a hijacked connection whose reads
// and writes pass through the gate.
type gatedWriter struct {
	http.ResponseWriter
	gate *gate
}

func (w *gatedWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	gc := &gatedConn{Conn: conn, gate: w.gate}
	w.gate.mu.Lock()
	w.gate.conn = conn
	w.gate.mu.Unlock()
	select {
	case <-w.gate.dead:
		conn.Close()
	default:
	}
	return gc, bufio.NewReadWriter(brw.Reader, bufio.NewWriter(gc)), nil
}

type gatedConn struct {
	net.Conn
	gate *gate
}

func (c *gatedConn) Read(p []byte) (int, error) {
	if err := c.gate.wait(); err != nil {
		return 0, err
	}
	return c.Conn.Read(p)
}

func (c *gatedConn) Write(p []byte) (int, error) {
	if err := c.gate.wait(); err != nil {
		return 0, err
	}
	return c.Conn.Write(p)
}
