package brokerclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"strings"
)

// Kinds of failure, for errors.Is. Every typed error below matches one.
var (
	// ErrNotFound: 404 (missing/invalid credentials on reads, unknown ids,
	// malformed URLs; the spec does not tell these apart).
	ErrNotFound = errors.New("not found")
	// ErrUnauthorized: 401 JSON (cancel-by-id without credentials).
	ErrUnauthorized = errors.New("unauthorized")
	// ErrBadRequest: 400 of any shape (validation lines, ProblemDetails,
	// account/entitlements JSON).
	ErrBadRequest = errors.New("bad request")
	// ErrAccount: the 400 JSON telling that the account does not map to the
	// credentials or lacks entitlements.
	ErrAccount = errors.New("account not found for these credentials or not entitled")
	// ErrRateLimited: 429s persisted through the spec's recovery schedule.
	ErrRateLimited = errors.New("rate limited")
	// ErrServer: 5xx after the retries allowed for the call.
	ErrServer = errors.New("server error")
	// ErrOutcomeUnknown: a write that must not be repeated lost its answer.
	ErrOutcomeUnknown = errors.New("outcome unknown")
	// ErrRedirect: the broker answered with a redirect, which the client
	// never follows (the key pair would go to its target).
	ErrRedirect = errors.New("redirected")
	// ErrAnswerTooLarge: a broker answer exceeded its bound (64 MiB, 1 MiB
	// for a partner token answer or a row of an answer); the rest of it
	// was not read. An answer within it may still hold too many rows:
	// ErrTooManyRows.
	ErrAnswerTooLarge = errors.New("broker answer too large")
)

// AnswerTooLargeError is a broker answer longer than Limit bytes: a REST
// body, a token answer or a stream message; or, with Row, one of its rows
// (an element of its outermost array) longer than Limit. Reading stopped
// at the bound and the call is not retried: the broker would answer the
// same again.
type AnswerTooLargeError struct {
	Op    string
	Limit int64
	Row   bool
}

func (e *AnswerTooLargeError) Error() string {
	what := "the broker's answer"
	if e.Row {
		what = "a row of the broker's answer"
	}
	return fmt.Sprintf("brokerclient: %s: %s exceeded %d bytes and was not read further", e.Op, what, e.Limit)
}

// Is reports ErrAnswerTooLarge.
func (e *AnswerTooLargeError) Is(target error) bool { return target == ErrAnswerTooLarge }

// RedirectError is a 3xx answer. It is a fault of the address or of
// something between us and the broker; the request was not sent on, and
// the error names only the host of the location, never the whole address
// (it may carry tokens) nor the request's headers.
type RedirectError struct {
	Op         string
	StatusCode int
	// Host is the Location's host ("" when there was none, or it was
	// relative: the same host).
	Host string
}

func (e *RedirectError) Error() string {
	to := "the same host"
	if e.Host != "" {
		to = e.Host
	}
	return fmt.Sprintf("brokerclient: %s: the broker address answered %d, a redirect to %s, which is never followed (the key pair would go there): check the address", e.Op, e.StatusCode, to)
}

// Is reports ErrRedirect.
func (e *RedirectError) Is(target error) bool { return target == ErrRedirect }

// locationHost is the host of resp's Location header, without anything
// else of it.
func locationHost(resp *http.Response) string {
	u, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		return ""
	}
	return u.Host
}

// ErrorResponse is a non-2xx answer. The body was read according to its
// Content-Type: text/plain validation lines, or the service's JSON
// { statusCode, message, detail }.
type ErrorResponse struct {
	Op          string
	Method      string
	Path        string // the request path; never carries secrets
	StatusCode  int
	ContentType string
	// Lines are the "- field: message" lines of a text/plain 400.
	Lines []ValidationLine
	// Text is the plain-text body otherwise ("Not found", "404 page not found").
	Text string
	// Status, Message and Detail come from a JSON error body.
	Status  string
	Message string
	Detail  string
}

// ValidationLine is one "- field: message" line of a 400 text/plain body.
// Field is "(root)" for missing required fields.
type ValidationLine struct {
	Field   string
	Message string
}

func (e *ErrorResponse) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "brokerclient: %s: %s %s: %d", e.Op, e.Method, e.Path, e.StatusCode)
	switch {
	case len(e.Lines) > 0:
		for i, l := range e.Lines {
			if i > 0 {
				b.WriteString(";")
			}
			fmt.Fprintf(&b, " %s: %s", l.Field, l.Message)
		}
	case e.Message != "":
		fmt.Fprintf(&b, " %s", e.Message)
		if e.Detail != "" {
			fmt.Fprintf(&b, " (%s)", e.Detail)
		}
	case e.Text != "":
		fmt.Fprintf(&b, " %s", e.Text)
	}
	return b.String()
}

