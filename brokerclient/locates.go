package brokerclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/clock"
)

// HistoryRow is one row of the locate history (spec: Resources, "Locate
// history row"): a quote, one side of a Reg SHO pair, or a credit-back.
type HistoryRow struct {
	// AccountID is the owning account.
	AccountID string `json:"accountId"`
	// Symbol is the underlying ticker.
	Symbol string `json:"symbol"`
	// QuoteReqID echoes the client id; the Single Use shadow row of a Reg SHO
	// pair adds ".SU". Decoded from quoteReqID or quoteReqId.
	QuoteReqID string `json:"quoteReqID"`
	// LocateShares is the shares on the row, negative on credit-back rows.
	LocateShares int64 `json:"locateShares"`
	// FilledShares is filled so far; equals LocateShares once Filled.
	FilledShares int64 `json:"filledShares"`
	// LocateStatus is the row's state.
	LocateStatus brokercode.LocateStatus `json:"locateStatus"`
	// LocateType is the pool code: 0 on rejected rows where no pool was
	// chosen, else 1 or 2 (Locate), 3 (PreBorrow), 4 (SingleUse). The code is
	// kept as sent; Type gives the string a sell needs.
	LocateType int `json:"locateType"`
	// LocatePrice is the price per share: 0 while Quoting or Pending.
	LocatePrice decimal.Decimal `json:"locatePrice"`
	// PreBorrow is a retained flag; classify by LocateType instead.
	PreBorrow bool `json:"preBorrow"`
	// LocateError is 0 on success, else a reason code mirroring Text's prefix.
	LocateError int `json:"locateError"`
	// Text is nil while Quoting, "" once Offered, the rejection reason
	// ("R<n>: ..." or "<n> ...") on rejections, "Quote expired." on expiry.
	Text *string `json:"text"`
	// CreatedDate is when the row was created.
	CreatedDate Time `json:"createdDate"`
	// UpdatedDate is the time of the latest transition.
	UpdatedDate Time `json:"updatedDate"`
}

