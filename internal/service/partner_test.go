package service_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/internal/service"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/internal/wire"
	"github.com/locatorhq/locator/simtest"
)

// Spec "Partner OAuth 2.0 (direct program)", refresh: an owner signed in
// with partner tokens (serve as well as run) renews them at their RenewAt
// while it idles, rotating the pair and saving it, without losing the
// account: a refresh token never lapses under a running owner.
func TestOwnerKeepsPartnerTokensRenewed(t *testing.T) {
	t.Parallel()
	sim := simtest.New(t)
	login := sim.PartnerClient(t, sim.Partner.LiveClientID)
	attempt := brokerclient.NewAttempt()
	auth, err := login.Partner.AuthCodeURL(attempt)
	if err != nil {
		t.Fatal(err)
	}
	cb := sim.PartnerLogin(t, auth, "alice", "alice-pass", "123456")
	tok, err := login.Partner.ExchangeCallback(t.Context(), cb.Query(), attempt)
	if err != nil {
		t.Fatal(err)
	}
	saved := make(chan brokerclient.PartnerToken, 1)
	client := sim.PartnerClient(t, sim.Partner.LiveClientID, brokerclient.WithPartnerToken(*tok, func(next brokerclient.PartnerToken) error {
		select {
		case saved <- next:
		default:
		}
		return nil
	}))
	db := filepath.Join(t.TempDir(), "locator.db")
	st, err := store.Open(t.Context(), db, sim.Clock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	run, err := os.MkdirTemp("", "lr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(run) })
	o, err := service.Own(t.Context(), service.OwnerConfig{
		Engine: engine.Config{Client: client, Store: st, Clock: sim.Clock, Account: "LV100001", Env: brokerclient.EnvLive},
		DB:     db, BaseURL: sim.URL, RuntimeDir: run, Role: wire.RoleDaemon,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(o.Close)
	sim.RunClock(t) // the owner idles: virtual time runs to the renewal
	select {
	case next := <-saved:
		if next.RefreshToken == tok.RefreshToken || !next.Expiry.After(tok.Expiry) {
			t.Errorf("renewed pair %v, want a rotated one expiring after %s", next.Expiry, tok.Expiry)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the owner never renewed its partner tokens")
	}
	var refresh *brokersim.RequestRecord
	for _, r := range sim.Sim.Requests() {
		if r.Path == brokersim.TokenPath && strings.Contains(r.Body, "grant_type=refresh_token") {
			refresh = &r
			break
		}
	}
	// Renewed once due and before the pair expired, with no call waiting
	// on it. (Not exactly at RenewAt: the clock runs as virtual time
	// without waiting on the renewing goroutine, which a loaded machine
	// may wake after the clock has jumped to the idle account's next read.)
	if refresh == nil || refresh.Time.Before(tok.RenewAt()) || !refresh.Time.Before(tok.Expiry) {
		t.Errorf("refresh %+v, want one from RenewAt %s, before the expiry %s", refresh, tok.RenewAt(), tok.Expiry)
	}
	if !o.Held() {
		t.Error("the owner lost the account while renewing")
	}
}
