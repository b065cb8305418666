package brokersim

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"
)

// maxBody caps what the simulator reads of a request body.
const maxBody = 1 << 20

// authKind says how a route treats missing, invalid or foreign credentials;
// the spec's "API keys" rule 6 and its HTTP status map differ per endpoint.
type authKind int

const (
	// authRead: missing or invalid keys, or an {accountId} the key does not
	// own, answer 404 text "Not found".
	authRead authKind = iota
	// authWrite: the handler resolves the account from the path or body and
	// answers 400 account/entitlements JSON when it does not map to the key.
	authWrite
	// authCancelOrder: missing keys answer 401 JSON; a foreign path account
	// answers 400 JSON CancelOrderWithResponse.
	authCancelOrder
	// authLedger: missing or invalid keys answer 404; a foreign or unknown
	// account answers 200 with an empty envelope (the handler does that).
	authLedger
	// authNone: answered before any credential check (405s, OPTIONS).
	authNone
	// authPartner: the partner login page and token endpoint, whose
	// credentials travel in the form; no key check, no rate limit.
	authPartner
)

// route is one endpoint: its ServeMux pattern, its rate-limit bucket (the
// spec's "Rate limits" row, or "" for the documented default), how it
// authenticates, and the handler that runs under the simulator's lock.
type route struct {
	pattern string
	bucket  string
	auth    authKind
	h       func(c *call) reply
}

// call is one request being answered under the simulator's lock.
type call struct {
	s    *Sim
	r    *http.Request
	key  *simKey // nil when the credentials are missing or invalid
	body []byte
	now  time.Time
	acct *account // the owned {accountId} for authRead routes
}

// principalLocked is the key a request acts as: its key pair, or the one a
// partner's valid access token acts for; nil for neither.
func (s *Sim) principalLocked(r *http.Request) *simKey {
	prefix := s.sc.KeyHeaderPrefix
	keyID := r.Header.Get(prefix + "-API-KEY-ID")
	secret := r.Header.Get(prefix + "-API-SECRET-KEY")
	key := s.keys[keyID]
	if key != nil && key.secret != secret {
		key = nil
	}
	if tok, ok := bearerToken(r); ok && keyID == "" && secret == "" {
		key = s.bearerPrincipal(tok)
	}
	return key
}

// reply is a response computed under the lock and written after it.
type reply struct {
	status int
	ctype  string
	body   []byte
	header http.Header
	noBody bool // status only, as in a 429 or a HEAD 405
}

const ctypeJSON = "application/json; charset=utf-8"
const ctypeText = "text/plain; charset=utf-8"

// jsonReply encodes v as the broker does: compact JSON.
func jsonReply(status int, v any) reply {
	b, err := json.Marshal(v)
	if err != nil {
		return textReply(http.StatusInternalServerError, "internal error: "+err.Error())
	}
	return reply{status: status, ctype: ctypeJSON, body: b}
}

func textReply(status int, text string) reply {
	return reply{status: status, ctype: ctypeText, body: []byte(text)}
}

// notFoundText is the 404 for missing, invalid or foreign credentials on reads.
func notFoundText() reply { return textReply(http.StatusNotFound, "Not found") }

// pageNotFound is the router's answer to a malformed URL.
func pageNotFound() reply { return textReply(http.StatusNotFound, "404 page not found") }

// methodNotAllowed is the router's answer to a wrong method.
func methodNotAllowed() reply {
	return textReply(http.StatusMethodNotAllowed, "405 method not allowed")
}

// errorJSON is the broker's { statusCode, message, detail } error body.
type errorJSON struct {
	StatusCode string  `json:"statusCode"`
	Message    string  `json:"message"`
	Detail     *string `json:"detail"`
}

// accountMismatch is the 400 of a write whose account does not map to the key.
func accountMismatch() reply {
	return jsonReply(http.StatusBadRequest, errorJSON{
		StatusCode: "BadRequest",
		Message:    "The account for the user was not found or the user lacks entitlements for this account.",
	})
}

// validationLines is the 400 text/plain body: one "- field: message" per line.
func validationLines(lines ...string) reply {
	return textReply(http.StatusBadRequest, strings.Join(lines, "\n"))
}

// problemDetails is the ASP.NET-style 400 for out-of-range quantities.
func problemDetails(field, message string, now time.Time) reply {
	r := jsonReply(http.StatusBadRequest, map[string]any{
		"errors": map[string][]string{field: {message}},
		"type":   "https://tools.ietf.org/html/rfc9110#section-15.5.1",
		"title":  "One or more validation errors occurred.",
		"status": 400,
		"traceId": "00-" + strings.Repeat("0", 16) +
			strings.ReplaceAll(now.UTC().Format("150405.000000"), ".", "") + "-00",
	})
	r.ctype = "application/problem+json; charset=utf-8"
	return r
}

