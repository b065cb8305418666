package service

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/workflow"
)

// The transport carries the account API between a follower and its owner
// as JSON over HTTP on the owner's socket. It only carries: every rule is
// Local's. Each request names its caller in the callerHeader (the
// caller's id, name, environment and whether it can answer questions); a
// caller that can answers the questions put to it on its question stream.
//
//	GET  /v1/hello                    -> Hello (who owns, through which database)
//	POST /v1/locate      LocateRequest      -> LocateResult
//	POST /v1/quote       QuoteRequest       -> LocateResult
//	POST /v1/credit-back CreditBackRequest  -> CreditBackResult
//	POST /v1/short       ShortRequest       -> ShortResult
//	POST /v1/place-order PlaceOrderRequest  -> Order
//	POST /v1/cancel-order CancelOrderRequest -> Order
//	POST /v1/answer      AnswerRequest      -> {}
//	POST /v1/cancel      CancelRequest      -> {}
//	POST /v1/status      StatusRequest      -> Status
//	POST /v1/fees        FeesRequest        -> FeesResult
//	POST /v1/today       TodayRequest       -> Today
//	POST /v1/job         jobCall            -> JobResult (POST /v1/job/stop {ref} drains it)
//	GET  /v1/follow?id=ID                   -> lines of {update} ... {end} | {error}
//	GET  /v1/subscribe                      -> lines of updates
//	GET  /v1/questions                      -> lines of {question} | {withdrawn}
//	POST /v1/reply       reply              -> {}
//
// An error answer is an *account.Error as JSON, with its kind.
const callerHeader = "Locator-Caller"

// sessionHeader carries the session a follower earned by proving it holds
// the owner's credentials (POST /v1/session); every call but hello and
// session needs one. The owner's refusal of a request without a live
// session carries it too ("expired"): the follower then earns another and
// sends the request again, once.
const sessionHeader = "Locator-Session"

// sessionTTL is how long a session lasts from its proof, in real time.
const sessionTTL = 12 * time.Hour

// Prover proves this process holds a broker client's credentials without
// sending them: *brokerclient.Client is one.
type Prover interface {
	Prove(msg []byte) (identity string, mac []byte, err error)
}

// proof is what a follower sends to earn a session: the owner's challenge
// answered with its own credentials, for its broker address, on this
// channel.
type proof struct {
	Nonce    string `json:"nonce"`
	Identity string `json:"identity"`
	MAC      []byte `json:"mac"`
	BaseURL  string `json:"baseURL"`
}

// earnedSession is the owner's answer to a proof: the session, and the
// owner's own proof of the key pair on the same challenge and channel,
// which the follower checks.
type earnedSession struct {
	Session string `json:"session"`
	MAC     []byte `json:"mac"`
}

// challenge is the message side ("follower" or "owner") signs with the
// account's key pair: the owner's nonce, the broker address and the
// channel it travels on (see channel).
func challenge(side, nonce, baseURL, channel string) []byte {
	return []byte("locator " + side + "\n" + nonce + "\n" + strings.TrimRight(baseURL, "/") + "\n" + channel)
}

// channel names the connection a proof travels on, as one end sees it:
// over TLS, the connection's exporter value (RFC 8446 section 7.5, as ssh
// signs its session id) and the pin of the owner's certificate (the
// owner's own, the one the follower saw); on the socket, whose peers are
// this user's processes (SO_PEERCRED), just that. A proof a relay passes
// on was made for the relay's connection and certificate, and the owner,
// checking it against its own, refuses it.
func channel(cs *tls.ConnectionState, pin string) (string, error) {
	if cs == nil {
		return "unix", nil
	}
	ekm, err := cs.ExportKeyingMaterial("EXPORTER-locator-key-pair", nil, 32)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("tls %x %s", ekm, pin), nil
}

// challengeTTL is how long a challenge may be answered.
const challengeTTL = 30 * time.Second

