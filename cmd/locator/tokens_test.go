package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locatorhq/locator/brokerclient"
)

func testVault(t *testing.T) tokenVault {
	t.Helper()
	dir := t.TempDir()
	env := map[string]string{"XDG_CONFIG_HOME": filepath.Join(dir, "config")}
	return newTokenVault(filepath.Join(dir, "state", "locator.db"), func(k string) string { return env[k] })
}

func TestTokenVaultEncryptsAndGuardsItsKey(t *testing.T) {
	t.Parallel()
	v := testVault(t)
	if _, err := v.load(); !errors.Is(err, errNoPartnerLogin) {
		t.Fatalf("empty vault: %v", err)
	}
	now := time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC)
	l := partnerLogin{BaseURL: "http://127.0.0.1:1", ClientID: "c", Token: brokerclient.PartnerToken{
		AccessToken: "access-secret-value", RefreshToken: "refresh-secret-value", Issued: now, Expiry: now.Add(time.Hour)}}
	if err := v.save(l); err != nil {
		t.Fatal(err)
	}
	sealed, err := os.ReadFile(v.tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("secret-value")) {
		t.Error("token file holds a token in clear")
	}
	for _, f := range []string{v.tokenFile, v.identityFile} {
		if fi, err := os.Stat(f); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v", f, fi, err)
		}
	}
	got, err := v.load()
	if err != nil || got.Token.AccessToken != l.Token.AccessToken || !got.Token.Expiry.Equal(l.Token.Expiry) {
		t.Fatalf("load: %+v %v", got, err)
	}
	// A key others can read is refused, not used.
	if err := os.Chmod(v.identityFile, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := v.load(); err == nil || !strings.Contains(err.Error(), "readable by others") {
		t.Errorf("world-readable identity: %v", err)
	}
	if had, err := v.forget(); !had || err != nil {
		t.Errorf("forget: %v %v", had, err)
	}
	if had, _ := v.forget(); had {
		t.Error("forgot twice")
	}
}
