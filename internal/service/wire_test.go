package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// published is api/openapi.yaml, loaded, with its router.
type published struct {
	doc    *openapi3.T
	router routers.Router
}

// loadPublished loads api/openapi.yaml.
func loadPublished(t *testing.T) *published {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromFile("../../api/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return &published{doc: doc, router: router}
}

// isError reports whether v is the document's Error.
func (p *published) isError(v any) error {
	return p.doc.Components.Schemas["Error"].Value.VisitJSON(v, openapi3.EnableJSONSchema2020())
}

// wireChecked serves a unix socket that passes every request to the
// owner's socket at endpoint, checked as checked checks it. It returns
// the socket's path.
func wireChecked(t *testing.T, endpoint string) string {
	t.Helper()
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.Out.URL.Scheme, r.Out.URL.Host = "http", "owner" },
		Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", endpoint)
		}},
		FlushInterval: -1,
	}
	return serveSocket(t, checked(t, proxy))
}

// serveSocket serves h on a unix socket of its own until t ends, and
// returns its path.
func serveSocket(t *testing.T, h http.Handler) string {
	t.Helper()
	// A short folder: a socket's path is at most 108 bytes.
	dir, err := os.MkdirTemp("", "lw")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", filepath.Join(dir, "checked.sock"))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() {
		srv.Close()
		os.RemoveAll(dir)
	})
	return ln.Addr().String()
}

// checked passes every request to next, checking it and its answer
// against api/openapi.yaml with openapi3filter (a stream's answer line by
// line against its message schema). A request the document refuses must
// be refused (422, an Error of kind input); a path or method the document
// does not hold must be answered with an Error (404, 405); anything else
// the document does not describe fails t, until t ends.
func checked(t *testing.T, next http.Handler) http.Handler {
	t.Helper()
	p := loadPublished(t)
	var mu sync.Mutex
	done := false
	t.Cleanup(func() {
		mu.Lock()
		done = true
		mu.Unlock()
	})
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if !done {
			t.Errorf(format, args...)
		}
	}
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, IncludeResponseStatus: true}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		name := r.Method + " " + r.URL.Path
		// The document's server for the socket: http://owner.
		r.URL.Scheme, r.URL.Host = "http", "owner"
		rec := &recorder{ResponseWriter: w}
		route, params, err := p.router.FindRoute(r)
		if err != nil {
			next.ServeHTTP(rec, r)
			if v, jerr := rec.json(); rec.status != http.StatusNotFound && rec.status != http.StatusMethodNotAllowed || jerr != nil || p.isError(v) != nil {
				fail("%s: a route the document does not hold (%v), answered %d %s; want 404 or 405 with an Error", name, err, rec.status, rec.body.Bytes())
			}
			return
		}
		in := &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route, Options: opts}
		refused := openapi3filter.ValidateRequest(r.Context(), in)
		r.Body = io.NopCloser(bytes.NewReader(body))
		in.Request = r.Clone(r.Context())
		if media := route.Operation.Responses.Status(http.StatusOK).Value.Content.Get("application/x-ndjson"); media != nil {
			rec.line = func(line []byte) {
				var v any
				if err := json.Unmarshal(line, &v); err != nil {
					fail("%s: stream line %q: %v", name, line, err)
				} else if err := media.Schema.Value.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
					fail("%s: stream line %s does not match the document: %v", name, line, err)
				}
			}
		}
		next.ServeHTTP(rec, r)
		if refused != nil {
			if v, err := rec.json(); rec.status != http.StatusUnprocessableEntity || err != nil || p.isError(v) != nil || v.(map[string]any)["kind"] != "input" {
				fail("%s: a request the document refuses (%s: %v) was answered %d %s; want 422, an Error of kind input", name, body, refused, rec.status, rec.body.Bytes())
			}
			return
		}
		if rec.line != nil && rec.status == http.StatusOK {
			return
		}
		if err := openapi3filter.ValidateResponse(r.Context(), &openapi3filter.ResponseValidationInput{
			RequestValidationInput: in, Status: rec.status, Header: rec.Header(), Body: io.NopCloser(bytes.NewReader(rec.body.Bytes())), Options: opts,
		}); err != nil {
			fail("%s: answer %d %s does not match the document: %v", name, rec.status, rec.body.Bytes(), err)
		}
	})
}

// recorder passes an answer through, keeping its status and body (a
// stream's each whole line to line instead, when set).
type recorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
	line   func([]byte)
	buf    []byte
}

func (r *recorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if r.line == nil || r.status != http.StatusOK || !strings.HasPrefix(r.Header().Get("Content-Type"), "application/x-ndjson") {
		r.body.Write(p)
		return r.ResponseWriter.Write(p)
	}
	r.buf = append(r.buf, p...)
	for {
		i := bytes.IndexByte(r.buf, '\n')
		if i < 0 {
			break
		}
		if line := bytes.TrimSpace(r.buf[:i]); len(line) > 0 {
			r.line(line)
		}
		r.buf = r.buf[i+1:]
	}
	return r.ResponseWriter.Write(p)
}

func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// json is the answer's body as JSON.
func (r *recorder) json() (any, error) {
	var v any
	err := json.Unmarshal(r.body.Bytes(), &v)
	return v, err
}