// Hello says who owns the account and through which database: a process
// that opened another database for the account is refused, not served.
type Hello struct {
	Account string        `json:"account"`
	BaseURL string        `json:"baseURL"`
	DB      string        `json:"db"`
	Role    Role          `json:"role"`
	Lease   locator.Lease `json:"lease"`
	// Nonce is a fresh challenge, answered once within challengeTTL to
	// earn a session.
	Nonce string `json:"nonce"`
}

// wireCaller is account.Caller on the wire: its Ask becomes CanAsk.
type wireCaller struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Env    string `json:"env,omitempty"`
	CanAsk bool   `json:"canAsk,omitempty"`
}

// message is one line of a stream.
type message struct {
	Update    *account.Update    `json:"update,omitempty"`
	End       *workflow.Workflow `json:"end,omitempty"`
	Error     *account.Error     `json:"error,omitempty"`
	Question  *account.Question  `json:"question,omitempty"`
	Withdrawn string             `json:"withdrawn,omitempty"`
	// Answered says the withdrawn question was answered elsewhere (else
	// its time ran out).
	Answered bool `json:"answered,omitempty"`
}

// reply answers a question put on a question stream.
type reply struct {
	Question string `json:"question"`
	Accept   bool   `json:"accept"`
}

// jobCall is a job run handed to the owner, with the ref /v1/job/stop
// names it by.
type jobCall struct {
	account.JobRequest
	Ref string `json:"ref"`
}

// server serves the account API of one owner on its socket and, over
// TLS, to other hosts.
type server struct {
	l      *Local
	hello  func() Hello
	prover Prover // the owner's credentials, which a follower must hold too
	clk    clock.Clock
	pin    string // of the owner's certificate on the network, if any

	mu       sync.Mutex
	replies  map[string]chan bool          // questions waiting for their reply
	jobs     map[string]context.CancelFunc // job runs, by ref
	nonces   map[string]time.Time          // challenges handed out, by expiry
	sessions map[string]time.Time          // sessions earned, by expiry (real time)
}

func newServer(l *Local, hello func() Hello, prover Prover, clk clock.Clock, pin string) *server {
	return &server{l: l, hello: hello, prover: prover, clk: clk, pin: pin, replies: map[string]chan bool{}, jobs: map[string]context.CancelFunc{},
		nonces: map[string]time.Time{}, sessions: map[string]time.Time{}}
}

// greet is hello with a fresh challenge.
func (s *server) greet(w http.ResponseWriter, _ *http.Request) {
	h := s.hello()
	h.Nonce = rand.Text()
	now := s.clk.Now()
	s.mu.Lock()
	for n, exp := range s.nonces {
		if now.After(exp) {
			delete(s.nonces, n)
		}
	}
	s.nonces[h.Nonce] = now.Add(challengeTTL)
	s.mu.Unlock()
	send(w, h)
}

// prove checks a follower's proof: the challenge is this owner's, fresh
// and answered once, with the owner's credentials for its broker address,
// on the channel the owner sees (its own certificate, the connection's
// exporter value). Anything else is refused, and the follower can do
// nothing. The owner proves the key pair back on the same challenge.
func (s *server) prove(w http.ResponseWriter, r *http.Request) {
	var p proof
	if !decode(w, r, &p) {
		return
	}
	s.mu.Lock()
	exp, ok := s.nonces[p.Nonce]
	delete(s.nonces, p.Nonce)
	s.mu.Unlock()
	refused := account.Errorf(account.KindRefused, "this process does not hold the owner's key pair for its broker address "+
		"(another secret, key id or address than the account's owner), or its proof was made on another connection than the owner's "+
		"(relayed by a host posing as the owner); nothing was sent")
	if !ok || s.clk.Now().After(exp) {
		fail(w, account.Errorf(account.KindRefused, "the owner's challenge expired or was answered already; nothing was sent"))
		return
	}
	ch, err := channel(r.TLS, s.pin)
	if err != nil {
		fail(w, err)
		return
	}
	baseURL := s.hello().BaseURL
	id, mac, err := s.prover.Prove(challenge("follower", p.Nonce, baseURL, ch))
	if err != nil || p.Identity != id || !hmac.Equal(p.MAC, mac) {
		fail(w, refused)
		return
	}
	_, mine, err := s.prover.Prove(challenge("owner", p.Nonce, baseURL, ch))
	if err != nil {
		fail(w, err)
		return
	}
	token := rand.Text()
	now := time.Now()
	s.mu.Lock()
	for t, exp := range s.sessions {
		if now.After(exp) {
			delete(s.sessions, t)
		}
	}
	s.sessions[token] = now.Add(sessionTTL)
	s.mu.Unlock()
	send(w, earnedSession{Session: token, MAC: mine})
}

