package wire

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/locatorhq/locator/account"
)

// Served is the account an owner serves: each caller's view of it (As:
// local.Account's, where every rule lives) and the stream a caller's
// questions go to (Listen).
type Served interface {
	As(c account.Caller) account.Account
	Listen(id string, ask func(context.Context, account.Question) bool) (release func())
}

// Server serves the account API of one owner on its socket and, over
// TLS, to other hosts.
type Server struct {
	l      Served
	hello  func() Hello
	prover Prover // the owner's credentials, which a follower must hold too
	pin    string // of the owner's certificate on the network, if any

	mu       sync.Mutex
	replies  map[string]chan bool          // questions waiting for their reply
	jobs     map[string]context.CancelFunc // job runs, by ref
	nonces   map[string]time.Time          // challenges handed out, by expiry
	sessions map[string]time.Time          // sessions earned, by expiry (real time)
}

// NewServer serves l for an owner whose hello says who it is, to
// followers that prove they hold prover's credentials (on the channel of
// the certificate pinned as pin, over TLS).
func NewServer(l Served, hello func() Hello, prover Prover, pin string) *Server {
	return &Server{l: l, hello: hello, prover: prover, pin: pin, replies: map[string]chan bool{}, jobs: map[string]context.CancelFunc{},
		nonces: map[string]time.Time{}, sessions: map[string]time.Time{}}
}

// greet is hello with a fresh challenge.
func (s *Server) greet(w http.ResponseWriter, _ *http.Request) {
	h := s.hello()
	h.Nonce = rand.Text()
	// A challenge is fresh in real time: the handshake is between two
	// processes on this machine or the network, whatever the engine's clock
	// says (a virtual clock may run minutes ahead during one handshake).
	now := time.Now()
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
func (s *Server) prove(w http.ResponseWriter, r *http.Request) {
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
	if !ok || time.Now().After(exp) {
		fail(w, account.Errorf(account.KindRefused, "the owner's challenge expired or was answered already; nothing was sent"))
		return
	}
	ch, err := channel(tlsState(r), s.pin)
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

// guard wraps r's handler h with who may call it: on a bearer's
// connection, a bearer caller (bearerCaller) on any route but the open
// and person ones; elsewhere anyone on the open routes, and on the others
// a caller in a session the handshake earned.
func (s *Server) guard(r route, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if host, ok := bearerCaller(req.Context()); ok {
			if r.open || r.person {
				fail(w, account.Errorf(account.KindRefused, fmt.Sprintf("%s is not served to a bearer (the follower host %s's credential): "+
					"it is locator's own followers', which prove the account's key pair; nothing was sent", r.path, host)))
				return
			}
			h.ServeHTTP(w, req)
			return
		}
		if r.open {
			h.ServeHTTP(w, req)
			return
		}
		s.mu.Lock()
		exp, ok := s.sessions[req.Header.Get(sessionHeader)]
		s.mu.Unlock()
		if !ok || time.Now().After(exp) {
			w.Header().Set(sessionHeader, "expired")
			fail(w, account.Errorf(account.KindRefused, "no session, or it expired: prove the owner's credentials first; nothing was sent"))
			return
		}
		h.ServeHTTP(w, req)
	})
}

// bearerHost is the context key of the follower host whose credential a
// bearer's request carries.
type bearerHost struct{}

// bearerCaller says whether the request came from a bearer, and the
// follower host whose credential it carries. A bearer caller proves no
// key pair: it answers no question (a policy must decide alone), forces
// nothing past the owner's guards (forced), and is refused the routes of
// locator's own followers (the handshake, questions and replies, answers,
// job runs).
func bearerCaller(ctx context.Context) (string, bool) {
	host, ok := ctx.Value(bearerHost{}).(string)
	return host, ok
}

