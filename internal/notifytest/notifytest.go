// Package notifytest receives webhook posts for the tests of what
// package notify sends (its own, and answerlink's offers with their
// links): a receiver on an httptest server, and a log sink the notifier's
// workers may write to at once.
package notifytest

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// Post is one request a Receiver got.
type Post struct {
	Path   string
	Header http.Header
	Body   []byte
}

// Receiver is a webhook receiver on an httptest server, closed when the
// test ends: each request it gets goes to Got, answered with the statuses
// given to NewReceiver in turn (the last one repeats; 200 when none).
type Receiver struct {
	URL string
	Got chan Post

	mu       sync.Mutex
	statuses []int
}

// NewReceiver starts a Receiver answering with statuses.
func NewReceiver(t *testing.T, statuses ...int) *Receiver {
	t.Helper()
	r := &Receiver{Got: make(chan Post, 16), statuses: statuses}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		status := http.StatusOK
		if len(r.statuses) > 0 {
			status = r.statuses[0]
			if len(r.statuses) > 1 {
				r.statuses = r.statuses[1:]
			}
		}
		r.mu.Unlock()
		r.Got <- Post{Path: req.URL.Path, Header: req.Header.Clone(), Body: body}
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// Next waits for the next request, with a wall-clock bound as a safety
// net for a broken hand-off (never to wait out a backoff or a window:
// those run on a fake clock).
func (r *Receiver) Next(t *testing.T) Post {
	t.Helper()
	select {
	case p := <-r.Got:
		return p
	case <-time.After(20 * time.Second):
		t.Fatal("no request reached the webhook receiver")
		panic("unreachable")
	}
}

// Received is the requests got and not yet taken, without waiting: what
// a notifier that was closed (so delivered all it would) sent.
func (r *Receiver) Received() []Post {
	var out []Post
	for {
		select {
		case p := <-r.Got:
			out = append(out, p)
		default:
			return out
		}
	}
}

// Log is a log sink safe for concurrent writers.
type Log struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