// earned wraps h: a request without a session earned is refused.
func (s *server) earned(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		exp, ok := s.sessions[r.Header.Get(sessionHeader)]
		s.mu.Unlock()
		if !ok || time.Now().After(exp) {
			w.Header().Set(sessionHeader, "expired")
			fail(w, account.Errorf(account.KindRefused, "no session, or it expired: prove the owner's credentials first; nothing was sent"))
			return
		}
		h.ServeHTTP(w, r)
	})
}

func (s *server) routes() http.Handler {
	open := http.NewServeMux()
	open.HandleFunc("GET /v1/hello", s.greet)
	open.HandleFunc("POST /v1/session", s.prove)
	mux := http.NewServeMux()
	open.Handle("/", s.earned(mux))
	handle(mux, "/v1/locate", s, account.Account.Locate)
	handle(mux, "/v1/quote", s, account.Account.Quote)
	handle(mux, "/v1/credit-back", s, account.Account.CreditBack)
	handle(mux, "/v1/short", s, account.Account.Short)
	handle(mux, "/v1/place-order", s, account.Account.PlaceOrder)
	handle(mux, "/v1/cancel-order", s, account.Account.CancelOrder)
	handle(mux, "/v1/status", s, account.Account.Status)
	handle(mux, "/v1/fees", s, account.Account.Fees)
	handle(mux, "/v1/today", s, account.Account.Today)
	handle(mux, "/v1/read", s, account.Account.Read)
	handle(mux, "/v1/answer", s, func(a account.Account, ctx context.Context, req account.AnswerRequest) (struct{}, error) {
		return struct{}{}, a.Answer(ctx, req)
	})
	handle(mux, "/v1/cancel", s, func(a account.Account, ctx context.Context, req account.CancelRequest) (struct{}, error) {
		return struct{}{}, a.Cancel(ctx, req)
	})
	mux.HandleFunc("POST /v1/job", s.job)
	mux.HandleFunc("POST /v1/job/stop", s.jobStop)
	mux.HandleFunc("GET /v1/follow", s.follow)
	mux.HandleFunc("GET /v1/subscribe", s.subscribe)
	mux.HandleFunc("GET /v1/questions", s.questions)
	mux.HandleFunc("POST /v1/reply", s.reply)
	return open
}

// handle serves one call of the API: its request decoded, the caller's
// view of the account, its answer encoded.
func handle[Req, Resp any](mux *http.ServeMux, path string, s *server, call func(account.Account, context.Context, Req) (Resp, error)) {
	mux.HandleFunc("POST "+path, func(w http.ResponseWriter, r *http.Request) {
		a, ok := s.session(w, r)
		if !ok {
			return
		}
		var req Req
		if !decode(w, r, &req) {
			return
		}
		resp, err := call(a, r.Context(), req)
		if err != nil {
			fail(w, err)
			return
		}
		send(w, resp)
	})
}

// askOverStream stands for a follower's prompt in its session: the
// follower answers on its question stream, where Local routes the
// questions by the caller's id; this function itself is never asked.
func askOverStream(context.Context, account.Question) bool { return false }