// bearers checks the bearer of every request on a bearer's connection
// (see Network), before any route: its line in the followers file may
// have gone since the connection was admitted.
func bearers(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _ := r.Context().Value(connKey{}).(*bufferedConn)
		if c == nil || c.bearer == nil {
			h.ServeHTTP(w, r)
			return
		}
		host, err := c.bearer(r.Header.Get("Authorization"))
		switch {
		case err == errUpgrade:
			failStatus(w, http.StatusUpgradeRequired, err)
		case err != nil:
			w.Header().Set("WWW-Authenticate", `Bearer realm="locator"`)
			failStatus(w, http.StatusUnauthorized, err)
		default:
			h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), bearerHost{}, host)))
		}
	})
}

// route is one route of the account API served: its op's spec and types,
// and its handler. The table of routes (server.table) is the API's one
// description: routes serves it, and TestOpenAPI generates
// api/openapi.yaml from it and the JSON shapes of its types, and fails
// when the published document differs.
type route struct {
	spec
	// in is the request's body (nil: none), or with query its query
	// parameters; out is the answer, or with stream one line of it.
	in, out reflect.Type
	h       http.HandlerFunc
}

// table is every route of the account API: each op with its handler.
func (s *Server) table() []route {
	return []route{
		opHello.route(s.greet),
		opSession.route(s.prove),
		calls(s, opLocate, account.Account.Locate),
		calls(s, opQuote, account.Account.Quote),
		calls(s, opCreditBack, account.Account.CreditBack),
		calls(s, opShort, account.Account.Short),
		calls(s, opPlaceOrder, account.Account.PlaceOrder),
		calls(s, opCancelOrder, account.Account.CancelOrder),
		calls(s, opStatus, account.Account.Status),
		calls(s, opFees, account.Account.Fees),
		calls(s, opToday, account.Account.Today),
		calls(s, opRead, account.Account.Read),
		calls(s, opRecords, account.Account.Records),
		calls(s, opReport, account.Account.Report),
		calls(s, opAudit, account.Account.Audit),
		calls(s, opPlan, account.Account.Plan),
		calls(s, opSize, account.Account.Size),
		calls(s, opAnswer, func(a account.Account, ctx context.Context, req account.AnswerRequest) (*struct{}, error) {
			return &struct{}{}, a.Answer(ctx, req)
		}),
		calls(s, opCancel, func(a account.Account, ctx context.Context, req account.CancelRequest) (*struct{}, error) {
			return &struct{}{}, a.Cancel(ctx, req)
		}),
		opJob.route(s.job),
		opJobStop.route(s.jobStop),
		opFollow.route(s.follow),
		opSubscribe.route(s.subscribe),
		opWatch.route(s.watch),
		opQuestions.route(s.questions),
		opReply.route(s.reply),
	}
}

// ExpireSessions ends every session followers earned, as sessionTTL
// passing would: their next call proves the key pair again (what tests of
// that path do instead of waiting out the TTL).
func (s *Server) ExpireSessions() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for t := range s.sessions {
		s.sessions[t] = time.Time{}
	}
}

// Routes is the API's handler: the hello and the handshake open, every
// other route only in a session the handshake earned, or to a bearer (see
// guard). Whatever it answers besides a route's answer is an
// account.Error as JSON, the document's one shape of an error: a path it
// does not serve (404), a method its path does not take (405), a bearer
// refused (401, 426), a handler that failed (500).
func (s *Server) Routes() http.Handler {
	mux := http.NewServeMux()
	methods := map[string][]string{}
	for _, r := range s.table() {
		mux.Handle(r.method+" "+r.path, s.guard(r, r.h))
		methods[r.path] = append(methods[r.path], r.method)
	}
	for path, allowed := range methods {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", strings.Join(allowed, ", "))
			failStatus(w, http.StatusMethodNotAllowed, account.Errorf(account.KindInput,
				fmt.Sprintf("%s takes %s, not %s; nothing was sent", path, strings.Join(allowed, " or "), r.Method)))
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		failStatus(w, http.StatusNotFound, account.Errorf(account.KindInput,
			fmt.Sprintf("no route %s in the account API (api/openapi.yaml lists them); nothing was sent", r.URL.Path)))
	})
	return recovered(bearers(mux))
}

