package brokerclient

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/clock"
)

// HistoryOptions selects the paginated trading history.
type HistoryOptions struct {
	// Symbol filters to one symbol; empty means all.
	Symbol string
	// Days is the window length from the start date (numberOfDays; default
	// 30). Windows longer than the service's 365 days are read as
	// consecutive windows of at most 365 days.
	Days int
	// Limit is the page size (default and maximum 100).
	Limit int
}

// accountBase is /v1/api/accounts/{accountId}, the prefix of the order,
// position and P&L endpoints, after checking the id.
func accountBase(accountID string) (string, error) {
	seg, err := accountSegment(accountID)
	if err != nil {
		return "", err
	}
	return "/v1/api/accounts/" + seg, nil
}

// checkOrderID checks a clientOrderId going into a path.
func checkOrderID(id string) error {
	switch {
	case id == "":
		return brokercode.Invalid("clientOrderId", "must not be empty")
	case id == "." || id == "..":
		return brokercode.Invalid("clientOrderId", "%q is not an order id", id)
	case len(id) > maxClientOrderID+64: // rewritten ids (R118) carry a suffix
		return brokercode.Invalid("clientOrderId", "too long (%d characters)", len(id))
	case strings.ContainsAny(id, "/\r\n"):
		return brokercode.Invalid("clientOrderId", "%q must not contain '/' or line breaks", id)
	}
	return nil
}

// Place sends an order. It is never retried except after a 429 (which the
// service answers without processing): when the answer is lost the error is
// an *OutcomeUnknownError carrying the client order id, to settle with
// ResolveOrder, never by sending again. A 200 may still be a rejection:
// check Order.Rejection. A schema failure is a 400 *ErrorResponse with Lines.
//
// Spec: POST /v1/api/accounts/{accountId}/order.
func (s *OrdersService) Place(ctx context.Context, accountID string, req OrderRequest) (*Order, *Response, error) {
	base, err := accountBase(accountID)
	if err != nil {
		return nil, nil, err
	}
	if req.ClientOrderID == "" {
		req.ClientOrderID = uuid.NewString()
	}
	if err := req.Validate(); err != nil {
		return nil, nil, err
	}
	var out Order
	resp, err := s.client.do(ctx, call{
		method: "POST", path: base + "/order", body: req,
		route: routeOrderPlace, retry: retryNever, clientID: req.ClientOrderID, op: "place order",
	}, &out)
	if err != nil {
		return nil, resp, err
	}
	return &out, resp, nil
}

// Get returns one of today's orders by client order id. A just-placed order
// may answer 404 until it is registered; a rejected order may stay 404 and
// exist only in the book (see ResolveOrder).
//
// Spec: GET /v1/api/accounts/{accountId}/order/{clientOrderId}.
func (s *OrdersService) Get(ctx context.Context, accountID, clientOrderID string) (*Order, *Response, error) {
	base, err := accountBase(accountID)
	if err != nil {
		return nil, nil, err
	}
	if err := checkOrderID(clientOrderID); err != nil {
		return nil, nil, err
	}
	var out Order
	resp, err := s.client.do(ctx, call{
		method: "GET", path: base + "/order/" + pathEscape(clientOrderID),
		route: routeOrderGet, op: "get order",
	}, &out)
	if err != nil {
		return nil, resp, err
	}
	return &out, resp, nil
}

// Book returns today's order book: every order of the session in any state,
// plus still-working multi-day orders. The reference documents a bare array;
// an object with an array inside is accepted too.
//
// Spec: GET /v1/api/accounts/{accountId}/orders.
func (s *OrdersService) Book(ctx context.Context, accountID string) ([]Order, *Response, error) {
	base, err := accountBase(accountID)
	if err != nil {
		return nil, nil, err
	}
	return getList[Order](ctx, s.client, call{
		path: base + "/orders", route: routeOrdersBook, op: "get order book",
	}, "orders")
}

