package service

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/internal/config"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/internal/vault"
	"github.com/locatorhq/locator/internal/wire"
)

// UserAgent is the stable, identifying User-Agent the spec asks servers to
// send, on REST calls and on the token endpoint alike; the pid tells which
// of a desk's processes sent a request.
var UserAgent = "locator-cli/1 (pid " + strconv.Itoa(os.Getpid()) + ")"

// Dialer opens accounts from their settings (config.Settings) for one
// process: the one way, for the command and for package connect alike, to
// make an account's broker client, open its database and open it (Open).
// Accounts it opens that share a key pair at one address share one client,
// and so one pacer, as the broker's buckets are per key pair.
type Dialer struct {
	// Getenv reads the environment: the partner vault's and the runtime
	// folder's variables.
	Getenv func(string) string
	// Clock paces the clients and runs the engines (nil: the real one).
	Clock clock.Clock
	// HTTPClient is what the clients send with (nil: their own).
	HTTPClient *http.Client
	// Logger is the clients' and the engines' log (nil: none).
	Logger *slog.Logger
	// Observe, when set, sees every broker call (a process serving
	// /metrics).
	Observe func(route string, status int, d time.Duration)
	// OwnerToken, NoDump and Standby are Config's.
	OwnerToken string
	NoDump     func() error
	Standby    bool
	// Network is how this process's owners take requests from other
	// hosts (serve --owner-listen), nil for none.
	Network *wire.Network
	// Offers, when set, is the hook that tells of the offers of an
	// account waiting on a person (OwnerConfig.Offers), by account.
	Offers func(account string) func(account.Question)
	// StreamURL is the broker's stream address ({ws_base_url}) of the
	// clients it makes (serve's and watch's --ws-url): its owners follow
	// the broker's push streams there, and so do a watch's alone. Empty:
	// the REST address with ws or wss.
	StreamURL string

	clients map[string]*brokerclient.Client // by address and key id
}

// Time is the clock d's clients, stores and engines run on: Clock, or the
// wall clock when it is nil. What a daemon runs beside them (its page, its
// jobs, its answer links) keeps the same time.
func (d *Dialer) Time() clock.Clock {
	if d.Clock == nil {
		return clock.Real{}
	}
	return d.Clock
}

// Client is a new broker client of settings s (with extra options): its
// credentials, stream address, pacing clock, log and observer.
// Partner tokens come from the encrypted token file, and every renewed pair
// goes back to it before the old refresh token is forgotten.
func (d *Dialer) Client(s config.Settings, extra ...brokerclient.Option) (*brokerclient.Client, error) {
	creds, err := d.credentials(s)
	if err != nil {
		return nil, err
	}
	logger := d.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	opts := append(creds,
		brokerclient.WithBaseURL(s.BaseURL),
		brokerclient.WithClock(d.Time()),
		brokerclient.WithLogger(logger),
		brokerclient.WithUserAgent(UserAgent),
	)
	if d.Observe != nil {
		opts = append(opts, brokerclient.WithObserver(d.Observe))
	}
	if d.HTTPClient != nil {
		opts = append(opts, brokerclient.WithHTTPClient(d.HTTPClient))
	}
	if d.StreamURL != "" {
		opts = append(opts, brokerclient.WithStreamURL(d.StreamURL))
	}
	return brokerclient.NewClient(append(opts, extra...)...)
}

// credentials are the client options of s's credentials.
func (d *Dialer) credentials(s config.Settings) ([]brokerclient.Option, error) {
	if s.Auth != config.AuthPartner {
		return []brokerclient.Option{brokerclient.WithCredentials(s.KeyID, s.Secret)}, nil
	}
	v := vault.Open(s.DB, d.Getenv)
	l, err := v.Load()
	if err != nil {
		return nil, err
	}
	if strings.TrimSuffix(l.BaseURL, "/") != strings.TrimSuffix(s.BaseURL, "/") {
		return nil, account.Errorf(account.KindRefused, fmt.Sprintf("the stored partner login is for %s, not %s: run 'locator login --partner' against this broker", l.BaseURL, s.BaseURL))
	}
	cfg := brokerclient.PartnerConfig{ClientID: l.ClientID, ClientSecret: s.ClientSecret, LoginURL: l.LoginURL, RedirectURI: l.RedirectURI}
	save := func(tok brokerclient.PartnerToken) error {
		l.Token = tok
		return v.Save(l)
	}
	return []brokerclient.Option{brokerclient.WithPartner(cfg), brokerclient.WithPartnerToken(l.Token, save)}, nil
}