// recovered answers a handler's panic as an error of KindFailed (500),
// in the document's shape, rather than by closing the connection.
func recovered(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				failStatus(w, http.StatusInternalServerError, account.Errorf(account.KindFailed, fmt.Sprintf("the owner failed on %s: %v", r.URL.Path, p)))
			}
		}()
		h.ServeHTTP(w, r)
	})
}

// calls is the route of one call of the API: its request decoded, the
// caller's view of the account, its answer encoded.
func calls[Req, Resp any](s *Server, o op[Req, Resp], f func(account.Account, context.Context, Req) (*Resp, error)) route {
	return o.route(func(w http.ResponseWriter, r *http.Request) {
		a, ok := s.session(w, r)
		if !ok {
			return
		}
		var req Req
		if !decode(w, r, &req) {
			return
		}
		if _, bearer := bearerCaller(r.Context()); bearer && forced(req) {
			fail(w, account.Errorf(account.KindRefused, "a bearer forces nothing past the owner's guards (force); nothing was sent"))
			return
		}
		resp, err := f(a, r.Context(), req)
		if err != nil {
			fail(w, err)
			return
		}
		send(w, resp)
	})
}

// forced reports whether req asks to pass one of the owner's guards:
// a credit-back above the unused shares, an order past the fat-finger
// guard.
func forced(req any) bool {
	switch r := req.(type) {
	case account.CreditBackRequest:
		return r.Force
	case account.ShortRequest:
		return r.Guard.Force
	case account.PlaceOrderRequest:
		return r.Guard.Force
	}
	return false
}

// askOverStream stands for a follower's prompt in its session: the
// follower answers on its question stream, where local.Account routes the
// questions by the caller's id; this function itself is never asked.
func askOverStream(context.Context, account.Question) bool { return false }

// session is the account as the request's caller sees it.
func (s *Server) session(w http.ResponseWriter, r *http.Request) (account.Account, bool) {
	c, ok := callerOf(w, r)
	if !ok {
		return nil, false
	}
	caller := account.Caller{ID: c.ID, Name: c.Name, Env: c.Env}
	if host, bearer := bearerCaller(r.Context()); bearer {
		caller.Name = fmt.Sprintf("%s (bearer of %s)", c.Name, host)
	} else if c.CanAsk {
		caller.Ask = askOverStream
	}
	return s.l.As(caller), true
}

// callerOf is the caller the request names in its callerHeader, held to
// the document as a body is; a request without one is refused.
func callerOf(w http.ResponseWriter, r *http.Request) (wireCaller, bool) {
	var c wireCaller
	h := r.Header.Get(callerHeader)
	if h == "" {
		fail(w, account.Errorf(account.KindInput, "the request names no caller (the header "+callerHeader+"); nothing was sent"))
		return c, false
	}
	if err := decodeJSON([]byte(h), &c); err != nil {
		fail(w, account.Errorf(account.KindInput, "the header "+callerHeader+": "+err.Error()+"; nothing was sent"))
		return c, false
	}
	if c.ID == "" {
		fail(w, account.Errorf(account.KindInput, "the header "+callerHeader+" names no caller id; nothing was sent"))
		return c, false
	}
	return c, true
}