// session is the account as the request's caller sees it.
func (s *server) session(w http.ResponseWriter, r *http.Request) (account.Account, bool) {
	var c wireCaller
	if err := json.Unmarshal([]byte(r.Header.Get(callerHeader)), &c); err != nil || c.ID == "" {
		fail(w, account.Errorf(account.KindInput, "the request names no caller"))
		return nil, false
	}
	caller := account.Caller{ID: c.ID, Name: c.Name, Env: envOf(c.Env)}
	if c.CanAsk {
		caller.Ask = askOverStream
	}
	return s.l.As(caller), true
}

func (s *server) job(w http.ResponseWriter, r *http.Request) {
	a, ok := s.session(w, r)
	if !ok {
		return
	}
	var call jobCall
	if !decode(w, r, &call) {
		return
	}
	// The run is stopped gently: by /v1/job/stop, or when the follower
	// goes away (its request's context ends).
	ctx, stop := context.WithCancel(r.Context())
	defer stop()
	if call.Ref != "" {
		s.mu.Lock()
		s.jobs[call.Ref] = stop
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			delete(s.jobs, call.Ref)
			s.mu.Unlock()
		}()
	}
	res, err := a.RunJob(ctx, call.JobRequest)
	if err != nil {
		fail(w, err)
		return
	}
	send(w, res)
}

func (s *server) jobStop(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Ref string `json:"ref"`
	}
	if !decode(w, r, &req) {
		return
	}
	s.mu.Lock()
	stop := s.jobs[req.Ref]
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
	send(w, struct{}{})
}

// stream starts a response of newline-delimited messages.
func stream(w http.ResponseWriter) func(message) bool {
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	fl, _ := w.(http.Flusher)
	if fl != nil {
		fl.Flush()
	}
	return func(m message) bool {
		if err := enc.Encode(m); err != nil {
			return false
		}
		if fl != nil {
			fl.Flush()
		}
		return true
	}
}

func (s *server) follow(w http.ResponseWriter, r *http.Request) {
	a, ok := s.session(w, r)
	if !ok {
		return
	}
	put := stream(w)
	q := r.URL.Query()
	end, err := a.Follow(r.Context(), account.FollowRequest{ID: q.Get("id"), FromStart: q.Get("fromStart") == "1"}, func(u account.Update) {
		put(message{Update: &u})
	})
	switch {
	case err != nil && r.Context().Err() == nil:
		put(message{Error: classify(err)})
	case err == nil:
		put(message{End: end})
	}
}

func (s *server) subscribe(w http.ResponseWriter, r *http.Request) {
	a, ok := s.session(w, r)
	if !ok {
		return
	}
	updates, err := a.Subscribe(r.Context())
	if err != nil {
		fail(w, err)
		return
	}
	put := stream(w)
	for u := range updates {
		if !put(message{Update: &u}) {
			return
		}
	}
}

// questions puts the questions of the caller's requests to it, for as
// long as its stream stays open, and takes its replies from /v1/reply.
func (s *server) questions(w http.ResponseWriter, r *http.Request) {
	var c wireCaller
	if err := json.Unmarshal([]byte(r.Header.Get(callerHeader)), &c); err != nil || c.ID == "" {
		fail(w, account.Errorf(account.KindInput, "the request names no caller"))
		return
	}
	put := stream(w)
	var mu sync.Mutex // one writer at a time on the stream
	lines := func(m message) bool {
		mu.Lock()
		defer mu.Unlock()
		return put(m)
	}
	streamGone := r.Context().Done()
	release := s.l.Listen(c.ID, func(ctx context.Context, q account.Question) bool {
		ch := make(chan bool, 1)
		s.mu.Lock()
		s.replies[q.ID] = ch
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			delete(s.replies, q.ID)
			s.mu.Unlock()
		}()
		if !lines(message{Question: &q}) {
			return false
		}
		select {
		case ok := <-ch:
			return ok
		case <-ctx.Done():
			lines(message{Withdrawn: q.ID, Answered: errors.Is(context.Cause(ctx), account.ErrAnsweredElsewhere)})
			return false
		case <-streamGone:
			return false
		}
	})
	defer release()
	<-streamGone
}

