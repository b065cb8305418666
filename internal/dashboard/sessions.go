package dashboard

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// cookieBase names the login cookie; its full name adds the port
// (cookieName).
const cookieBase = "locator_dashboard"

// csrfField is the form field that carries a login's form token: every
// form of the page holds it, and a POST without it is refused.
const csrfField = "csrf"

// Login sessions: a cookie is good for sessionTTL; one older than
// rotateAfter is replaced by a new one at its next request, and the old one
// then stays good for rotateGrace only (requests already on their way). At
// most maxSessions live at once; past that the oldest goes.
const (
	sessionTTL  = 12 * time.Hour
	rotateAfter = 15 * time.Minute
	rotateGrace = time.Minute
	maxSessions = 64
)

// sessions are the live login sessions, by the hash of their id (so a
// lookup's timing says nothing of an id).
type sessions struct {
	mu   sync.Mutex
	byID map[[32]byte]session
}

// session is one cookie's. Its id is random, made at the login or a
// rotation, never the token nor anything made from it. csrf is its login's
// form token: random, made at the login and handed on at each rotation, so
// a page loaded before a rotation still posts; logging out ends every
// session of the login.
type session struct {
	issued, expires time.Time
	rotated         bool // replaced: good until expires, never rotated again
	csrf            string
}

// open starts a session at now of the login whose form token is csrf (""
// starts a new login, with a form token of its own), and returns its id
// and its form token.
func (ss *sessions) open(now time.Time, csrf string) (id, token string) {
	id = rand.Text()
	if csrf == "" {
		csrf = rand.Text()
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for k, s := range ss.byID {
		if !now.Before(s.expires) {
			delete(ss.byID, k)
		}
	}
	for len(ss.byID) >= maxSessions {
		var oldest [32]byte
		first := true
		for k, s := range ss.byID {
			if first || s.issued.Before(ss.byID[oldest].issued) {
				oldest, first = k, false
			}
		}
		delete(ss.byID, oldest)
	}
	ss.byID[sha256.Sum256([]byte(id))] = session{issued: now, expires: now.Add(sessionTTL), csrf: csrf}
	return id, csrf
}

// check returns the form token of session id when it is live at now ("" if
// not), and whether it is due for rotation; a session rotated stays good
// for rotateGrace only.
func (ss *sessions) check(id string, now time.Time) (csrf string, rotate bool) {
	k := sha256.Sum256([]byte(id))
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s, found := ss.byID[k]
	if !found || !now.Before(s.expires) {
		return "", false
	}
	if s.rotated || now.Sub(s.issued) < rotateAfter {
		return s.csrf, false
	}
	s.rotated = true
	if grace := now.Add(rotateGrace); grace.Before(s.expires) {
		s.expires = grace
	}
	ss.byID[k] = s
	return s.csrf, true
}

// end ends every session of the login whose form token is csrf (none for
// "").
func (ss *sessions) end(csrf string) {
	if csrf == "" {
		return
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for k, s := range ss.byID {
		if s.csrf == csrf {
			delete(ss.byID, k)
		}
	}
}

// cookieName is the login cookie's name for r: with the port r came to, so
// the dashboards on two ports of one host (two users', two daemons') keep
// their cookies apart, and under TLS with the __Host- prefix, which a
// browser takes only Secure, for Path=/ and without a Domain, so no page of
// another port or of a subdomain can plant one in its place.
func cookieName(r *http.Request, secure bool) string {
	name := cookieBase + "_" + strconv.Itoa(int(localAddr(r).Port()))
	if secure {
		name = "__Host-" + name
	}
	return name
}

// checkSession returns the form token of r's live login session ("" when r
// carries none), and replaces its cookie when due for rotation.
func (s *Server) checkSession(w http.ResponseWriter, r *http.Request, secure bool) string {
	c, err := r.Cookie(cookieName(r, secure))
	if err != nil {
		return ""
	}
	csrf, rotate := s.sessions.check(c.Value, s.clk.Now())
	if rotate {
		s.setSession(w, r, secure, csrf)
	}
	return csrf
}

// setSession opens a session of the login whose form token is csrf (""
// for a new login) and sets its cookie: HttpOnly, same-site only, Secure
// when the request came encrypted (always, off loopback), and gone after
// sessionTTL. It returns the login's form token.
func (s *Server) setSession(w http.ResponseWriter, r *http.Request, secure bool, csrf string) string {
	id, csrf := s.sessions.open(s.clk.Now(), csrf)
	http.SetCookie(w, &http.Cookie{Name: cookieName(r, secure), Value: id, Path: "/", HttpOnly: true,
		Secure: secure, SameSite: http.SameSiteStrictMode, MaxAge: int(sessionTTL.Seconds())})
	return csrf
}

// login sets the cookie of a new login and redirects to the same path of
// this server without the token, so it stays out of the history,
// bookmarks and Referer.
func (s *Server) login(w http.ResponseWriter, r *http.Request, secure bool) {
	s.setSession(w, r, secure, "")
	q := r.URL.Query()
	q.Del("token")
	to := url.URL{Path: localPath(r.URL.Path), RawQuery: q.Encode()}
	http.Redirect(w, r, to.String(), http.StatusSeeOther)
}

// handleLogout ends the request's login (its cookie's session and the
// one it replaced, if still in its grace), expires the cookie and says so.
// The page's form posts it with the login's form token, as every POST.
func (s *Server) handleLogout(w http.ResponseWriter, r *http.Request) {
	v := visitOf(r.Context())
	s.sessions.end(v.csrf)
	http.SetCookie(w, &http.Cookie{Name: cookieName(r, v.secure), Value: "", Path: "/", HttpOnly: true,
		Secure: v.secure, SameSite: http.SameSiteStrictMode, MaxAge: -1})
	s.done(w, "log out", "this browser's session has ended; open the login address printed at start to log in again")
}

// visit is what guard found of a request it let through: whether it came
// encrypted, and the form token of its login session ("" without one).
type visit struct {
	secure bool
	csrf   string
}

// visitKey holds a request's visit in its context.
type visitKey struct{}

// visitOf is the visit guard put in ctx (the zero visit outside guard).
func visitOf(ctx context.Context) visit {
	v, _ := ctx.Value(visitKey{}).(visit)
	return v
}

// formTokenOK reports whether got is the form token csrf of the request's
// login, compared in constant time; never without a login.
func formTokenOK(got, csrf string) bool {
	return csrf != "" && subtle.ConstantTimeCompare([]byte(got), []byte(csrf)) == 1
}