// Is maps the response to its kind.
func (e *ErrorResponse) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.StatusCode == http.StatusNotFound
	case ErrUnauthorized:
		return e.StatusCode == http.StatusUnauthorized
	case ErrBadRequest:
		return e.StatusCode == http.StatusBadRequest
	case ErrAccount:
		// The account/entitlements 400 is the JSON one whose statusCode is
		// BadRequest; the spec says not to branch on the message text.
		return e.StatusCode == http.StatusBadRequest && e.Status == "BadRequest" && e.Message != "CancelOrderWithResponse"
	case ErrServer:
		return e.StatusCode >= 500
	}
	return false
}

// ProblemDetails is the ASP.NET-style 400 the locate endpoints send for a
// quantity outside 100..2147483647.
type ProblemDetails struct {
	Op      string              `json:"-"`
	Type    string              `json:"type"`
	Title   string              `json:"title"`
	Status  int                 `json:"status"`
	TraceID string              `json:"traceId"`
	Errors  map[string][]string `json:"errors"`
}

func (p *ProblemDetails) Error() string {
	var parts []string
	for field, msgs := range p.Errors {
		parts = append(parts, field+": "+strings.Join(msgs, ", "))
	}
	return fmt.Sprintf("brokerclient: %s: %s %s", p.Op, p.Title, strings.Join(parts, "; "))
}

// Is reports ErrBadRequest.
func (p *ProblemDetails) Is(target error) bool { return target == ErrBadRequest }

// RateLimitError is returned when 429s persist through the spec's recovery.
type RateLimitError struct {
	Op       string
	Attempts int
}

func (e *RateLimitError) Error() string {
	return fmt.Sprintf("brokerclient: %s: still rate limited after %d attempts", e.Op, e.Attempts)
}

// Is reports ErrRateLimited.
func (e *RateLimitError) Is(target error) bool { return target == ErrRateLimited }

// OutcomeUnknownError says a quote, sell or order placement may or may not
// have been processed: the request left, the answer did not arrive. It is
// never re-sent blindly; settle it with the client id (ResolveQuote,
// ResolveOrder).
type OutcomeUnknownError struct {
	Op       string
	ClientID string // the quoteReqID or clientOrderId the request carried
	Err      error
}

func (e *OutcomeUnknownError) Error() string {
	return fmt.Sprintf("brokerclient: %s %s: outcome unknown: %v", e.Op, e.ClientID, e.Err)
}

// Unwrap returns the transport or server error.
func (e *OutcomeUnknownError) Unwrap() error { return e.Err }

// Is reports ErrOutcomeUnknown.
func (e *OutcomeUnknownError) Is(target error) bool { return target == ErrOutcomeUnknown }

// DecodeError is a 2xx body that did not decode.
type DecodeError struct {
	Op   string
	Err  error
	Body string // at most 512 bytes of it
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("brokerclient: %s: decode response: %v", e.Op, e.Err)
}

// Unwrap returns the JSON error.
func (e *DecodeError) Unwrap() error { return e.Err }

var validationLineRE = regexp.MustCompile(`^- ([^:]+): (.*)$`)

// checkResponse turns a non-2xx response into a typed error, branching on
// Content-Type before decoding: the spec's error bodies are often not JSON.
// The broker's text in it is CleanText, with sec masked wherever the
// broker echoed one.
func checkResponse(cl call, resp *http.Response, sec secrets) error {
	err := decodeError(cl, resp, sec)
	sec.cleanMasked(err)
	return err
}

func decodeError(cl call, resp *http.Response, sec secrets) error {
	defer drain(resp)
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	body = sec.maskBody(body)
	ctype := resp.Header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ctype)
	e := &ErrorResponse{Op: cl.op, Method: cl.method, Path: cl.path, StatusCode: resp.StatusCode, ContentType: ctype}
	switch {
	case mt == "application/problem+json":
		p := &ProblemDetails{Op: cl.op}
		if json.Unmarshal(body, p) == nil {
			return p
		}
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		var j struct {
			StatusCode string  `json:"statusCode"`
			Message    string  `json:"message"`
			Detail     *string `json:"detail"`
			Errors     map[string][]string
			Title      string
			TraceID    string `json:"traceId"`
		}
		if json.Unmarshal(body, &j) == nil {
			if j.Errors != nil && j.StatusCode == "" {
				return &ProblemDetails{Op: cl.op, Title: j.Title, Status: resp.StatusCode, TraceID: j.TraceID, Errors: j.Errors}
			}
			e.Status, e.Message = j.StatusCode, j.Message
			if j.Detail != nil {
				e.Detail = *j.Detail
			}
			return e
		}
		e.Text = truncate(body)
	default:
		text := strings.TrimSpace(string(body))
		for _, line := range strings.Split(text, "\n") {
			if m := validationLineRE.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
				e.Lines = append(e.Lines, ValidationLine{Field: m[1], Message: m[2]})
			}
		}
		if len(e.Lines) == 0 {
			e.Text = truncate([]byte(text))
		}
	}
	return e
}