func (s *server) reply(w http.ResponseWriter, r *http.Request) {
	var rep reply
	if !decode(w, r, &rep) {
		return
	}
	s.mu.Lock()
	ch := s.replies[rep.Question]
	s.mu.Unlock()
	if ch == nil {
		fail(w, account.Errorf(account.KindNotOpen, "no question "+rep.Question+" waits (answered or withdrawn)"))
		return
	}
	select {
	case ch <- rep.Accept:
	default:
	}
	send(w, struct{}{})
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(v); err != nil {
		fail(w, account.Errorf(account.KindInput, "bad request: "+err.Error()))
		return false
	}
	return true
}

func send(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnprocessableEntity)
	json.NewEncoder(w).Encode(classify(err))
}

// Client is a follower's account API: every call is carried to the
// owner's Local over its socket. A transport failure is an error of kind
// KindOwnerGone, on which the follower's handle finds the next owner.
type Client struct {
	base    string // http://owner on the socket, https://owner over TLS
	dial    func(context.Context) (net.Conn, error)
	caller  account.Caller
	header  string
	http    *http.Client
	prover  Prover
	baseURL string

	mu      sync.Mutex
	session string // earned by proving the owner's credentials

	stop   context.CancelFunc
	asking sync.WaitGroup
}

var _ account.Account = (*Client)(nil)

// Dial returns the account API of the owner serving at endpoint (a unix
// socket), for caller, who holds the credentials prover proves for the
// broker address baseURL: the owner serves only a follower holding its
// own. Nothing is sent until a call, except that a caller who answers
// questions opens its question stream at once. A socket whose process is
// another user's is refused (SO_PEERCRED) before anything is sent.
func Dial(endpoint string, caller account.Caller, prover Prover, baseURL string) *Client {
	dial := func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, "unix", endpoint)
		if err != nil {
			return nil, err
		}
		if err := checkPeer(c, endpoint); err != nil {
			c.Close()
			return nil, err
		}
		return c, nil
	}
	return newClient("http://owner", dial, caller, prover, baseURL)
}

// newClient is a Client of the owner at base, reached by dial.
func newClient(base string, dial func(context.Context) (net.Conn, error), caller account.Caller, prover Prover, baseURL string) *Client {
	if caller.ID == "" {
		caller.ID = uuid.NewString()
	}
	h, _ := json.Marshal(wireCaller{ID: caller.ID, Name: caller.Name, Env: string(caller.Env), CanAsk: caller.Ask != nil})
	c := &Client{base: base, dial: dial, caller: caller, header: string(h), prover: prover, baseURL: baseURL}
	c.http = &http.Client{Transport: c.transport(dial)}
	ctx, stop := context.WithCancel(context.Background())
	c.stop = stop
	if caller.Ask != nil {
		c.asking.Add(1)
		go c.answer(ctx)
	}
	return c
}

// transport carries requests over the connections dial makes.
func (c *Client) transport(dial func(context.Context) (net.Conn, error)) *http.Transport {
	d := func(ctx context.Context, _, _ string) (net.Conn, error) { return dial(ctx) }
	if strings.HasPrefix(c.base, "https:") {
		return &http.Transport{DialTLSContext: d}
	}
	return &http.Transport{DialContext: d}
}

// Close stops answering questions and closes idle connections.
func (c *Client) Close() {
	c.stop()
	c.asking.Wait()
	c.http.CloseIdleConnections()
}