// Fills returns up to one week of executions from startDate (the archive;
// paper answers an empty list). startDate is read as a calendar date in its
// own location.
//
// Spec: GET /v1/api/accounts/{accountId}/orders/start-date/{date}.
func (s *OrdersService) Fills(ctx context.Context, accountID string, startDate time.Time) ([]Fill, *Response, error) {
	base, err := accountBase(accountID)
	if err != nil {
		return nil, nil, err
	}
	if startDate.IsZero() {
		return nil, nil, brokercode.Invalid("startDate", "required")
	}
	return getList[Fill](ctx, s.client, call{
		path:  base + "/orders/start-date/" + startDate.Format(time.DateOnly),
		route: routeOrdersArchive, op: "get fills",
	}, "orders")
}

// historyPagination is the paginated history's pagination object.
type historyPagination struct {
	CurrentLimit  int   `json:"currentLimit"`
	CurrentOffset int   `json:"currentOffset"`
	TotalRecords  int64 `json:"totalRecords"`
}

// historyPage is one page of the paginated history.
type historyPage struct {
	Pagination     historyPagination
	TradingHistory []Fill
}

// History iterates over the trading history from start, up to one year back
// on live accounts, page by page: offset rises by the page limit while
// offset + rows < totalRecords. A window longer than 365 days is read as
// consecutive windows of at most 365 days. The first error is yielded with a
// zero Fill and ends the sequence; stopping the loop early stops the reads.
//
// Spec: GET /v1/api/accounts/{accountId}/orders-with-pagination/start-date/{date}.
func (s *OrdersService) History(ctx context.Context, accountID string, start time.Time, opts *HistoryOptions) iter.Seq2[Fill, error] {
	return func(yield func(Fill, error) bool) {
		fail := func(err error) { yield(Fill{}, err) }
		base, err := accountBase(accountID)
		if err != nil {
			fail(err)
			return
		}
		var o HistoryOptions
		if opts != nil {
			o = *opts
		}
		switch {
		case start.IsZero():
			fail(brokercode.Invalid("start", "required"))
			return
		case o.Days < 0:
			fail(brokercode.Invalid("numberOfDays", "must not be negative, got %d", o.Days))
			return
		case o.Limit < 0 || o.Limit > maxHistoryLimit:
			fail(brokercode.Invalid("limit", "must be 1 to %d, got %d", maxHistoryLimit, o.Limit))
			return
		}
		if o.Symbol != "" {
			if err := checkOrderSymbol("symbol", o.Symbol); err != nil {
				fail(err)
				return
			}
		}
		if o.Days == 0 {
			o.Days = defaultHistDays
		}
		if o.Limit == 0 {
			o.Limit = maxHistoryLimit
		}
		for day := 0; day < o.Days; day += maxHistoryDays {
			window := min(o.Days-day, maxHistoryDays)
			from := start.AddDate(0, 0, day)
			path := base + "/orders-with-pagination/start-date/" + from.Format(time.DateOnly)
			for offset := 0; ; {
				q := url.Values{}
				q.Set("numberOfDays", strconv.Itoa(window))
				q.Set("offset", strconv.Itoa(offset))
				q.Set("limit", strconv.Itoa(o.Limit))
				if o.Symbol != "" {
					q.Set("symbol", o.Symbol)
				}
				var page historyPage
				if _, err := s.client.do(ctx, call{
					method: "GET", path: path, query: q,
					route: routeOrdersPaginated, op: "get trading history",
				}, &listOf[Fill]{out: &page.TradingHistory, key: "tradingHistory", rest: &paginationOf[historyPagination]{&page.Pagination}}); err != nil {
					fail(err)
					return
				}
				for _, f := range page.TradingHistory {
					if !yield(f, nil) {
						return
					}
				}
				rows := len(page.TradingHistory)
				if rows == 0 || int64(offset+rows) >= page.Pagination.TotalRecords {
					break
				}
				step := o.Limit
				if page.Pagination.CurrentLimit > 0 && page.Pagination.CurrentLimit < step {
					step = page.Pagination.CurrentLimit // the service clamped the limit
				}
				offset += step
			}
		}
	}
}