func (s *Server) job(w http.ResponseWriter, r *http.Request) {
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

// jobStop names the job run to drain.
type jobStop struct {
	Ref string `json:"ref"`
}

func (s *Server) jobStop(w http.ResponseWriter, r *http.Request) {
	var req jobStop
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

func (s *Server) follow(w http.ResponseWriter, r *http.Request) {
	a, ok := s.session(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	if err := queryConforms(reflect.TypeFor[account.FollowRequest](), q); err != nil {
		fail(w, account.Errorf(account.KindInput, "bad request: "+err.Error()+"; nothing was sent"))
		return
	}
	put := stream(w)
	end, err := a.Follow(r.Context(), account.FollowRequest{ID: q.Get("id"), FromStart: q.Get("fromStart") == "1"}, func(u account.Update) {
		put(message{Update: &u})
	})
	switch {
	case err != nil && r.Context().Err() == nil:
		put(message{Error: account.AsError(err)})
	case err == nil:
		put(message{End: end})
	}
}

func (s *Server) subscribe(w http.ResponseWriter, r *http.Request) {
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

// watch relays a push stream of the broker's, as the owner follows it,
// for as long as the stream stays open; its query is held to the
// document first (an unknown stream is refused, nothing sent).
func (s *Server) watch(w http.ResponseWriter, r *http.Request) {
	a, ok := s.session(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	if err := queryConforms(reflect.TypeFor[account.WatchRequest](), q); err != nil {
		fail(w, account.Errorf(account.KindInput, "bad request: "+err.Error()+"; nothing was sent"))
		return
	}
	put := stream(w)
	err := a.Watch(r.Context(), account.WatchRequest{Stream: account.WatchStream(q.Get("stream"))}, func(e account.WatchEvent) {
		put(message{Watch: &e})
	})
	if err != nil && r.Context().Err() == nil {
		put(message{Error: account.AsError(err)})
	}
}

// questions puts the questions of the caller's requests to it, for as
// long as its stream stays open, and takes its replies from /v1/reply.
func (s *Server) questions(w http.ResponseWriter, r *http.Request) {
	c, ok := callerOf(w, r)
	if !ok {
		return
	}
	put := stream(w)
	// One writer at a time on the stream, and none once this handler
	// returns: a question may be put from another goroutine while the
	// stream goes (its caller gone), and a write after the handler
	// returned races with the server finishing the response.
	var mu sync.Mutex
	ended := false
	lines := func(m message) bool {
		mu.Lock()
		defer mu.Unlock()
		return !ended && put(m)
	}
	defer func() {
		mu.Lock()
		ended = true
		mu.Unlock()
	}()
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

func (s *Server) reply(w http.ResponseWriter, r *http.Request) {
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

// maxBody bounds a request's body.
const maxBody = 1 << 20

// decode decodes r's body into v, as decodeJSON holds it to the
// document; a body it refuses is answered with why (KindInput: 413 over
// maxBody, else 422).
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if tooLarge := (*http.MaxBytesError)(nil); errors.As(err, &tooLarge) {
		failStatus(w, http.StatusRequestEntityTooLarge, account.Errorf(account.KindInput,
			fmt.Sprintf("the request's body is over %d bytes; nothing was sent", maxBody)))
		return false
	}
	if err == nil {
		err = decodeJSON(body, v)
	}
	if err != nil {
		fail(w, account.Errorf(account.KindInput, "bad request: "+err.Error()+"; nothing was sent"))
		return false
	}
	return true
}

// decodeJSON decodes data into v (a pointer to a request type) as the
// published document allows it and nothing else: one JSON value, which
// conforms to v's type (required fields, decimals as strings, enums), of
// v's type and with no field v does not have.
func decodeJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "json: "))
	}
	if dec.More() {
		return errors.New("more than one JSON value")
	}
	if err := conforms(reflect.TypeOf(v).Elem(), raw, ""); err != nil {
		return err
	}
	dec = json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

func send(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// fail answers err as an account.Error: 422, the status of every error of
// the account's rules (its kind says which).
func fail(w http.ResponseWriter, err error) {
	failStatus(w, http.StatusUnprocessableEntity, err)
}

// failStatus answers err as an account.Error with status.
func failStatus(w http.ResponseWriter, status int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(account.AsError(err))
}