// Timestamp formats: the spec says fractional precision varies from 3 to 7
// digits, so the simulator uses both, as the live service does.
const (
	time7 = "2006-01-02T15:04:05.0000000Z"
	time3 = "2006-01-02T15:04:05.000Z"
	// dateMidnight is the date-only form of ledger and some historical rows.
	dateMidnight = "2006-01-02T00:00:00"
)

func fmt7(t time.Time) string { return t.UTC().Format(time7) }
func fmt3(t time.Time) string { return t.UTC().Format(time3) }

// ServeHTTP answers one request: admin routes first (WithAdmin), then the
// broker routes behind URL checks, fault injection and the request log.
func (s *Sim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.admin && strings.HasPrefix(r.URL.Path, "/_sim/") {
		s.serveAdmin(w, r)
		return
	}
	if r.Method == http.MethodGet && (r.URL.Path == "/stream/"+streamPnL || r.URL.Path == "/stream/"+streamPortfolio) {
		w.Header().Set("Date", s.Now().UTC().Format(http.TimeFormat))
		s.serveStream(w, r, strings.TrimPrefix(r.URL.Path, "/stream/"))
		return
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, maxBody))
	r.Body = io.NopCloser(bytes.NewReader(body))
	rec := s.requestRecord(r, body)

	p := r.URL.Path
	if len(p) > 1 && strings.HasSuffix(p, "/") {
		p = strings.TrimSuffix(p, "/") // "A trailing slash is accepted."
	}
	clean := p != "" && path.Clean(p) == p
	var rt *route
	if clean {
		r.URL.Path, r.URL.RawPath = p, ""
		h, _ := s.mux.Handler(r)
		if h, ok := h.(*routeHandler); ok {
			rt = &h.rt
		}
	}
	a := s.admit(rec, r, clean, rt)
	// The broker's own time, which a client may compare with its clock.
	w.Header().Set("Date", a.at.UTC().Format(http.TimeFormat))
	if !clean {
		s.finish(w, r, a.entry, pageNotFound())
		return
	}

	switch a.fault {
	case faultReset:
		s.setStatus(a.entry, 0)
		resetConn(w)
		return
	case fault500:
		s.finish(w, r, a.entry, textReply(http.StatusInternalServerError, "Internal Server Error"))
		return
	case fault503:
		s.finish(w, r, a.entry, textReply(http.StatusServiceUnavailable, "Service Unavailable"))
		return
	case fault429:
		s.finish(w, r, a.entry, reply{status: http.StatusTooManyRequests, noBody: true})
		return
	case fault403:
		s.finish(w, r, a.entry, reply{status: http.StatusForbidden, ctype: "text/html; charset=utf-8",
			body: []byte("<html><head><title>403 Forbidden</title></head><body><h1>403 Forbidden</h1></body></html>")})
		return
	case faultDelay:
		s.delay(r)
	}

	if rt == nil {
		s.finish(w, r, a.entry, s.unmatched(r))
		return
	}
	rw := &capture{header: http.Header{}, in: a}
	s.mux.ServeHTTP(rw, r)
	if a.fault == faultResetAfter {
		s.setStatus(a.entry, 0)
		resetConn(w)
		return
	}
	s.finish(w, r, a.entry, rw.reply())
}

// arrival is what the simulator settles about a broker request as it comes
// in, under one hold of its lock: the time (the Date header's, the log's and
// the rate limit's), the log entry, the fault drawn, the key pair the
// request acts as, and whether the route's bucket of that key pair was empty. A bucket so judges requests at
// their arrival and in its order, as the log shows them, as the broker's
// does, however long the simulator then takes to serve them: judged when its
// lock let each through, requests a client had paced could reach the bucket
// bunched, and be answered 429 where the broker would let them pass.
type arrival struct {
	at        time.Time
	entry     int
	fault     faultKind
	key       *simKey // nil: none, or not asked (see admit)
	throttled bool
}

// admit logs rec, and for a clean path draws its fault and, for a broker
// route rt the fault lets through, finds the key pair the request acts as
// and takes a token from its bucket.
func (s *Sim) admit(rec RequestRecord, r *http.Request, clean bool, rt *route) arrival {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := arrival{at: s.clockNow()}
	a.entry = s.logLocked(rec, a.at)
	if !clean {
		return a
	}
	a.fault = s.drawFaultLocked(r)
	switch a.fault {
	case faultNone, faultDelay, faultResetAfter: // the request is served
	default:
		return a
	}
	if rt == nil || rt.auth == authNone || rt.auth == authPartner {
		return a
	}
	if a.key = s.principalLocked(r); a.key != nil {
		a.throttled = !s.limits.allow(a.key.id, rt.bucket, a.at)
	}
	return a
}

