package storetest

import (
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Outage stands between a test's processes and its Postgres database: a
// proxy on a unix socket of its own, which the test can cut (every
// connection dropped at once, new ones refused, as when the server is
// stopped immediately) and restore, without touching the cluster that
// other tests share.
type Outage struct {
	dir, target string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]bool
}

// Proxied returns dsn (a database of Postgres(t)) reached through an
// Outage, and the Outage. The cluster must listen on a unix socket, as
// .ci/with-postgres's does.
func Proxied(t testing.TB, dsn string) (string, *Outage) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	port := q.Get("port")
	if port == "" {
		port = "5432"
	}
	if q.Get("host") == "" || !filepath.IsAbs(q.Get("host")) {
		t.Skip("the test cluster does not listen on a unix socket")
	}
	dir, err := os.MkdirTemp("", "pgproxy")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	o := &Outage{dir: dir, target: filepath.Join(q.Get("host"), ".s.PGSQL."+port), conns: map[net.Conn]bool{}}
	o.Restore(t)
	t.Cleanup(func() { o.Cut() })
	q.Set("host", dir)
	q.Set("port", port)
	u.RawQuery = q.Encode()
	return u.String(), o
}

// Cut drops every connection and refuses new ones.
func (o *Outage) Cut() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ln != nil {
		o.ln.Close()
		o.ln = nil
	}
	for c := range o.conns {
		c.Close()
		delete(o.conns, c)
	}
}

// Restore takes connections again.
func (o *Outage) Restore(t testing.TB) {
	t.Helper()
	path := filepath.Join(o.dir, filepath.Base(o.target)) // the same .s.PGSQL.PORT
	os.Remove(path)
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	o.mu.Lock()
	o.ln = ln
	o.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go o.pipe(c)
		}
	}()
}

// pipe carries one connection to the cluster and back.
func (o *Outage) pipe(c net.Conn) {
	s, err := net.Dial("unix", o.target)
	if err != nil {
		c.Close()
		return
	}
	o.mu.Lock()
	if o.ln == nil { // cut meanwhile
		o.mu.Unlock()
		c.Close()
		s.Close()
		return
	}
	o.conns[c], o.conns[s] = true, true
	o.mu.Unlock()
	go func() { io.Copy(s, c); s.Close() }()
	io.Copy(c, s)
	c.Close()
}