// UnmarshalJSON decodes a row, taking the id from quoteReqID (the spec's
// spelling) or quoteReqId (the public reference's).
func (r *HistoryRow) UnmarshalJSON(b []byte) error {
	type plain HistoryRow
	var v struct {
		plain
		LowerID *string `json:"quoteReqId"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*r = HistoryRow(v.plain)
	if r.QuoteReqID == "" && v.LowerID != nil {
		r.QuoteReqID = *v.LowerID
	}
	return nil
}

// IsShadow reports whether the row is the Single Use (".SU") side of a Reg
// SHO pair.
func (r HistoryRow) IsShadow() bool { return strings.HasSuffix(r.QuoteReqID, shadowSuffix) }

// BaseID is the quoteReqID the client sent: the row's id without ".SU".
// Both rows of a Reg SHO pair share it.
func (r HistoryRow) BaseID() string { return strings.TrimSuffix(r.QuoteReqID, shadowSuffix) }

// SiblingID returns the id of the other side of a Reg SHO pair: id + ".SU"
// for the PreBorrow side, the id without ".SU" for the Single Use side.
func SiblingID(id string) string {
	if base, ok := strings.CutSuffix(id, shadowSuffix); ok {
		return base
	}
	return id + shadowSuffix
}

// IsCreditBack reports whether the row is a credit-back (negative shares).
func (r HistoryRow) IsCreditBack() bool { return r.LocateShares < 0 }

// Type is the sell string of the row's pool (brokercode.LocateTypeForCode).
func (r HistoryRow) Type() brokercode.LocateType { return brokercode.LocateTypeForCode(r.LocateType) }

// TextValue returns Text, or "" when it is null.
func (r HistoryRow) TextValue() string {
	if r.Text == nil {
		return ""
	}
	return *r.Text
}

// ErrorFamily says where a rejection's text came from (spec: "Locate
// errors": "Text prefixes fall in two families").
type ErrorFamily int

const (
	// ErrorFamilyNone: the text carries no code (success, "Quote expired.").
	ErrorFamilyNone ErrorFamily = iota
	// ErrorFamilyVenue: "R<n>: ..." texts from the venue (R56, R06, R67).
	ErrorFamilyVenue
	// ErrorFamilyLocateService: bare-number texts from the locate service
	// ("14 Locate is already pending.", "11 ...", "16 ...", "1").
	ErrorFamilyLocateService
)

// String names the family.
func (f ErrorFamily) String() string {
	switch f {
	case ErrorFamilyVenue:
		return "venue"
	case ErrorFamilyLocateService:
		return "locate service"
	}
	return "none"
}

var (
	venueCodeRE   = regexp.MustCompile(`^R(\d+)(?::|\s|$)`)
	serviceCodeRE = regexp.MustCompile(`^(\d+)(?::|\s|$)`)
)

// ErrorFamily classifies the row's text prefix.
func (r HistoryRow) ErrorFamily() ErrorFamily {
	f, _ := r.errorCode()
	return f
}

// ErrorCode returns the code at the start of the text: "R56" for a venue
// rejection, "14" for a locate-service one, "" when there is none. Branch on
// it (or on LocateError), never on the rest of the text.
func (r HistoryRow) ErrorCode() string {
	_, code := r.errorCode()
	return code
}

func (r HistoryRow) errorCode() (ErrorFamily, string) {
	text := strings.TrimSpace(r.TextValue())
	if m := venueCodeRE.FindStringSubmatch(text); m != nil {
		return ErrorFamilyVenue, "R" + m[1]
	}
	if m := serviceCodeRE.FindStringSubmatch(text); m != nil {
		return ErrorFamilyLocateService, m[1]
	}
	return ErrorFamilyNone, ""
}

// InventoryRow is one row of the located inventory (spec: Resources,
// "Locate inventory row"): exactly the seven fields. A row is keyed by
// (Symbol, LocateType); one symbol can have two rows.
type InventoryRow struct {
	// AccountID is the owning account.
	AccountID string `json:"accountId"`
	// Symbol is the ticker.
	Symbol string `json:"symbol"`
	// Available is shares still shortable or creditable; size shorts from it only.
	Available int64 `json:"available"`
	// Sold is shares credited back and processed.
	Sold int64 `json:"sold"`
	// ToBeSold is shares queued for credit-back.
	ToBeSold int64 `json:"toBeSold"`
	// Unavailable is shares tied up by a pending sell-back or open shorts.
	Unavailable int64 `json:"unavailable"`
	// LocateType is the pool code (1 or 2 Locate, 3 PreBorrow, 4 SingleUse).
	LocateType int `json:"locateType"`
}

// Type is the sell string of the row's pool; a credit-back of this row must
// send it (spec: Short locates rule 5).
func (r InventoryRow) Type() brokercode.LocateType { return brokercode.LocateTypeForCode(r.LocateType) }

// Available sums Available over symbol's rows (one per pool), the number of
// shares a short of symbol may use.
func Available(rows []InventoryRow, symbol string) int64 {
	var n int64
	for _, r := range rows {
		if r.Symbol == symbol {
			n += r.Available
		}
	}
	return n
}

// Ack is the acknowledgement of a locate write. It means queued, not done:
// the outcome appears later in history (spec: "Short locates").
type Ack struct {
	// QuoteReqID is the id the write carried (generated when the request
	// left it empty); find the outcome in history under it.
	QuoteReqID string
	// Sent is the value of the acknowledgement key (locateQuoteSent,
	// locateAcceptSent, locateSellbackSent, locateCancelSent): true when the
	// service said "true".
	Sent bool
}

// decodeAck reads the string-valued acknowledgement key of a 200 body.
func decodeAck(body map[string]json.RawMessage, key, id string) *Ack {
	a := &Ack{QuoteReqID: id}
	if v, ok := body[key]; ok {
		var s string
		var b bool
		switch {
		case json.Unmarshal(v, &s) == nil:
			a.Sent = strings.EqualFold(s, "true")
		case json.Unmarshal(v, &b) == nil:
			a.Sent = b
		}
	}
	return a
}

// QuoteRequest is the body of a locate quote.
type QuoteRequest struct {
	// Account is the account id (the quote body calls it "account").
	Account string `json:"account"`
	// Symbol is the uppercase equity ticker.
	Symbol string `json:"symbol"`
	// Quantity is 100..2147483647 shares, a multiple of 100.
	Quantity int64 `json:"quantity"`
	// QuoteReqID is the client id, unique; generated when empty. It must not
	// end in ".SU".
	QuoteReqID string `json:"quoteReqID"`
}

// Quote asks for a locate quote. The answer only says the request was
// queued; the price arrives in history (Quoting, then Offered or Rejected).
// A quote is never re-sent by the client: if its answer is lost the error is
// an *OutcomeUnknownError carrying the QuoteReqID, to settle with
// ResolveQuote before anything else is sent.
//
// Spec: POST /v1/api/accounts/locates/quote.
func (s *LocatesService) Quote(ctx context.Context, req QuoteRequest) (*Ack, *Response, error) {
	if err := validateAccount("account", req.Account); err != nil {
		return nil, nil, err
	}
	if err := brokercode.ValidateSymbol(req.Symbol); err != nil {
		return nil, nil, err
	}
	if err := brokercode.ValidateLocateQuantity(req.Quantity); err != nil {
		return nil, nil, err
	}
	if req.QuoteReqID == "" {
		req.QuoteReqID = uuid.NewString()
	} else if err := validateQuoteReqID(req.QuoteReqID, false); err != nil {
		return nil, nil, err
	}
	var out map[string]json.RawMessage
	resp, err := s.client.do(ctx, call{
		method: http.MethodPost, path: "/v1/api/accounts/locates/quote", body: req,
		route: routeLocateQuote, retry: retryNever, clientID: req.QuoteReqID, op: "locate quote",
	}, &out)
	if err != nil {
		return nil, resp, err
	}
	return decodeAck(out, "locateQuoteSent", req.QuoteReqID), resp, nil
}

// acceptBody is the accept body; it names the account "accountId".
type acceptBody struct {
	AccountID  string `json:"accountId"`
	QuoteReqID string `json:"quoteReqID"`
}

// Accept accepts an Offered quote within its 30 seconds. Append ".SU" to
// quoteReqID to accept the Single Use side of a Reg SHO pair. The service
// answers 200 whatever the id's state, and repeating an accept is safe (spec:
// Short locates rule 3), so transport errors and 5xx are retried; confirm by
// the history row reaching Filled and the inventory row appearing.
//
// Spec: POST /v1/api/accounts/locates/accept.
func (s *LocatesService) Accept(ctx context.Context, accountID, quoteReqID string) (*Ack, *Response, error) {
	if err := validateAccount("accountId", accountID); err != nil {
		return nil, nil, err
	}
	if err := validateQuoteReqID(quoteReqID, true); err != nil {
		return nil, nil, err
	}
	var out map[string]json.RawMessage
	resp, err := s.client.do(ctx, call{
		method: http.MethodPost, path: "/v1/api/accounts/locates/accept",
		body:  acceptBody{AccountID: accountID, QuoteReqID: quoteReqID},
		route: routeLocateAccept, retry: retryRead, clientID: quoteReqID, op: "locate accept",
	}, &out)
	if err != nil {
		return nil, resp, err
	}
	return decodeAck(out, "locateAcceptSent", quoteReqID), resp, nil
}

// SellRequest is the body of a credit-back.
type SellRequest struct {
	// Account is the account id (the sell body calls it "account").
	Account string `json:"account"`
	// Symbol is the ticker to credit back.
	Symbol string `json:"symbol"`
	// Quantity is a multiple of 100, at most the row's Available.
	Quantity int64 `json:"quantity"`
	// LocateType is the pool to credit: InventoryRow.Type of the row. IntraDay
	// is a deprecated alias and is sent as Locate.
	LocateType brokercode.LocateType `json:"locateType"`
	// QuoteReqID is a fresh client id, never the buy-side one; generated when
	// empty. It must not end in ".SU".
	QuoteReqID string `json:"quoteReqID"`
}

// Sell credits located shares back. Like Quote it is never re-sent; a lost
// answer is an *OutcomeUnknownError carrying the QuoteReqID (settle it with
// ResolveQuote). The credit-back row appears in history as New (48) with
// negative shares.
//
// Spec: POST /v1/api/accounts/locates/sell.
func (s *LocatesService) Sell(ctx context.Context, req SellRequest) (*Ack, *Response, error) {
	if err := validateAccount("account", req.Account); err != nil {
		return nil, nil, err
	}
	if err := brokercode.ValidateSymbol(req.Symbol); err != nil {
		return nil, nil, err
	}
	if err := brokercode.ValidateLocateQuantity(req.Quantity); err != nil {
		return nil, nil, err
	}
	if !req.LocateType.Valid() {
		return nil, nil, brokercode.Invalid("locateType", "%q: want one of %s, %s, %s, %s, %s", req.LocateType,
			brokercode.LocateTypeUnknown, brokercode.LocateTypeLocate, brokercode.LocateTypeIntraDay, brokercode.LocateTypePreBorrow, brokercode.LocateTypeSingleUse)
	}
	if req.LocateType == brokercode.LocateTypeIntraDay {
		s.client.logger.Warn("locate type IntraDay is a deprecated alias; sending Locate",
			"op", "locate sell", "symbol", req.Symbol)
		req.LocateType = brokercode.LocateTypeLocate
	}
	if req.QuoteReqID == "" {
		req.QuoteReqID = uuid.NewString()
	} else if err := validateQuoteReqID(req.QuoteReqID, false); err != nil {
		return nil, nil, err
	}
	var out map[string]json.RawMessage
	resp, err := s.client.do(ctx, call{
		method: http.MethodPost, path: "/v1/api/accounts/locates/sell", body: req,
		route: routeLocateSell, retry: retryNever, clientID: req.QuoteReqID, op: "locate sell",
	}, &out)
	if err != nil {
		return nil, resp, err
	}
	return decodeAck(out, "locateSellbackSent", req.QuoteReqID), resp, nil
}

// Cancel cancels an Offered quote before it expires (both rows of a Reg SHO
// pair, by either id) or a pending credit-back. The service does not check
// that the id exists, and repeating a cancel is safe; confirm by the history
// row reaching Canceled (52).
//
// Spec: DELETE /v1/api/accounts/locates/cancel/accounts/{accountId}/quoteReqID/{quoteReqID}.
func (s *LocatesService) Cancel(ctx context.Context, accountID, quoteReqID string) (*Ack, *Response, error) {
	if err := validateAccount("accountId", accountID); err != nil {
		return nil, nil, err
	}
	if err := validateQuoteReqID(quoteReqID, true); err != nil {
		return nil, nil, err
	}
	var out map[string]json.RawMessage
	resp, err := s.client.do(ctx, call{
		method: http.MethodDelete,
		path:   "/v1/api/accounts/locates/cancel/accounts/" + pathEscape(accountID) + "/quoteReqID/" + pathEscape(quoteReqID),
		route:  routeLocateCancel, retry: retryRead, clientID: quoteReqID, op: "locate cancel",
	}, &out)
	if err != nil {
		return nil, resp, err
	}
	return decodeAck(out, "locateCancelSent", quoteReqID), resp, nil
}

// Inventory returns the account's located inventory. Paper accounts answer
// a bare empty array; both shapes give a non-nil slice.
//
// Spec: GET /v1/api/accounts/{accountId}/locates/inventory.
func (s *LocatesService) Inventory(ctx context.Context, accountID string) ([]InventoryRow, *Response, error) {
	if err := validateAccount("accountId", accountID); err != nil {
		return nil, nil, err
	}
	// Live accounts answer { locateInventory: [...] }, paper ones a bare
	// array (spec: "Short locates": "normalize both").
	var out []InventoryRow
	resp, err := s.client.do(ctx, call{
		method: http.MethodGet, path: "/v1/api/accounts/" + pathEscape(accountID) + "/locates/inventory",
		route: routeLocateInventory, retry: retryRead, op: "locate inventory",
	}, &listOf[InventoryRow]{out: &out, key: "locateInventory"})
	if err != nil {
		return nil, resp, err
	}
	if out == nil {
		out = []InventoryRow{}
	}
	return out, resp, nil
}

// History returns the account's locate rows for the trading day: quotes,
// both sides of Reg SHO pairs, accepts, credit-backs and expirations.
//
// Spec: GET /v1/api/accounts/{accountId}/locates/history.
func (s *LocatesService) History(ctx context.Context, accountID string) ([]HistoryRow, *Response, error) {
	if err := validateAccount("accountId", accountID); err != nil {
		return nil, nil, err
	}
	var out []HistoryRow
	resp, err := s.client.do(ctx, call{
		method: http.MethodGet, path: "/v1/api/accounts/" + pathEscape(accountID) + "/locates/history",
		route: routeLocateHistory, retry: retryRead, op: "locate history",
	}, &listOf[HistoryRow]{out: &out, key: "locateHistory"})
	if err != nil {
		return nil, resp, err
	}
	if out == nil {
		out = []HistoryRow{}
	}
	return out, resp, nil
}

// ErrQuoteNotFound matches a *QuoteNotFoundError.
var ErrQuoteNotFound = errors.New("locate request never reached the service")

// QuoteNotFoundError is ResolveQuote's verdict that a quote or sell whose
// answer was lost never arrived: history, read Polls times over the spec's
// polling window, holds no row under its id. Only then may a NEW request be
// sent, with a new id.
type QuoteNotFoundError struct {
	AccountID  string
	QuoteReqID string
	Polls      int
}

func (e *QuoteNotFoundError) Error() string {
	return fmt.Sprintf("brokerclient: locate %s on %s: no history row after %d reads; it never arrived",
		e.QuoteReqID, e.AccountID, e.Polls)
}

// Is reports ErrQuoteNotFound.
func (e *QuoteNotFoundError) Is(target error) bool { return target == ErrQuoteNotFound }

// The spec's "Short locates" rule 7: "after a write wait about 2 seconds,
// then poll history up to four times at 2-second spacing".
const (
	resolvePolls   = 4
	resolveSpacing = 2 * time.Second
)

// ResolveQuote settles an *OutcomeUnknownError from Quote or Sell by the
// client id it carries. It waits about 2 seconds on the client's clock, then
// reads history up to four times 2 seconds apart (spec: Short locates rule
// 7), and returns the rows whose BaseID is quoteReqID as soon as there are
// any: both sides of a Reg SHO pair, possibly still Quoting. When none
// appear it returns a *QuoteNotFoundError (errors.Is ErrQuoteNotFound): the
// request never arrived and may be replaced by a new one with a new id. A
// failed history read is returned as is and settles nothing.
//
// History covers the current trading day only, so resolve before the day ends.
func (s *LocatesService) ResolveQuote(ctx context.Context, accountID, quoteReqID string) ([]HistoryRow, *Response, error) {
	if err := validateAccount("accountId", accountID); err != nil {
		return nil, nil, err
	}
	if err := validateQuoteReqID(quoteReqID, true); err != nil {
		return nil, nil, err
	}
	base := strings.TrimSuffix(quoteReqID, shadowSuffix)
	var resp *Response
	for poll := 1; poll <= resolvePolls; poll++ {
		if err := clock.Sleep(ctx, s.client.clock, resolveSpacing); err != nil {
			return nil, resp, err
		}
		rows, r, err := s.History(ctx, accountID)
		resp = r
		if err != nil {
			return nil, resp, err
		}
		var found []HistoryRow
		for _, row := range rows {
			if row.BaseID() == base {
				found = append(found, row)
			}
		}
		if len(found) > 0 {
			return found, resp, nil
		}
		s.client.logger.Debug("locate not in history yet", "quoteReqID", base, "poll", poll)
	}
	return nil, resp, &QuoteNotFoundError{AccountID: accountID, QuoteReqID: base, Polls: resolvePolls}
}
