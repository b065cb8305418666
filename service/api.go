package service

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/store"
	"github.com/locatorhq/locator/workflow"
)

// LocateRequest hands a locate to the owner.
type LocateRequest struct {
	Symbol   string          `json:"symbol"`
	Quantity int64           `json:"quantity"`
	Policy   workflow.Policy `json:"policy"`
	Asker    string          `json:"asker"`
	// Ask says the asker can answer an offer (it will follow with ask=1).
	Ask bool `json:"ask"`
}

// CreditBackRequest hands a credit-back to the owner.
type CreditBackRequest struct {
	Symbol   string `json:"symbol"`
	Quantity int64  `json:"quantity"`
	Type     string `json:"type"`
	Asker    string `json:"asker"`
}

// ShortRequest hands a locate-then-short to the owner; its offer and order
// are decided by the policy (no confirmation through the owner).
type ShortRequest struct {
	Symbol   string          `json:"symbol"`
	Quantity int64           `json:"quantity"`
	Limit    decimal.Decimal `json:"limit"`
	Route    string          `json:"route"`
	Policy   workflow.Policy `json:"policy"`
	Asker    string          `json:"asker"`
}

// ShortResponse is how the short went.
type ShortResponse struct {
	Locate *workflow.Workflow `json:"locate,omitempty"`
	Order  *workflow.Order    `json:"order,omitempty"`
	Reason string             `json:"reason,omitempty"`
}

// IDResponse names the workflow a request started.
type IDResponse struct {
	ID string `json:"id"`
}

// CancelRequest withdraws a workflow.
type CancelRequest struct {
	ID string `json:"id"`
}

// AnswerRequest answers a workflow's offer.
type AnswerRequest struct {
	ID     string `json:"id"`
	Accept bool   `json:"accept"`
	Reason string `json:"reason,omitempty"`
}

// Message is one line of a follow stream: a change, an offer put to the
// follower, or the workflow's end.
type Message struct {
	Update *Update            `json:"update,omitempty"`
	Ask    *workflow.Offer    `json:"ask,omitempty"`
	End    *workflow.Workflow `json:"end,omitempty"`
}

// Update is one state change as a follower sees it.
type Update struct {
	Workflow *workflow.Workflow `json:"workflow"`
	From     states.State       `json:"from"`
	Event    states.Event       `json:"event"`
	Reason   string             `json:"reason,omitempty"`
	Offer    *workflow.Offer    `json:"offer,omitempty"`
	// QueuedUntil: see engine.Update.
	QueuedUntil time.Time `json:"queuedUntil,omitzero"`
}

// errorBody is an error answer.
type errorBody struct {
	Error string `json:"error"`
	Kind  string `json:"kind"`
}

// Error kinds on the wire.
const (
	kindInput   = "input"
	kindNotOpen = "not_open"
	kindSizing  = "sizing"
	kindFailed  = "failed"
)

func (o *Owner) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /locate", o.handleLocate)
	mux.HandleFunc("POST /credit-back", o.handleCreditBack)
	mux.HandleFunc("POST /short", o.handleShort)
	mux.HandleFunc("POST /cancel", o.handleCancel)
	mux.HandleFunc("POST /answer", o.handleAnswer)
	mux.HandleFunc("GET /follow", o.handleFollow)
	mux.HandleFunc("POST /job", o.handleJob)
	mux.HandleFunc("POST /job/stop", o.handleJobStop)
	mux.HandleFunc("POST /cancel-order", o.handleCancelOrder)
	return mux
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(v); err != nil {
		reply(w, http.StatusBadRequest, errorBody{Error: "bad request: " + err.Error(), Kind: kindInput})
		return false
	}
	return true
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// replyErr sends err with the kind a follower maps back to its error.
func replyErr(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, workflow.ErrInput):
		reply(w, http.StatusBadRequest, errorBody{Error: err.Error(), Kind: kindInput})
	case errors.Is(err, engine.ErrNotOpen), errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrOrderNotFound):
		reply(w, http.StatusConflict, errorBody{Error: err.Error(), Kind: kindNotOpen})
	case errors.Is(err, engine.ErrSizing):
		reply(w, http.StatusConflict, errorBody{Error: err.Error(), Kind: kindSizing})
	default:
		reply(w, http.StatusInternalServerError, errorBody{Error: err.Error(), Kind: kindFailed})
	}
}

func (o *Owner) handleLocate(w http.ResponseWriter, r *http.Request) {
	var req LocateRequest
	if !decode(w, r, &req) {
		return
	}
	er := engine.Request{Symbol: req.Symbol, Quantity: req.Quantity, Policy: req.Policy, Asker: req.Asker}
	if req.Ask {
		er.Ask = o.askFollower
	}
	h, err := o.eng.Locate(r.Context(), er)
	if err != nil {
		replyErr(w, err)
		return
	}
	reply(w, http.StatusOK, IDResponse{ID: h.ID})
}

func (o *Owner) handleCreditBack(w http.ResponseWriter, r *http.Request) {
	var req CreditBackRequest
	if !decode(w, r, &req) {
		return
	}
	h, err := o.eng.CreditBack(r.Context(), req.Symbol, req.Quantity, brokerclient.LocateType(req.Type))
	if err != nil {
		replyErr(w, err)
		return
	}
	reply(w, http.StatusOK, IDResponse{ID: h.ID})
}

func (o *Owner) handleShort(w http.ResponseWriter, r *http.Request) {
	var req ShortRequest
	if !decode(w, r, &req) {
		return
	}
	res, err := o.eng.Short(r.Context(), engine.ShortRequest{Symbol: req.Symbol, Quantity: req.Quantity, Limit: req.Limit,
		Route: req.Route, Policy: req.Policy, Asker: req.Asker})
	if err != nil {
		replyErr(w, err)
		return
	}
	reply(w, http.StatusOK, ShortResponse{Locate: res.Locate, Order: res.Order, Reason: res.Reason})
}

