// Cancels: cancel by id and cancel-all on an account.

package brokersim

import (
	"bytes"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// cancelRefusal is the 400 of a cancel on a path account the key does not
// own (reference: "Cancel-by-id refusal body example").
type cancelRefusal struct {
	StatusCode string `json:"statusCode"`
	Message    string `json:"message"`
	Detail     string `json:"detail"`
	Error      bool   `json:"error"`
}

// handleCancelOrder serves DELETE .../orders/{clientOrderId} (spec: "Order
// statuses" transitions and the HTTP status map).
func (s *Sim) handleCancelOrder(c *call) reply {
	id := c.r.PathValue("accountId")
	a := s.ownedAccount(c.key, id)
	if a == nil {
		return jsonReply(http.StatusBadRequest, cancelRefusal{
			StatusCode: "BadRequest", Message: "CancelOrderWithResponse", Error: true,
			Detail: "Unable to fetch orders for account " + strings.ToUpper(id) + ": the account was not found or is not accessible with these credentials.",
		})
	}
	o := s.ord.lookup(a, c.r.PathValue("clientOrderId"), c.now)
	switch {
	case o == nil:
		return notFoundText()
	case o.status == statusRejected:
		// Spec: always 200, still Rejected, text overwritten with R130.
		o.text = strp(textR130)
		o.updated = c.now
	case o.working():
		o.cancel(c.now)
	default:
		return notFoundText()
	}
	s.pushOrder(o)
	return jsonReply(http.StatusOK, o.toJSON())
}

// cancel ends a working order; what was left becomes canceledQuantity.
func (o *order) cancel(now time.Time) {
	o.canceled += o.leaves()
	o.status = statusCanceled
	o.updated = now
}

// handleCancelAll serves DELETE /v1/api/accounts/orders: `account` in a form
// or multipart body (a JSON body is refused with 404), optional query
// `symbol`. It confirms acceptance only; the working orders it found are
// cancelled Timing.OrderAsync later.
func (s *Sim) handleCancelAll(c *call) reply {
	form, ok := formBody(c.r, c.body)
	if !ok {
		return notFoundText()
	}
	a := s.ownedAccount(c.key, form.Get("account"))
	if a == nil {
		return accountMismatch()
	}
	symbol := c.r.URL.Query().Get("symbol")
	var targets []*order
	for _, o := range s.ord.orders {
		if o.acct == a && o.working() && (symbol == "" || strings.EqualFold(symbol, o.symbol)) {
			targets = append(targets, o)
		}
	}
	s.after(time.Duration(s.sc.Timing.OrderAsync), func() {
		for _, o := range targets {
			if o.working() {
				o.cancel(s.now)
				s.pushOrder(o)
			}
		}
	})
	return jsonReply(http.StatusOK, map[string]string{"message": "Cancel request submitted"})
}

// formBody reads a form-encoded or multipart body; ok is false for a JSON
// body, which the broker refuses.
func formBody(r *http.Request, body []byte) (url.Values, bool) {
	mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch {
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		return nil, false
	case mt == "multipart/form-data":
		form, err := multipart.NewReader(bytes.NewReader(body), params["boundary"]).ReadForm(maxBody)
		if err != nil {
			return url.Values{}, true
		}
		defer form.RemoveAll()
		return url.Values(form.Value), true
	}
	if t := bytes.TrimSpace(body); len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		return nil, false
	}
	v, err := url.ParseQuery(string(body))
	if err != nil {
		return url.Values{}, true
	}
	return v, true
}