// Cancel cancels a working order and returns it. Cancelling is safe to
// repeat, so transport errors and 5xx are retried; if a retry meets the 404
// of an order the first attempt already cancelled, the order is read back
// and returned. A Rejected order answers 200 with text overwritten by R130
// (read its reason first); Filled, Canceled and Expired orders answer 404
// (ErrNotFound), as does an order not yet registered.
//
// Spec: DELETE /v1/api/accounts/{accountId}/orders/{clientOrderId}.
func (s *OrdersService) Cancel(ctx context.Context, accountID, clientOrderID string) (*Order, *Response, error) {
	base, err := accountBase(accountID)
	if err != nil {
		return nil, nil, err
	}
	if err := checkOrderID(clientOrderID); err != nil {
		return nil, nil, err
	}
	var out Order
	resp, err := s.client.do(ctx, call{
		method: "DELETE", path: base + "/orders/" + pathEscape(clientOrderID),
		route: routeOrderCancel, retry: retryRead, op: "cancel order",
	}, &out)
	if err != nil {
		if resp != nil && resp.Attempts > 1 && errors.Is(err, ErrNotFound) {
			if o, _, gerr := s.Get(ctx, accountID, clientOrderID); gerr == nil && o.OrderStatus == brokercode.OrderStatusCanceled {
				return o, resp, nil
			}
		}
		return nil, resp, err
	}
	return &out, resp, nil
}

// CancelAll asks the service to cancel every open order of the account, or
// only those on symbol when it is not empty, and returns the service's
// message. The answer confirms acceptance only, even when nothing was open:
// read the book to see the outcome. Like a single cancel it is safe to
// repeat, so transport errors and 5xx are retried.
//
// Spec: DELETE /v1/api/accounts/orders (form body account; query symbol).
func (s *OrdersService) CancelAll(ctx context.Context, accountID, symbol string) (string, *Response, error) {
	if _, err := accountSegment(accountID); err != nil {
		return "", nil, err
	}
	var q url.Values
	if symbol != "" {
		if err := checkOrderSymbol("symbol", symbol); err != nil {
			return "", nil, err
		}
		q = url.Values{"symbol": {symbol}}
	}
	var out struct {
		Message string `json:"message"`
	}
	resp, err := s.client.do(ctx, call{
		method: "DELETE", path: "/v1/api/accounts/orders", query: q,
		body:  formBody(url.Values{"account": {accountID}}),
		route: routeOrdersCancelAll, retry: retryRead, op: "cancel all orders",
	}, &out)
	if err != nil {
		return "", resp, err
	}
	return out.Message, resp, nil
}

// Routes returns the routes available to the account. The live set varies
// by subscription: always query it rather than assuming names.
//
// Spec: GET /v1/api/accounts/{accountId}/routes.
func (s *OrdersService) Routes(ctx context.Context, accountID string) ([]Route, *Response, error) {
	base, err := accountBase(accountID)
	if err != nil {
		return nil, nil, err
	}
	return getList[Route](ctx, s.client, call{
		path: base + "/routes", route: routeRoutes, op: "get routes",
	}, "routes")
}

// EasyToBorrow reports whether symbol is on the platform-wide easy-to-borrow
// list (exact, case-sensitive; typos answer false; always true on paper).
// The symbol must pass brokercode.ValidateSymbol: an empty one, a lone dot or
// one holding '/' would reach the router's 404 instead of the check.
//
// Spec: GET /v1/api/accounts/{accountId}/is-easy-to-borrow/symbol/{symbol}.
func (s *OrdersService) EasyToBorrow(ctx context.Context, accountID, symbol string) (bool, *Response, error) {
	base, err := accountBase(accountID)
	if err != nil {
		return false, nil, err
	}
	if err := brokercode.ValidateSymbol(symbol); err != nil {
		return false, nil, err
	}
	var out struct {
		IsEasyToBorrow bool `json:"isEasyToBorrow"`
	}
	resp, err := s.client.do(ctx, call{
		method: "GET", path: base + "/is-easy-to-borrow/symbol/" + pathEscape(symbol),
		route: routeEasyToBorrow, op: "is easy to borrow",
	}, &out)
	if err != nil {
		return false, resp, err
	}
	return out.IsEasyToBorrow, resp, nil
}