// authenticate earns a session, once: the owner's challenge answered with
// this process's credentials, on one connection of its own (the proof is
// bound to it: see channel), and the owner's proof back checked.
func (c *Client) authenticate(ctx context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.session != "" {
		return c.session, nil
	}
	if c.prover == nil {
		return "", account.Errorf(account.KindRefused, "this process holds no credentials to prove to the owner; nothing was sent")
	}
	var conns int
	tr := c.transport(func(ctx context.Context) (net.Conn, error) {
		if conns++; conns > 1 {
			return nil, errors.New("the owner closed the connection of the proof")
		}
		return c.dial(ctx)
	})
	defer tr.CloseIdleConnections()
	one := &http.Client{Transport: tr}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/v1/hello", nil)
	if err != nil {
		return "", err
	}
	resp, err := one.Do(req)
	if err != nil {
		return "", c.gone(ctx, err)
	}
	var hello Hello
	err = readAnswer(resp, &hello)
	if err != nil {
		return "", c.gone(ctx, err)
	}
	ch, err := channel(resp.TLS, pinShown(resp.TLS))
	if err != nil {
		return "", err
	}
	id, mac, err := c.prover.Prove(challenge("follower", hello.Nonce, c.baseURL, ch))
	if err != nil {
		return "", account.Errorf(account.KindRefused, "this process cannot prove the owner's credentials: "+err.Error()+"; nothing was sent")
	}
	b, _ := json.Marshal(proof{Nonce: hello.Nonce, Identity: id, MAC: mac, BaseURL: c.baseURL})
	req, err = http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/v1/session", bytes.NewReader(b))
	if err != nil {
		return "", err
	}
	resp, err = one.Do(req)
	if err != nil {
		return "", c.gone(ctx, err)
	}
	var out earnedSession
	if err := readAnswer(resp, &out); err != nil {
		return "", c.gone(ctx, err)
	}
	_, want, err := c.prover.Prove(challenge("owner", hello.Nonce, c.baseURL, ch))
	if err != nil || !hmac.Equal(out.MAC, want) {
		return "", account.Errorf(account.KindRefused, "the owner did not prove it holds this account's key pair on this connection "+
			"(a host posing as the owner); nothing was sent")
	}
	c.session = out.Session
	return c.session, nil
}

// pinShown is the pin of the certificate the owner showed on a
// connection.
func pinShown(cs *tls.ConnectionState) string {
	if cs == nil || len(cs.PeerCertificates) == 0 {
		return ""
	}
	return pinOf(cs.PeerCertificates[0])
}

// Hello asks who owns the account, through which database.
func (c *Client) Hello(ctx context.Context) (*Hello, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/v1/hello", nil)
	if err != nil {
		return nil, err
	}
	var out Hello
	return &out, c.do(req, &out)
}

func (c *Client) Locate(ctx context.Context, req account.LocateRequest) (*account.LocateResult, error) {
	var out account.LocateResult
	return &out, c.post(ctx, "/v1/locate", req, &out)
}

func (c *Client) Quote(ctx context.Context, req account.QuoteRequest) (*account.LocateResult, error) {
	var out account.LocateResult
	return &out, c.post(ctx, "/v1/quote", req, &out)
}

func (c *Client) CreditBack(ctx context.Context, req account.CreditBackRequest) (*account.CreditBackResult, error) {
	var out account.CreditBackResult
	return &out, c.post(ctx, "/v1/credit-back", req, &out)
}

func (c *Client) Short(ctx context.Context, req account.ShortRequest) (*account.ShortResult, error) {
	var out account.ShortResult
	return &out, c.post(ctx, "/v1/short", req, &out)
}

func (c *Client) PlaceOrder(ctx context.Context, req account.PlaceOrderRequest) (*workflow.Order, error) {
	var out workflow.Order
	return &out, c.post(ctx, "/v1/place-order", req, &out)
}

func (c *Client) CancelOrder(ctx context.Context, req account.CancelOrderRequest) (*workflow.Order, error) {
	var out workflow.Order
	return &out, c.post(ctx, "/v1/cancel-order", req, &out)
}

func (c *Client) Answer(ctx context.Context, req account.AnswerRequest) error {
	return c.post(ctx, "/v1/answer", req, nil)
}

func (c *Client) Cancel(ctx context.Context, req account.CancelRequest) error {
	return c.post(ctx, "/v1/cancel", req, nil)
}

