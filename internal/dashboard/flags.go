package dashboard

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"
)

// Flags are the command-line flags of a process that serves the page
// (`locator serve`, `locator run`): where /healthz, /metrics and the
// dashboard are served, and who may use them.
type Flags struct {
	addr           string
	noToken        bool
	certFile       string
	keyFile        string
	trustedProxies []string
	fs             *pflag.FlagSet
}

// Register declares the flags on fs.
func (l *Flags) Register(fs *pflag.FlagSet) {
	l.fs = fs
	fs.StringVar(&l.addr, "listen", DefaultAddr, `address of /healthz, /metrics and the dashboard ("" turns them off); beyond loopback it needs --tls-cert/--tls-key or --trusted-proxy`)
	fs.BoolVar(&l.noToken, "dashboard-no-token-on-loopback", false, "serve the dashboard without a token (loopback only, where it answers only the user running it); by default each start makes a random token and prints its login address")
	fs.StringVar(&l.certFile, "tls-cert", "", "serve the dashboard over TLS with this PEM certificate (with --tls-key)")
	fs.StringVar(&l.keyFile, "tls-key", "", "the PEM private key of --tls-cert")
	fs.StringSliceVar(&l.trustedProxies, "trusted-proxy", nil, "address or CIDR of a TLS proxy in front of the dashboard, whose X-Forwarded-Proto is believed (repeatable)")
}

// Bind checks the flags and binds the address (see Bind), token being the
// TokenEnv the process was given; nil when nothing is to be served. Its
// errors name the flag to change, for a person: bad flags or an address
// that cannot be bound, before anything is sent.
func (l *Flags) Bind(token string) (*Bound, error) {
	if l.addr == "" {
		return nil, nil
	}
	proxies, err := ParseProxies(l.trustedProxies)
	if err != nil {
		return nil, fmt.Errorf("--trusted-proxy: %w", err)
	}
	access := Access{Token: token, NoToken: l.noToken, CertFile: l.certFile, KeyFile: l.keyFile, TrustedProxies: proxies}
	b, err := Bind(l.addr, access, l.fs.Changed("listen"))
	switch {
	case errors.Is(err, ErrTLSRequired):
		return nil, fmt.Errorf("--listen %s: %w: pass --tls-cert and --tls-key, or --trusted-proxy", l.addr, err)
	case errors.Is(err, ErrTokenRequired):
		return nil, fmt.Errorf("--listen %s: %w: drop --dashboard-no-token-on-loopback", l.addr, err)
	case err != nil:
		return nil, fmt.Errorf("--listen %s: %w", l.addr, err)
	}
	return b, nil
}
