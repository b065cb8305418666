package dashboard

import (
	"net/http"
	"strings"

	"github.com/locatorhq/locator/internal/answerlink"
)

// withLinks routes the signed answer links (Config.Links) around the token
// check of guarded: a link is its own credential, signed for one offer,
// answered once and only until its deadline, and the phone that opens it
// has no login. The rules every request passes still hold (reach: plain
// HTTP to loopback peers only, so a link crosses a network encrypted, and
// on loopback only this user is answered), and a POST's body is bounded as
// the page's forms are. Everything else goes to guarded.
func (s *Server) withLinks(guarded http.Handler) http.Handler {
	if s.links == nil {
		return guarded
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, answerlink.Prefix) {
			guarded.ServeHTTP(w, r)
			return
		}
		if _, ok := s.reach(w, r); !ok {
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBody)
		s.links.ServeHTTP(w, r)
	})
}
