package answerlink

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/market"
)

// Prefix is the path the links are served under; a dashboard routes it
// to Handler outside its token check.
const Prefix = "/link/"

// formField is the form field the page's button posts its form token in.
const formField = "csrf"

// answerTimeout bounds an answer once its button was pressed: it is given
// even if the phone goes away meanwhile (its link is used by then).
const answerTimeout = 15 * time.Second

// Handler serves the links of the accounts given (by account id): GET
// shows what a link would do and a button, POST answers through the
// account's API. It is nil when ls is nil: no links, nothing to mount.
func (ls *Links) Handler(accounts map[string]account.Account) http.Handler {
	if ls == nil {
		return nil
	}
	h := &handler{ls: ls, accounts: accounts}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+Prefix+"{token}", h.confirm)
	mux.HandleFunc("POST "+Prefix+"{token}", h.answer)
	return mux
}

type handler struct {
	ls       *Links
	accounts map[string]account.Account
}

// page is what a link's page says: a question with its button, or an
// outcome.
type page struct {
	Title  string
	Lines  []string
	Button string // set on the confirm page
	// Form is the form token the button's form posts (Key.formToken).
	Form string
	// Decline colours the button as a decline (red, not green).
	Decline bool
}

// pageStyle makes the page readable and its button easy to press on a
// phone: one column, large type, a full-width button. It is inline (no
// external asset) and allowed by its hash in the page's CSP.
const pageStyle = `body{font:1.125rem/1.5 system-ui,sans-serif;max-width:32rem;margin:0 auto;padding:1.25rem;color:#111;background:#fff}` +
	`h1{font-size:1.5rem;margin:.5rem 0 1rem}` +
	`p{margin:0 0 1rem;overflow-wrap:anywhere}` +
	`button{display:block;width:100%;min-height:3.5rem;margin-top:1.5rem;font:600 1.25rem system-ui,sans-serif;color:#fff;background:#0a7a3b;border:0;border-radius:.5rem;cursor:pointer}` +
	`button.decline{background:#b42318}`

// pageCSP is the pages' Content-Security-Policy: nothing but the page's
// own style and a form posting to itself.
var pageCSP = func() string {
	sum := sha256.Sum256([]byte(pageStyle))
	return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
}()