// Shared is the client of s's key pair at its address, made on first use
// and shared by every account d opens on it.
func (d *Dialer) Shared(s config.Settings) (*brokerclient.Client, error) {
	key := s.BaseURL + " " + s.KeyID
	if c := d.clients[key]; c != nil {
		return c, nil
	}
	c, err := d.Client(s)
	if err != nil {
		return nil, err
	}
	if d.clients == nil {
		d.clients = map[string]*brokerclient.Client{}
	}
	d.clients[key] = c
	return c, nil
}

// OpenStore opens the database at path (a SQLite file, whose folder it
// makes, private) or a Postgres URL.
func OpenStore(ctx context.Context, path string, clk clock.Clock) (*store.Store, error) {
	if !store.IsPostgres(path) {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("database directory: %w", err)
		}
	}
	return store.Open(ctx, path, clk)
}

// Config is how this process opens account s on store st for command (its
// name in the callers the owner records); ask answers the questions of its
// requests (nil: nobody can answer here). resume says the process runs
// after a crash: no run is still sending the orders it finds unanswered,
// however recent. A setting that does not do is refused (KindRefused):
// nothing was sent.
func (d *Dialer) Config(s config.Settings, st *store.Store, command string, ask func(context.Context, account.Question) bool, role wire.Role, resume bool) (Config, error) {
	client, err := d.Shared(s)
	if err != nil {
		return Config{}, account.Wrap(account.KindRefused, err.Error(), err)
	}
	run, err := RuntimeDir(d.Getenv)
	if err != nil {
		return Config{}, account.Wrap(account.KindRefused, err.Error(), err)
	}
	budget, err := s.LocateBudget()
	if err != nil {
		return Config{}, account.Wrap(account.KindRefused, err.Error(), err)
	}
	var offers func(account.Question)
	if d.Offers != nil {
		offers = d.Offers(s.Account)
	}
	host, _ := os.Hostname()
	return Config{
		OwnerToken: d.OwnerToken, Standby: d.Standby, NoDump: d.NoDump,
		OwnerConfig: OwnerConfig{Network: d.Network, Offers: offers,
			Engine: engine.Config{Client: client, Store: st, Clock: d.Time(), Account: s.Account, Env: s.Env, Logger: d.Logger, Budget: budget,
				SettleAllOrders: resume},
			DB: s.DB, BaseURL: s.BaseURL, RuntimeDir: run, Role: role,
		},
		Caller: account.Caller{Name: fmt.Sprintf("%d@%s %s", os.Getpid(), host, command), Env: s.Env, Ask: ask},
	}, nil
}

// Opened is an account this process opened from its settings (Dialer.Open):
// its handle, on the store it was opened on, which only the handle reads
// and writes (its records reach the caller through the account API).
type Opened struct {
	*Handle
	st *store.Store
}

// Close gives the account up (to the next owner, when this process owned
// it) and closes the store.
func (o *Opened) Close() {
	o.Handle.Close()
	o.st.Close()
}

// Open opens account s for command (see Config): this process becomes its
// owner, or a follower of the process that owns it, as Open says.
func (d *Dialer) Open(ctx context.Context, s config.Settings, command string, ask func(context.Context, account.Question) bool, role wire.Role, resume bool) (*Opened, error) {
	st, err := OpenStore(ctx, s.DB, d.Time())
	if err != nil {
		return nil, err
	}
	cfg, err := d.Config(s, st, command, ask, role, resume)
	if err == nil {
		var h *Handle
		if h, err = Open(ctx, cfg); err == nil {
			return &Opened{Handle: h, st: st}, nil
		}
	}
	st.Close()
	return nil, err
}
