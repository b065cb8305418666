package dashboard

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
)

// Bound is the dashboard's address, bound before a command sends anything
// (a taken address is found first), and the registry the broker clients
// report to while it is served.
type Bound struct {
	ln     net.Listener
	access Access
	// taken is why the default address could not be bound: served
	// nowhere, which Serve warns of.
	taken   error
	Metrics *Metrics
}

// Bind binds addr for the dashboard under access. explicit says a person
// asked for addr: any failure is an error then; the default address taken
// (another locator on this machine) is not worth stopping a daemon for,
// and the dashboard is then served nowhere (Serve warns). ErrTLSRequired
// and ErrTokenRequired say which access rule addr breaks.
func Bind(addr string, access Access, explicit bool) (*Bound, error) {
	ln, err := Listen(addr, access)
	var bind *net.OpError
	switch {
	case err != nil && (explicit || !errors.As(err, &bind)):
		return nil, err
	case err != nil:
		return &Bound{taken: err}, nil
	}
	return &Bound{ln: ln, access: access, Metrics: NewMetrics()}, nil
}

// Serve serves the dashboard of cfg (its access and metrics Bind's) on the
// bound address and says its login address once on say (with a token made
// for this start, the token itself, as notebook servers do); nil when
// nothing was bound (or b is nil: nothing was asked for). The listener is
// the server's from now on.
func (b *Bound) Serve(cfg Config, log *slog.Logger, say io.Writer) (*Server, error) {
	if b == nil {
		return nil, nil
	}
	if b.taken != nil {
		log.Warn("dashboard not served (pass --listen ADDR, or --listen '' to turn it off)", "err", b.taken)
	}
	if b.ln == nil {
		return nil, nil
	}
	ln := b.ln
	b.ln = nil
	cfg.Access, cfg.Metrics = b.access, b.Metrics
	srv, err := New(cfg)
	if err != nil {
		ln.Close()
		return nil, err
	}
	addr, err := srv.Start(ln)
	if err != nil {
		srv.Close()
		return nil, err
	}
	fmt.Fprintf(say, "dashboard: open %s (health /healthz, metrics /metrics)\n", srv.LoginAddress(addr))
	return srv, nil
}

// Close closes the listener Serve never took (b may be nil).
func (b *Bound) Close() {
	if b != nil && b.ln != nil {
		b.ln.Close()
		b.ln = nil
	}
}
