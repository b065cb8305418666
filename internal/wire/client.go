package wire

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
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
	"github.com/locatorhq/locator/workflow"
)

// Client is a follower's account API: every call is carried to the
// owner's local.Account over its socket. A transport failure is an error of kind
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
	h, _ := json.Marshal(wireCaller{ID: caller.ID, Name: caller.Name, Env: caller.Env, CanAsk: caller.Ask != nil})
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

// Authenticate earns a session, once: the owner's challenge answered with
// this process's credentials, on one connection of its own (the proof is
// bound to it: see channel), and the owner's proof back checked.
func (c *Client) Authenticate(ctx context.Context) (string, error) {
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
	req, err := request(ctx, c.base, opHello, noBody{})
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
	req, err = request(ctx, c.base, opSession, proof{Nonce: hello.Nonce, Identity: id, MAC: mac, BaseURL: c.baseURL})
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
	return PinOf(cs.PeerCertificates[0])
}

// HelloAt asks the owner listening on the socket at endpoint who it is,
// within wait, on a connection of its own closed after: a hello needs no
// session, so it tells a live owner from a socket nobody serves yet (or
// any more) without proving a key pair.
func HelloAt(ctx context.Context, endpoint string, wait time.Duration) (*Hello, error) {
	c := Dial(endpoint, account.Caller{Name: "hello"}, nil, "")
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	return c.Hello(ctx)
}

// Hello asks who owns the account, through which database.
func (c *Client) Hello(ctx context.Context) (*Hello, error) {
	req, err := request(ctx, c.base, opHello, noBody{})
	if err != nil {
		return nil, err
	}
	var out Hello
	return &out, c.do(req, &out)
}

func (c *Client) Locate(ctx context.Context, req account.LocateRequest) (*account.LocateResult, error) {
	return call(ctx, c, opLocate, req)
}

func (c *Client) Quote(ctx context.Context, req account.QuoteRequest) (*account.LocateResult, error) {
	return call(ctx, c, opQuote, req)
}

func (c *Client) CreditBack(ctx context.Context, req account.CreditBackRequest) (*account.CreditBackResult, error) {
	return call(ctx, c, opCreditBack, req)
}

func (c *Client) Short(ctx context.Context, req account.ShortRequest) (*account.ShortResult, error) {
	return call(ctx, c, opShort, req)
}

func (c *Client) PlaceOrder(ctx context.Context, req account.PlaceOrderRequest) (*workflow.Order, error) {
	return call(ctx, c, opPlaceOrder, req)
}

func (c *Client) CancelOrder(ctx context.Context, req account.CancelOrderRequest) (*workflow.Order, error) {
	return call(ctx, c, opCancelOrder, req)
}

func (c *Client) Answer(ctx context.Context, req account.AnswerRequest) error {
	_, err := call(ctx, c, opAnswer, req)
	return err
}

func (c *Client) Cancel(ctx context.Context, req account.CancelRequest) error {
	_, err := call(ctx, c, opCancel, req)
	return err
}

func (c *Client) Status(ctx context.Context, req account.StatusRequest) (*account.Status, error) {
	return call(ctx, c, opStatus, req)
}

func (c *Client) Fees(ctx context.Context, req account.FeesRequest) (*account.FeesResult, error) {
	return call(ctx, c, opFees, req)
}

func (c *Client) Today(ctx context.Context, req account.TodayRequest) (*account.Today, error) {
	return call(ctx, c, opToday, req)
}

func (c *Client) Read(ctx context.Context, req account.ReadRequest) (*account.ReadResult, error) {
	return call(ctx, c, opRead, req)
}

func (c *Client) Records(ctx context.Context, req account.RecordsRequest) (*account.Records, error) {
	return call(ctx, c, opRecords, req)
}

func (c *Client) Report(ctx context.Context, req account.ReportRequest) (*locator.Report, error) {
	return call(ctx, c, opReport, req)
}