// ErrNeverRegistered matches an *UnregisteredOrderError.
var ErrNeverRegistered = errors.New("order never registered")

// UnregisteredOrderError is ResolveOrder's answer when the order is neither
// readable by id nor in today's book: the placement never registered. It is
// safe to place again, under a NEW client order id (ids are consumed, R114).
type UnregisteredOrderError struct {
	AccountID     string
	ClientOrderID string
}

func (e *UnregisteredOrderError) Error() string {
	return fmt.Sprintf("brokerclient: order %s on %s was never registered (place again under a new id)", e.ClientOrderID, e.AccountID)
}

// Is reports ErrNeverRegistered and ErrNotFound.
func (e *UnregisteredOrderError) Is(target error) bool {
	return target == ErrNeverRegistered || target == ErrNotFound
}

// ResolveOrder settles an *OutcomeUnknownError from Place. It reads the
// order by id, retrying the "404 until registered" for about two seconds of
// clock time, 500 ms apart; then it scans today's book for the id or for the
// id the service rewrote on an R118 rejection (clientOrderId + "INVALID" +
// a timestamp), since a rejected order may exist only in the book. It
// returns the order, or an *UnregisteredOrderError (errors.Is
// ErrNeverRegistered) when the placement never registered.
//
// Spec: GET .../order/{clientOrderId}, then GET .../orders.
func (s *OrdersService) ResolveOrder(ctx context.Context, accountID, clientOrderID string) (*Order, *Response, error) {
	if _, err := accountBase(accountID); err != nil {
		return nil, nil, err
	}
	if err := checkOrderID(clientOrderID); err != nil {
		return nil, nil, err
	}
	clk := s.client.clock
	deadline := clk.Now().Add(resolveGetWindow)
	for {
		o, resp, err := s.Get(ctx, accountID, clientOrderID)
		if err == nil {
			return o, resp, nil
		}
		if !errors.Is(err, ErrNotFound) {
			return nil, resp, err
		}
		if !clk.Now().Before(deadline) {
			break
		}
		if err := clock.Sleep(ctx, clk, resolveGetSpacing); err != nil {
			return nil, resp, err
		}
	}
	book, resp, err := s.Book(ctx, accountID)
	if err != nil {
		return nil, resp, err
	}
	var rewritten *Order
	for i := range book {
		switch id := book[i].ClientOrderID; {
		case id == clientOrderID:
			return &book[i], resp, nil
		case rewritten == nil && strings.HasPrefix(id, clientOrderID+"INVALID"):
			rewritten = &book[i]
		}
	}
	if rewritten != nil {
		return rewritten, resp, nil
	}
	return nil, resp, &UnregisteredOrderError{AccountID: accountID, ClientOrderID: clientOrderID}
}

// Spec "Orders": how far back the fill archive reaches ("up to one week")
// and the paginated history ("up to one year").
const (
	archiveDays = 7
	historyDays = 365
)

// FillsSince returns the fills from since (a trade date) to today: the
// one-week archive for a recent date, the paginated one-year history for
// an older one. A date more than a year back is refused (nothing sent).
func (s *OrdersService) FillsSince(ctx context.Context, accountID string, since, today time.Time) ([]Fill, error) {
	ago := int(today.Sub(since).Hours() / 24)
	if ago > historyDays {
		return nil, brokercode.Invalid("since", "%s: the broker keeps one year of order history; pick a date since %s",
			since.Format(time.DateOnly), today.AddDate(0, 0, -historyDays).Format(time.DateOnly))
	}
	if ago <= archiveDays {
		fills, _, err := s.Fills(ctx, accountID, since)
		return fills, err
	}
	var fills []Fill
	for f, err := range s.History(ctx, accountID, since, &HistoryOptions{Days: ago + 1}) {
		if err != nil {
			return nil, err
		}
		fills = append(fills, f)
	}
	return fills, nil
}
