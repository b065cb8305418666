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
	"github.com/getkin/kin-openapi/routers/legacy"
)

// checkedRoute carries a request's route in the published document from
// the proxy's handler to its check of the answer.
type checkedRoute struct{}

// wireChecked serves a unix socket that passes every request to the
// owner's socket at endpoint, checking each request and each answer
// against api/openapi.yaml as it passes (a stream's answer line by line
// against its message schema); a request or answer the document does not
// describe fails t. It returns the socket's path.
func wireChecked(t *testing.T, endpoint string) string {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromFile("../../api/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "lw")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", filepath.Join(dir, "checked.sock"))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	done := false
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if !done {
			t.Errorf(format, args...)
		}
	}
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, IncludeResponseStatus: true}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.Out.URL.Scheme, r.Out.URL.Host = "http", "owner" },
		Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", endpoint)
		}},
		FlushInterval: -1,
		ModifyResponse: func(resp *http.Response) error {
			in, _ := resp.Request.Context().Value(checkedRoute{}).(*openapi3filter.RequestValidationInput)
			if in == nil {
				return nil
			}
			name := in.Request.Method + " " + in.Request.URL.Path
			if resp.StatusCode == http.StatusOK && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/x-ndjson") {
				media := in.Route.Operation.Responses.Status(http.StatusOK).Value.Content.Get("application/x-ndjson")
				if media == nil {
					fail("%s: a stream the document does not describe", name)
					return nil
				}
				resp.Body = &lineChecked{ReadCloser: resp.Body, check: func(line []byte) {
					var v any
					if err := json.Unmarshal(line, &v); err != nil {
						fail("%s: stream line %q: %v", name, line, err)
					} else if err := media.Schema.Value.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
						fail("%s: stream line %s does not match the document: %v", name, line, err)
					}
				}}
				return nil
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			resp.Body = io.NopCloser(bytes.NewReader(body))
			if err != nil {
				return err
			}
			if err := openapi3filter.ValidateResponse(resp.Request.Context(), &openapi3filter.ResponseValidationInput{
				RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header, Body: io.NopCloser(bytes.NewReader(body)), Options: opts,
			}); err != nil {
				fail("%s: answer %d %s does not match the document: %v", name, resp.StatusCode, body, err)
			}
			return nil
		},
	}
	check := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		route, params, err := router.FindRoute(r)
		if err != nil {
			fail("%s %s: a route the document does not describe: %v", r.Method, r.URL.Path, err)
			proxy.ServeHTTP(w, r)
			return
		}
		in := &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route, Options: opts}
		if err := openapi3filter.ValidateRequest(r.Context(), in); err != nil {
			fail("%s %s: request %s does not match the document: %v", r.Method, r.URL.Path, body, err)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		checked := &openapi3filter.RequestValidationInput{Request: r.Clone(r.Context()), PathParams: params, Route: route, Options: opts}
		proxy.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), checkedRoute{}, checked)))
	})
	srv := &http.Server{Handler: check}
	go srv.Serve(ln)
	t.Cleanup(func() {
		mu.Lock()
		done = true
		mu.Unlock()
		srv.Close()
		os.RemoveAll(dir)
	})
	return ln.Addr().String()
}

// lineChecked passes a stream through, checking each whole line.
type lineChecked struct {
	io.ReadCloser
	check func([]byte)
	buf   []byte
}

func (l *lineChecked) Read(p []byte) (int, error) {
	n, err := l.ReadCloser.Read(p)
	l.buf = append(l.buf, p[:n]...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		if line := bytes.TrimSpace(l.buf[:i]); len(line) > 0 {
			l.check(line)
		}
		l.buf = l.buf[i+1:]
	}
	return n, err
}