var pageTemplate = template.Must(template.New("link").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><meta name="robots" content="noindex, nofollow"><title>locator: {{.Title}}</title>
<style>` + pageStyle + `</style></head>
<body><h1>{{.Title}}</h1>
{{range .Lines}}<p>{{.}}</p>
{{end}}{{if .Button}}<form method="post"><input type="hidden" name="` + formField + `" value="{{.Form}}"><button type="submit"{{if .Decline}} class="decline"{{end}}>{{.Button}}</button></form>
{{end}}</body></html>
`))

// render writes p with status: no external asset, nothing cached, no
// Referer that could carry the link elsewhere.
func render(w http.ResponseWriter, status int, p page) {
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, p); err != nil {
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Robots-Tag", "noindex, nofollow")
	h.Set("Content-Security-Policy", pageCSP)
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// verify reads the request's link; on a refusal it has answered the
// request itself and returns false. Nothing is asked of any account.
func (h *handler) verify(w http.ResponseWriter, r *http.Request) (Link, account.Account, bool) {
	l, err := h.ls.key.Verify(r.PathValue("token"), h.ls.clk.Now())
	switch {
	case errors.Is(err, ErrExpired):
		h.refuse(w, http.StatusGone, "Link expired", err.Error(), "expired", l)
		return l, nil, false
	case err != nil:
		h.refuse(w, http.StatusForbidden, "Link not valid", err.Error(), "invalid", l)
		return l, nil, false
	}
	a := h.accounts[l.Account]
	if a == nil {
		h.refuse(w, http.StatusNotFound, "Account not served here", "this server does not answer for account "+l.Account+".", "account not served", l)
		return l, nil, false
	}
	return l, a, true
}

// refuse answers a refusal: what is wrong, and that nothing was sent.
func (h *handler) refuse(w http.ResponseWriter, status int, title, why, reason string, l Link) {
	h.ls.log.Info("answer link refused", "reason", reason, "status", status, "account", l.Account, "id", l.Workflow)
	render(w, status, page{Title: title, Lines: []string{why, "Nothing was sent to the broker."}})
}

// offer is l's offer in words.
func offer(l Link) string {
	total := l.Price.Mul(decimal.NewFromInt(l.Shares))
	return fmt.Sprintf("Locate %d %s at %s a share (%s in all) on account %s, workflow %s.",
		l.Shares, l.Symbol, l.Price.StringFixed(4), total.StringFixed(2), l.Account, l.Workflow)
}

// confirm shows what the link would do and the button that does it: a
// GET never answers (link previewers fetch it).
func (h *handler) confirm(w http.ResponseWriter, r *http.Request) {
	l, _, ok := h.verify(w, r)
	if !ok {
		return
	}
	title, button := "Approve this locate offer?", "Approve"
	if l.Answer == Decline {
		title, button = "Decline this locate offer?", "Decline"
	}
	render(w, http.StatusOK, page{Title: title, Button: button, Decline: l.Answer == Decline, Form: h.ls.key.formToken(r.PathValue("token")), Lines: []string{
		offer(l),
		"Answer by " + l.Deadline.In(market.NewYork).Format("15:04:05") + " ET. Opening this page answered nothing; the button answers, once.",
	}})
}

// answer answers the link's offer through the account API, as a person's
// answer by link (the owner records the use first, so it answers once),
// when the button of the link's page posted it: with the page's form token,
// compared in constant time.
func (h *handler) answer(w http.ResponseWriter, r *http.Request) {
	l, a, ok := h.verify(w, r)
	if !ok {
		return
	}
	if !hmac.Equal([]byte(r.PostFormValue(formField)), []byte(h.ls.key.formToken(r.PathValue("token")))) {
		h.refuse(w, http.StatusForbidden, "Not answered from the link's page",
			"An answer is taken only from the button of the link's own page: open the link and press its button.", "no form token", l)
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), answerTimeout)
	defer cancel()
	err := a.Answer(ctx, account.AnswerRequest{ID: l.Workflow, Accept: l.Answer == Approve, Offer: l.Offer, Price: l.Price,
		Via: "a signed link", ByLink: true})
	if err != nil {
		h.answerRefused(w, l, err)
		return
	}
	h.ls.log.Info("offer answered by a signed link", "account", l.Account, "id", l.Workflow, "answer", string(l.Answer))
	if l.Answer == Approve {
		render(w, http.StatusOK, page{Title: "Approved", Lines: []string{offer(l),
			"locator is accepting it now; the dashboard and `locator status` show how the locate ends."}})
		return
	}
	render(w, http.StatusOK, page{Title: "Declined", Lines: []string{offer(l), "The offer was declined; nothing was bought."}})
}

// answerRefused says why the account did not take the link's answer, with
// the status its kind calls for.
func (h *handler) answerRefused(w http.ResponseWriter, l Link, err error) {
	kind := account.KindOf(err)
	switch kind {
	case account.KindUsed:
		h.refuse(w, http.StatusGone, "Link already used", err.Error(), string(kind), l)
	case account.KindNotOpen, account.KindChanged:
		h.refuse(w, http.StatusConflict, "No such offer waits", err.Error(), string(kind), l)
	case account.KindInput, account.KindRefused:
		h.refuse(w, http.StatusForbidden, "Answer refused", err.Error(), string(kind), l)
	default:
		// The link is used (recorded before the answer) but the answer
		// did not go through: say so, and where to answer instead.
		h.ls.log.Warn("answer by link failed", "account", l.Account, "id", l.Workflow, "kind", string(kind), "err", err)
		render(w, http.StatusServiceUnavailable, page{Title: "The answer did not go through", Lines: []string{
			offer(l), err.Error(), "A link answers once, and this one may count as used: answer on the dashboard or with `locator approve` or `locator decline` while the offer waits."}})
	}
}