func (c *Client) Status(ctx context.Context, req account.StatusRequest) (*account.Status, error) {
	var out account.Status
	return &out, c.post(ctx, "/v1/status", req, &out)
}

func (c *Client) Fees(ctx context.Context, req account.FeesRequest) (*account.FeesResult, error) {
	var out account.FeesResult
	return &out, c.post(ctx, "/v1/fees", req, &out)
}

func (c *Client) Today(ctx context.Context, req account.TodayRequest) (*account.Today, error) {
	var out account.Today
	return &out, c.post(ctx, "/v1/today", req, &out)
}

func (c *Client) Read(ctx context.Context, req account.ReadRequest) (*account.ReadResult, error) {
	var out account.ReadResult
	return &out, c.post(ctx, "/v1/read", req, &out)
}

// RunJob hands the run to the owner; ctx's end asks the owner to drain it
// (its grace for the step in flight), and RunJob still waits for its
// record.
func (c *Client) RunJob(ctx context.Context, req account.JobRequest) (*account.JobResult, error) {
	call := jobCall{JobRequest: req, Ref: uuid.NewString()}
	finished := make(chan struct{})
	defer close(finished)
	go func() {
		select {
		case <-ctx.Done():
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			c.post(sctx, "/v1/job/stop", map[string]string{"ref": call.Ref}, nil)
		case <-finished:
		}
	}()
	var out account.JobResult
	if err := c.post(context.WithoutCancel(ctx), "/v1/job", call, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func (c *Client) Follow(ctx context.Context, req account.FollowRequest, on func(account.Update)) (*workflow.Workflow, error) {
	var end *workflow.Workflow
	q := url.Values{"id": {req.ID}}
	if req.FromStart {
		q.Set("fromStart", "1")
	}
	err := c.lines(ctx, "/v1/follow?"+q.Encode(), nil, func(m message) (bool, error) {
		switch {
		case m.Error != nil:
			return true, m.Error
		case m.End != nil:
			end = m.End
			return true, nil
		case m.Update != nil && on != nil:
			on(*m.Update)
		}
		return false, nil
	})
	return end, err
}

func (c *Client) Subscribe(ctx context.Context) (<-chan account.Update, error) {
	ch := make(chan account.Update, 256)
	ready := make(chan error, 1)
	go func() {
		defer close(ch)
		opened := func() { ready <- nil }
		err := c.lines(ctx, "/v1/subscribe", opened, func(m message) (bool, error) {
			if m.Update != nil {
				select {
				case ch <- *m.Update:
				case <-ctx.Done():
					return true, nil
				}
			}
			return false, nil
		})
		select {
		case ready <- err:
		default:
		}
	}()
	// The stream's headers arrive once the owner has subscribed: nothing
	// after this returns is missed.
	select {
	case err := <-ready:
		return ch, err
	case <-ctx.Done():
		return ch, ctx.Err()
	}
}

// answer keeps the question stream open while the client lives, putting
// each question to the caller's Ask and replying.
func (c *Client) answer(ctx context.Context) {
	defer c.asking.Done()
	var wg sync.WaitGroup
	defer wg.Wait()
	var mu sync.Mutex
	withdraw := map[string]context.CancelCauseFunc{}
	for ctx.Err() == nil {
		c.lines(ctx, "/v1/questions", nil, func(m message) (bool, error) {
			switch {
			case m.Withdrawn != "":
				mu.Lock()
				if cancel := withdraw[m.Withdrawn]; cancel != nil {
					cause := context.DeadlineExceeded
					if m.Answered {
						cause = account.ErrAnsweredElsewhere
					}
					cancel(cause)
				}
				mu.Unlock()
			case m.Question != nil:
				// No deadline of this machine's clock: the owner withdraws
				// the question when its deadline passes on the owner's.
				q := *m.Question
				qctx, cancel := context.WithCancelCause(ctx)
				mu.Lock()
				withdraw[q.ID] = cancel
				mu.Unlock()
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer cancel(nil)
					ok := c.caller.Ask(qctx, q)
					mu.Lock()
					delete(withdraw, q.ID)
					mu.Unlock()
					if qctx.Err() == nil {
						c.post(context.WithoutCancel(ctx), "/v1/reply", reply{Question: q.ID, Accept: ok}, nil)
					}
				}()
			}
			return false, nil
		})
		// The owner went away: the handle dials the next one; until then
		// look again now and then.
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// lines reads a stream of messages until each says stop, ctx ends or the
// stream breaks (KindOwnerGone); opened, when set, is called once the
// owner has answered and the stream is in place.
func (c *Client) lines(ctx context.Context, path string, opened func(), each func(message) (bool, error)) error {
	var resp *http.Response
	for try := 0; ; try++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
		if err != nil {
			return err
		}
		req.Header.Set(callerHeader, c.header)
		session, err := c.authorize(ctx, req)
		if err != nil {
			return err
		}
		if resp, err = c.http.Do(req); err != nil {
			return c.gone(ctx, err)
		}
		if try > 0 || !c.expired(resp, session) {
			break
		}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return decodeError(resp)
	}
	if opened != nil {
		opened()
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		var m message
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return fmt.Errorf("service: %s: %w", path, err)
		}
		if stop, err := each(m); stop || err != nil {
			return err
		}
	}
	return c.gone(ctx, sc.Err())
}

func (c *Client) post(ctx context.Context, path string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	for try := 0; ; try++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(b))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(callerHeader, c.header)
		session, err := c.authorize(ctx, req)
		if err != nil {
			return err
		}
		resp, err := c.http.Do(req)
		if err != nil {
			return c.gone(ctx, err)
		}
		if try == 0 && c.expired(resp, session) {
			continue
		}
		if err := readAnswer(resp, out); err != nil {
			return c.gone(ctx, err)
		}
		return nil
	}
}