// unmatched tells a wrong method (405) from an unknown path (404).
func (s *Sim) unmatched(r *http.Request) reply {
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete, http.MethodPut, http.MethodPatch} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "" {
			return methodNotAllowed()
		}
	}
	return pageNotFound()
}

// routeHandler is a route on the simulator's mux, which ServeHTTP also asks
// for the route of a request before admitting it.
type routeHandler struct {
	s  *Sim
	rt route
}

// ServeHTTP answers the route into ServeHTTP's capture: the credentials
// and the rate limit admit judged, then the handler under the lock after
// the world has been advanced to now.
func (h *routeHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rw := w.(*capture)
	rw.r = h.s.serveRoute(h.rt, r, body, rw.in)
}

// serveRoute answers a request as admit found it: acting as a.key, and
// throttled when that key pair's bucket for the route was empty as it
// arrived.
func (s *Sim) serveRoute(rt route, r *http.Request, body []byte, a arrival) reply {
	if rt.auth == authNone {
		s.mu.Lock()
		defer s.mu.Unlock()
		return rt.h(&call{s: s, r: r, body: body, now: s.now})
	}
	if rt.auth == authPartner {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.advanceLocked()
		return rt.h(&call{s: s, r: r, body: body, now: s.now})
	}
	prefix := s.sc.KeyHeaderPrefix
	keyID := r.Header.Get(prefix + "-API-KEY-ID")
	secret := r.Header.Get(prefix + "-API-SECRET-KEY")

	s.mu.Lock()
	defer s.mu.Unlock()
	key := a.key
	if key == nil {
		switch rt.auth {
		case authRead, authLedger:
			return notFoundText()
		case authCancelOrder:
			if keyID == "" && secret == "" && r.Header.Get("Authorization") == "" {
				return jsonReply(http.StatusUnauthorized, errorJSON{StatusCode: "Unauthorized", Message: "No token was provided."})
			}
			return jsonReply(http.StatusUnauthorized, errorJSON{StatusCode: "Unauthorized", Message: "The provided credentials are not valid."})
		}
	}
	if key != nil && a.throttled {
		return reply{status: http.StatusTooManyRequests, noBody: true}
	}
	s.advanceLocked()
	c := &call{s: s, r: r, key: key, body: body, now: s.now}
	if rt.auth == authRead {
		if id := r.PathValue("accountId"); id != "" {
			c.acct = s.ownedAccount(key, id)
			if c.acct == nil {
				return notFoundText()
			}
		}
	}
	return rt.h(c)
}

// capture collects what a route handler decided, so the front handler can
// apply fault injection and logging before anything reaches the wire.
type capture struct {
	header http.Header
	in     arrival // what admit settled about the request
	r      reply
}

func (c *capture) Header() http.Header         { return c.header }
func (c *capture) Write(b []byte) (int, error) { c.r.body = append(c.r.body, b...); return len(b), nil }
func (c *capture) WriteHeader(code int)        { c.r.status = code }
func (c *capture) reply() reply {
	if c.r.status == 0 {
		c.r.status = http.StatusOK
	}
	return c.r
}

// finish logs the status and writes the reply: JSON successes carry the
// spec's Cache-Control and are gzip-encoded when the client accepts it.
func (s *Sim) finish(w http.ResponseWriter, r *http.Request, entry int, rp reply) {
	s.setStatus(entry, rp.status)
	h := w.Header()
	for k, v := range rp.header {
		h[k] = v
	}
	if rp.noBody {
		w.WriteHeader(rp.status)
		return
	}
	if rp.ctype != "" {
		h.Set("Content-Type", rp.ctype)
	}
	body := rp.body
	if rp.status < 300 && strings.HasPrefix(rp.ctype, "application/json") {
		h.Set("Cache-Control", "max-age=0, no-cache, no-store")
		if acceptsGzip(r) && len(body) > 0 {
			var buf bytes.Buffer
			zw := gzipWriters.Get().(*gzip.Writer)
			zw.Reset(&buf)
			zw.Write(body)
			zw.Close()
			gzipWriters.Put(zw)
			body = buf.Bytes()
			h.Set("Content-Encoding", "gzip")
			h.Add("Vary", "Accept-Encoding")
		}
	}
	w.WriteHeader(rp.status)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

// gzipWriters reuses compressors: a fresh gzip.Writer allocates about
// 800 KB, which dominated the cost of every response.
var gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		if strings.TrimSpace(strings.SplitN(part, ";", 2)[0]) == "gzip" {
			return true
		}
	}
	return false
}
