package brokerclient

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokercode"
)

// CashType is a ledger row's free-form category. The spec says to treat an
// unknown label as a new type, so any string decodes and is kept as is; the
// constants are the labels the spec names.
type CashType string

// The cash types the spec lists (Resources, "Cash ledger row").
const (
	// CashTypeLocateFees is a locate charge (withdraw) or credit-back refund (deposit).
	CashTypeLocateFees CashType = "Locate Fees"
	// CashTypeLocateBorrowCharge is a borrow charge (withdraw).
	CashTypeLocateBorrowCharge CashType = "Locate & Borrow Charge"
	// CashTypeMargin is margin interest (withdraw).
	CashTypeMargin CashType = "Margin"
	// CashTypeSoftwareData is a platform or data fee (withdraw).
	CashTypeSoftwareData CashType = "Software & Data"
	// CashTypeDividend is a dividend (deposit).
	CashTypeDividend CashType = "Dividend"
	// CashTypeGeneral is anything else, either way.
	CashTypeGeneral CashType = "General"
)

// Known reports whether t is one of the labels the spec lists.
func (t CashType) Known() bool {
	switch t {
	case CashTypeLocateFees, CashTypeLocateBorrowCharge, CashTypeMargin, CashTypeSoftwareData, CashTypeDividend, CashTypeGeneral:
		return true
	}
	return false
}

// CashEntry is one cash-ledger row (spec: Resources, "Cash ledger row").
// Exactly one of Deposit and Withdraw is non-zero.
type CashEntry struct {
	// AccountID is the account.
	AccountID string `json:"accountId"`
	// CashType is the category, unknown labels included.
	CashType CashType `json:"cashType"`
	// Currency is the currency name, for example USD.
	Currency string `json:"currency"`
	// Deposit is the amount added.
	Deposit decimal.Decimal `json:"deposit"`
	// Withdraw is the amount removed.
	Withdraw decimal.Decimal `json:"withdraw"`
	// EntryDate is the calendar date (midnight, no intraday time; DateOnly set).
	EntryDate Time `json:"entryDate"`
	// Note is the human-readable description.
	Note string `json:"note"`
}

// Amount is the signed effect on cash: Deposit − Withdraw.
func (e CashEntry) Amount() decimal.Decimal { return e.Deposit.Sub(e.Withdraw) }

// CashPagination is the ledger envelope's pagination object.
type CashPagination struct {
	// CurrentLimit is the effective page size after the service's clamping.
	CurrentLimit int `json:"currentLimit"`
	// CurrentOffset is the offset of the page's first row.
	CurrentOffset int `json:"currentOffset"`
	// TotalRecords is the number of rows in the whole window.
	TotalRecords int `json:"totalRecords"`
}

// CashPage is one page of the cash ledger.
type CashPage struct {
	// CashHistory is the page's rows, oldest first by entryDate.
	CashHistory []CashEntry `json:"cashHistory"`
	// Pagination says where the page sits in the window.
	Pagination CashPagination `json:"pagination"`
}

// Ledger bounds (spec: Limits, "Other bounds").
const (
	// MaxLedgerWindowDays is the longest window one ledger request covers.
	MaxLedgerWindowDays = 365
	// MaxLedgerPageSize is the largest limit the service honours; larger
	// values are clamped to it.
	MaxLedgerPageSize = 10000
	// DefaultLedgerPageSize is the page size Entries asks for by default.
	DefaultLedgerPageSize = 1000
)

// CashListOptions are the query parameters of one ledger request. Zero
// values leave the service's defaults (30 days, offset 0, limit 100).
type CashListOptions struct {
	// NumberOfDays is the window length from the start date, at most 365.
	NumberOfDays int
	// Offset is the index of the first row wanted within the window.
	Offset int
	// Limit is the page size; above 10000 the service clamps it and says so
	// in Pagination.CurrentLimit.
	Limit int
}