func (o *Owner) handleCancel(w http.ResponseWriter, r *http.Request) {
	var req CancelRequest
	if !decode(w, r, &req) {
		return
	}
	if err := o.eng.Cancel(r.Context(), req.ID); err != nil {
		replyErr(w, err)
		return
	}
	reply(w, http.StatusOK, struct{}{})
}

// CancelOrderRequest cancels a working order locator placed.
type CancelOrderRequest struct {
	ClientOrderID string `json:"clientOrderId"`
}

// handleCancelOrder cancels an order through its order workflow and
// answers with the order's end.
func (o *Owner) handleCancelOrder(w http.ResponseWriter, r *http.Request) {
	var req CancelOrderRequest
	if !decode(w, r, &req) {
		return
	}
	ord, err := o.eng.CancelOrder(r.Context(), req.ClientOrderID)
	if err != nil {
		replyErr(w, err)
		return
	}
	reply(w, http.StatusOK, ord)
}

// handleAnswer answers an offer for another process (locator approve or
// decline).
func (o *Owner) handleAnswer(w http.ResponseWriter, r *http.Request) {
	var req AnswerRequest
	if !decode(w, r, &req) {
		return
	}
	if err := o.Answer(r.Context(), req); err != nil {
		replyErr(w, err)
		return
	}
	reply(w, http.StatusOK, struct{}{})
}

// Answer answers a workflow's offer from anywhere (a shell, the dashboard):
// an approval goes to the question put to its follower when one waits, so
// that process sees its prompt answered; otherwise, and for a refusal with
// its reason, to the engine directly.
func (o *Owner) Answer(ctx context.Context, req AnswerRequest) error {
	o.mu.Lock()
	f := o.followers[req.ID]
	o.mu.Unlock()
	if f != nil && req.Reason == "" {
		select {
		case f.answers <- req.Accept:
			return nil
		default:
		}
	}
	return o.eng.Answer(ctx, req.ID, req.Accept, req.Reason)
}

// follower is the process following a workflow, for the questions put to
// it.
type follower struct {
	offers  chan workflow.Offer // the offer to put to it (latest only)
	answers chan bool
	gone    chan struct{} // closed when its stream ends
}

// attach makes a follower slot for workflow id, replacing any earlier one.
func (o *Owner) attach(id string) *follower {
	f := &follower{offers: make(chan workflow.Offer, 1), answers: make(chan bool, 1), gone: make(chan struct{})}
	o.mu.Lock()
	o.followers[id] = f
	o.mu.Unlock()
	return f
}

func (o *Owner) detach(id string, f *follower) {
	o.mu.Lock()
	if o.followers[id] == f {
		delete(o.followers, id)
	}
	o.mu.Unlock()
	close(f.gone)
}

// askFollower puts an offer to the process following its workflow and
// waits for the answer. It declines only when that process went away, or
// when the window is about to close (ctx's deadline).
func (o *Owner) askFollower(ctx context.Context, offer workflow.Offer) bool {
	for {
		o.mu.Lock()
		f := o.followers[offer.WorkflowID]
		o.mu.Unlock()
		if f == nil {
			// Not following yet (just asked, or reconnecting): look again.
			if err := clock.Sleep(ctx, o.clk, 200*time.Millisecond); err != nil {
				return false
			}
			continue
		}
		select {
		case f.offers <- offer:
		default:
		}
		select {
		case ok := <-f.answers:
			return ok
		case <-f.gone:
			// Its stream ended: back in the loop, a reconnect may follow.
			if err := clock.Sleep(ctx, o.clk, time.Second); err != nil {
				return false
			}
			o.mu.Lock()
			back := o.followers[offer.WorkflowID] != nil
			o.mu.Unlock()
			if !back {
				o.eng.Answer(context.WithoutCancel(ctx), offer.WorkflowID, false, "the process that asked went away")
				return false
			}
		case <-ctx.Done():
			return false
		}
	}
}

// handleFollow streams a workflow's changes until it ends; with ask=1 the
// follower is the one its offer is put to.
func (o *Owner) handleFollow(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	id := r.URL.Query().Get("id")
	updates := o.eng.Subscribe(ctx)
	cur, err := o.st.Get(ctx, id)
	if err != nil {
		replyErr(w, err)
		return
	}
	var offers chan workflow.Offer
	if r.URL.Query().Get("ask") == "1" && !cur.Terminal() {
		f := o.attach(id)
		defer o.detach(id, f)
		offers = f.offers
		if err := o.eng.Attach(ctx, id, o.askFollower); err != nil && !errors.Is(err, engine.ErrNotOpen) {
			replyErr(w, err)
			return
		}
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	flush := func(m Message) bool {
		if err := enc.Encode(m); err != nil {
			return false
		}
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
		return true
	}
	if cur.Terminal() {
		flush(Message{End: cur})
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case offer := <-offers:
			if !flush(Message{Ask: &offer}) {
				return
			}
		case u, ok := <-updates:
			if !ok {
				return // the owner is stopping: the follower takes over
			}
			if u.Workflow == nil || u.Workflow.ID != id {
				continue
			}
			if u.Workflow.Terminal() {
				flush(Message{End: u.Workflow})
				return
			}
			if !flush(Message{Update: &Update{Workflow: u.Workflow, From: u.From, Event: u.Event, Reason: u.Reason, Offer: u.Offer, QueuedUntil: u.QueuedUntil}}) {
				return
			}
		}
	}
}
