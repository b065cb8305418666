package brokersim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"
)

// Ready is the line `locator sim` prints once when it serves (the
// contract of docs/design.md): its addresses, key pairs and partner
// program.
type Ready struct {
	BaseURL string        `json:"baseURL"`
	WSURL   string        `json:"wsURL"`
	Keys    []ReadyKey    `json:"keys"`
	Partner *ReadyPartner `json:"partner,omitempty"`
}

// ReadyPartner is the scenario's partner program as a user configures it
// (LOCATOR_LOGIN_URL, LOCATOR_CLIENT_ID, LOCATOR_CLIENT_SECRET,
// LOCATOR_REDIRECT_URI); its users are in --print-scenario.
type ReadyPartner struct {
	LoginURL     string `json:"loginURL"`
	DemoClientID string `json:"demoClientId"`
	LiveClientID string `json:"liveClientId"`
	ClientSecret string `json:"clientSecret"`
	RedirectURI  string `json:"redirectUri"`
}

// ReadyKey is a key pair of the scenario and the accounts it reaches.
type ReadyKey struct {
	KeyID    string   `json:"keyId"`
	Secret   string   `json:"secret"`
	Env      string   `json:"env"`
	Accounts []string `json:"accounts"`
}

// ReadyAt is the ready line of a simulator of sc serving at addr
// (host:port).
func ReadyAt(sc Scenario, addr string) Ready {
	ready := Ready{BaseURL: "http://" + addr, WSURL: "ws://" + addr}
	for _, k := range sc.Keys {
		ready.Keys = append(ready.Keys, ReadyKey{KeyID: k.KeyID, Secret: k.Secret, Env: k.Env, Accounts: k.Accounts})
	}
	if p := sc.Partner; p != nil {
		ready.Partner = &ReadyPartner{LoginURL: ready.BaseURL + p.LoginPath, DemoClientID: p.DemoClientID,
			LiveClientID: p.LiveClientID, ClientSecret: p.ClientSecret, RedirectURI: p.RedirectURI}
	}
	return ready
}

// Serve serves sim on ln until ctx ends, after printing its ready line
// (ReadyAt of sc) on ready as one JSON line: `locator sim`'s contract.
// The server shuts down gently, within 5 s.
func Serve(ctx context.Context, sim *Sim, sc Scenario, ln net.Listener, ready io.Writer) error {
	srv := &http.Server{Handler: sim, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if err := json.NewEncoder(ready).Encode(ReadyAt(sc, ln.Addr().String())); err != nil {
		return err
	}
	if f, ok := ready.(*os.File); ok {
		f.Sync()
	}
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