// expired reports whether resp refused session as expired, forgetting it
// (and closing resp) so that the next request earns another.
func (c *Client) expired(resp *http.Response, session string) bool {
	if resp.StatusCode == http.StatusOK || resp.Header.Get(sessionHeader) != "expired" {
		return false
	}
	resp.Body.Close()
	c.mu.Lock()
	if c.session == session {
		c.session = ""
	}
	c.mu.Unlock()
	return true
}

// authorize sets req's session, earning one first when there is none.
func (c *Client) authorize(ctx context.Context, req *http.Request) (string, error) {
	session, err := c.authenticate(ctx)
	if err != nil {
		return "", err
	}
	req.Header.Set(sessionHeader, session)
	return session, nil
}

func (c *Client) do(req *http.Request, out any) error {
	resp, err := c.http.Do(req)
	if err != nil {
		return c.gone(req.Context(), err)
	}
	if err := readAnswer(resp, out); err != nil {
		return c.gone(req.Context(), err)
	}
	return nil
}

// readAnswer decodes resp's body into out (when set), or its error, and
// closes it, read to its end so that its connection serves the next
// request (the proof's hello and session share one).
func readAnswer(resp *http.Response, out any) error {
	defer func() {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
	}()
	if resp.StatusCode != http.StatusOK {
		return decodeError(resp)
	}
	if out == nil {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// gone is ctx's error when the caller gave up, the owner's (or the
// connection's checks') own error, else KindOwnerGone.
func (c *Client) gone(ctx context.Context, err error) error {
	var e *account.Error
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.As(err, &e):
		return e
	}
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	return account.Errorf(account.KindOwnerGone, fmt.Sprintf("the account's owner went away: %v", err))
}

// decodeError is the owner's error answer.
func decodeError(resp *http.Response) error {
	var e account.Error
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&e); err != nil || e.Kind == "" {
		return account.Errorf(account.KindFailed, "the owner answered "+resp.Status)
	}
	return &e
}

// errClosed is returned by a handle used after Close.
var errClosed = errors.New("service: the account handle is closed")