// List reads one page of the cash ledger for the window [startDate,
// startDate+NumberOfDays), startDate being the calendar date of startDate in
// its own location. An account the credentials do not own answers an empty
// page, not an error (spec: HTTP status map). Entries walks every page.
//
// Spec: GET /v1/api/accounts/{accountId}/cash-transactions/start-date/{startDate}.
func (s *LedgerService) List(ctx context.Context, accountID string, startDate time.Time, opts *CashListOptions) (*CashPage, *Response, error) {
	if err := validateAccount("accountId", accountID); err != nil {
		return nil, nil, err
	}
	if startDate.IsZero() {
		return nil, nil, brokercode.Invalid("startDate", "is the zero time")
	}
	q := url.Values{}
	if opts != nil {
		switch {
		case opts.NumberOfDays < 0 || opts.NumberOfDays > MaxLedgerWindowDays:
			return nil, nil, brokercode.Invalid("numberOfDays", "%d is outside 0..%d (split longer windows; Entries does)", opts.NumberOfDays, MaxLedgerWindowDays)
		case opts.Offset < 0:
			return nil, nil, brokercode.Invalid("offset", "%d is negative", opts.Offset)
		case opts.Limit < 0:
			return nil, nil, brokercode.Invalid("limit", "%d is negative", opts.Limit)
		}
		if opts.NumberOfDays > 0 {
			q.Set("numberOfDays", strconv.Itoa(opts.NumberOfDays))
		}
		if opts.Offset > 0 {
			q.Set("offset", strconv.Itoa(opts.Offset))
		}
		if opts.Limit > 0 {
			q.Set("limit", strconv.Itoa(opts.Limit))
		}
	}
	var page CashPage
	resp, err := s.client.do(ctx, call{
		method: http.MethodGet,
		path:   "/v1/api/accounts/" + pathEscape(accountID) + "/cash-transactions/start-date/" + startDate.Format(time.DateOnly),
		query:  q, route: routeCashLedger, retry: retryRead, op: "cash ledger",
	}, &listOf[CashEntry]{out: &page.CashHistory, key: "cashHistory", rest: &paginationOf[CashPagination]{&page.Pagination}})
	if err != nil {
		return nil, resp, err
	}
	if page.CashHistory == nil {
		page.CashHistory = []CashEntry{}
	}
	return &page, resp, nil
}

// EntriesOptions tune how Entries pages.
type EntriesOptions struct {
	// PageSize is the limit asked for on each request (default 1000). A
	// value above the service's 10000 clamp is sent as is; the walk follows
	// the effective limit the service echoes, so no row is skipped.
	PageSize int
}

// Entries walks every ledger row dated on or after start and before end
// (calendar dates, each in its own location), oldest first. A range longer
// than 365 days is split into consecutive windows of at most 365 days; each
// window is paged by raising offset by the effective limit the service
// echoes (currentLimit) while offset + rows < totalRecords (spec: "Cash
// ledger" rules). A failed request yields its error once and ends the walk;
// so does invalid input, before anything is sent.
//
// Rows are read page by page as the loop asks for them, so a fee that lands
// after an accept may or may not be seen (spec: a locate fee row may appear
// later than the fill); re-walk to reconcile.
func (s *LedgerService) Entries(ctx context.Context, accountID string, start, end time.Time, opts *EntriesOptions) iter.Seq2[CashEntry, error] {
	return func(yield func(CashEntry, error) bool) {
		size := DefaultLedgerPageSize
		if opts != nil && opts.PageSize != 0 {
			size = opts.PageSize
		}
		if err := validateAccount("accountId", accountID); err != nil {
			yield(CashEntry{}, err)
			return
		}
		if size < 0 {
			yield(CashEntry{}, brokercode.Invalid("pageSize", "%d is negative", size))
			return
		}
		if start.IsZero() || end.IsZero() {
			yield(CashEntry{}, brokercode.Invalid("start/end", "both dates are required"))
			return
		}
		from, to := civilDate(start), civilDate(end)
		if to.Before(from) {
			yield(CashEntry{}, brokercode.Invalid("end", "%s is before start %s", to.Format(time.DateOnly), from.Format(time.DateOnly)))
			return
		}
		days := int(to.Sub(from).Hours() / 24)
		for days > 0 {
			n := min(days, MaxLedgerWindowDays)
			if !s.walkWindow(ctx, accountID, from, n, size, yield) {
				return
			}
			from, days = from.AddDate(0, 0, n), days-n
		}
	}
}

// walkWindow yields every row of one window of at most 365 days; it reports
// false when the walk must end (the caller stopped, or an error was yielded).
func (s *LedgerService) walkWindow(ctx context.Context, accountID string, from time.Time, days, size int, yield func(CashEntry, error) bool) bool {
	offset := 0
	for {
		page, _, err := s.List(ctx, accountID, from, &CashListOptions{NumberOfDays: days, Offset: offset, Limit: size})
		if err != nil {
			yield(CashEntry{}, err)
			return false
		}
		for _, e := range page.CashHistory {
			if !yield(e, nil) {
				return false
			}
		}
		rows, total := len(page.CashHistory), page.Pagination.TotalRecords
		if offset+rows >= total {
			return true
		}
		if rows == 0 {
			// Walking on would only meet more empty pages; say so instead of
			// pretending the window is complete.
			yield(CashEntry{}, fmt.Errorf("brokerclient: cash ledger %s from %s: empty page at offset %d of %d records",
				accountID, from.Format(time.DateOnly), offset, total))
			return false
		}
		// Raise offset by the effective limit the service applied; if it did
		// not echo one, or returned more rows than it, by what it returned.
		step := page.Pagination.CurrentLimit
		if step <= 0 || step < rows {
			step = rows
		}
		offset += step
	}
}

// civilDate is t's calendar date, as midnight UTC.
func civilDate(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}