func (c *Client) Audit(ctx context.Context, req account.AuditRequest) (*locator.AuditTrail, error) {
	return call(ctx, c, opAudit, req)
}

func (c *Client) Plan(ctx context.Context, req account.PlanRequest) (*account.PlanResult, error) {
	return call(ctx, c, opPlan, req)
}

func (c *Client) Size(ctx context.Context, req account.SizeRequest) (*locator.Sizing, error) {
	return call(ctx, c, opSize, req)
}

// RunJob hands the run to the owner; ctx's end asks the owner to drain it
// (its grace for the step in flight), and RunJob still waits for its
// record.
func (c *Client) RunJob(ctx context.Context, req account.JobRequest) (*account.JobResult, error) {
	run := jobCall{JobRequest: req, Ref: uuid.NewString()}
	finished := make(chan struct{})
	defer close(finished)
	go func() {
		select {
		case <-ctx.Done():
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			call(sctx, c, opJobStop, jobStop{Ref: run.Ref})
		case <-finished:
		}
	}()
	return call(context.WithoutCancel(ctx), c, opJob, run)
}

func (c *Client) Follow(ctx context.Context, req account.FollowRequest, on func(account.Update)) (*workflow.Workflow, error) {
	var end *workflow.Workflow
	q := url.Values{"id": {req.ID}}
	if req.FromStart {
		q.Set("fromStart", "1")
	}
	err := c.lines(ctx, opFollow.path+"?"+q.Encode(), nil, func(m message) (bool, error) {
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
		err := c.lines(ctx, opSubscribe.path, opened, func(m message) (bool, error) {
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

// Watch: see account.Reader; the owner relays the stream over the
// connection, and a connection that breaks is KindOwnerGone.
func (c *Client) Watch(ctx context.Context, req account.WatchRequest, on func(account.WatchEvent)) error {
	q := url.Values{"stream": {string(req.Stream)}}
	return c.lines(ctx, opWatch.path+"?"+q.Encode(), nil, func(m message) (bool, error) {
		switch {
		case m.Error != nil:
			return true, m.Error
		case m.Watch != nil && on != nil:
			on(*m.Watch)
		}
		return false, nil
	})
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
		c.lines(ctx, opQuestions.path, nil, func(m message) (bool, error) {
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
						call(context.WithoutCancel(ctx), c, opReply, reply{Question: q.ID, Accept: ok})
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
			return fmt.Errorf("wire: %s: %w", path, err)
		}
		if stop, err := each(m); stop || err != nil {
			return err
		}
	}
	return c.gone(ctx, sc.Err())
}

// call carries req to the owner by o (a POST) and returns its answer,
// earning a session first when there is none and again, once, when the
// owner says it expired.
func call[Req, Resp any](ctx context.Context, c *Client, o op[Req, Resp], req Req) (*Resp, error) {
	for try := 0; ; try++ {
		r, err := request(ctx, c.base, o, req)
		if err != nil {
			return nil, err
		}
		r.Header.Set(callerHeader, c.header)
		session, err := c.authorize(ctx, r)
		if err != nil {
			return nil, err
		}
		resp, err := c.http.Do(r)
		if err != nil {
			return nil, c.gone(ctx, err)
		}
		if try == 0 && c.expired(resp, session) {
			continue
		}
		var out Resp
		if err := readAnswer(resp, &out); err != nil {
			return nil, c.gone(ctx, err)
		}
		return &out, nil
	}
}

// request is req as an HTTP request by o to the owner at base: JSON in
// its body, none for noBody.
func request[Req, Resp any](ctx context.Context, base string, o op[Req, Resp], req Req) (*http.Request, error) {
	var body io.Reader
	if _, none := any(req).(noBody); !none {
		b, err := json.Marshal(req)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(b)
	}
	r, err := http.NewRequestWithContext(ctx, o.method, base+o.path, body)
	if err != nil {
		return nil, err
	}
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	return r, nil
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
	session, err := c.Authenticate(ctx)
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
