package service

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"

	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/store"
	"github.com/locatorhq/locator/workflow"
)

// ErrOwnerGone: the owner could not be reached, or went away mid-request;
// the follower may take the account over (its lease lapses, or was
// released).
var ErrOwnerGone = errors.New("service: the account's owner went away")

// Remote is a follower's line to the owner of an account.
type Remote struct {
	lease store.Lease
	http  *http.Client
}

// Dial returns a line to the owner that holds lease; nothing is sent yet.
func Dial(lease store.Lease) *Remote {
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", lease.Endpoint)
	}}
	return &Remote{lease: lease, http: &http.Client{Transport: tr}}
}

// Owner is the lease of the process followed.
func (r *Remote) Owner() store.Lease { return r.lease }

// Locate hands a locate to the owner and returns its workflow id.
func (r *Remote) Locate(ctx context.Context, req LocateRequest) (string, error) {
	var out IDResponse
	return out.ID, r.post(ctx, "/locate", req, &out)
}

// CreditBack hands a credit-back to the owner.
func (r *Remote) CreditBack(ctx context.Context, req CreditBackRequest) (string, error) {
	var out IDResponse
	return out.ID, r.post(ctx, "/credit-back", req, &out)
}

// Short hands a locate-then-short to the owner and waits for its end.
func (r *Remote) Short(ctx context.Context, req ShortRequest) (*ShortResponse, error) {
	var out ShortResponse
	return &out, r.post(ctx, "/short", req, &out)
}

// Cancel withdraws workflow id.
func (r *Remote) Cancel(ctx context.Context, id string) error {
	return r.post(ctx, "/cancel", CancelRequest{ID: id}, nil)
}

// CancelOrder cancels a working order locator placed and returns its end.
func (r *Remote) CancelOrder(ctx context.Context, clientOrderID string) (*workflow.Order, error) {
	var out workflow.Order
	if err := r.post(ctx, "/cancel-order", CancelOrderRequest{ClientOrderID: clientOrderID}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Answer answers workflow id's offer.
func (r *Remote) Answer(ctx context.Context, req AnswerRequest) error {
	return r.post(ctx, "/answer", req, nil)
}

// Follow calls on with every message about workflow id until it ends, and
// returns its final record; with ask, the offer is put to this follower.
// ErrOwnerGone when the owner went away first.
func (r *Remote) Follow(ctx context.Context, id string, ask bool, on func(Message)) (*workflow.Workflow, error) {
	q := url.Values{"id": {id}}
	if ask {
		q.Set("ask", "1")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://owner/follow?"+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := r.http.Do(req)
	if err != nil {
		return nil, r.gone(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, decodeError(resp)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		var m Message
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return nil, fmt.Errorf("service: follow %s: %w", id, err)
		}
		if m.End != nil {
			return m.End, nil
		}
		on(m)
	}
	return nil, r.gone(ctx, sc.Err())
}

func (r *Remote) post(ctx context.Context, path string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://owner"+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.http.Do(req)
	if err != nil {
		return r.gone(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return decodeError(resp)
	}
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return r.gone(ctx, err)
	}
	return nil
}

// gone is ctx's error when the caller gave up, else ErrOwnerGone.
func (r *Remote) gone(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("%w (pid %d on %s): %v", ErrOwnerGone, r.lease.PID, r.lease.Host, err)
}

// decodeError maps the owner's error answer back to the engine's errors.
func decodeError(resp *http.Response) error {
	var e errorBody
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&e); err != nil {
		return fmt.Errorf("service: the owner answered %s", resp.Status)
	}
	switch e.Kind {
	case kindInput:
		return &workflow.InputError{Message: e.Error}
	case kindNotOpen:
		return fmt.Errorf("%w: %s", engine.ErrNotOpen, e.Error)
	case kindSizing:
		return fmt.Errorf("%w: %s", engine.ErrSizing, e.Error)
	}
	return errors.New(e.Error)
}
