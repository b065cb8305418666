package vault_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/internal/fileperm"
	"github.com/locatorhq/locator/internal/vault"
)

func testVault(t *testing.T) vault.Vault {
	t.Helper()
	dir := t.TempDir()
	env := map[string]string{"XDG_CONFIG_HOME": filepath.Join(dir, "config")}
	return vault.Open(filepath.Join(dir, "state", "locator.db"), func(k string) string { return env[k] })
}

func TestTokenVaultEncryptsAndGuardsItsKey(t *testing.T) {
	t.Parallel()
	v := testVault(t)
	if _, err := v.Load(); !errors.Is(err, vault.ErrNoLogin) {
		t.Fatalf("empty vault: %v", err)
	}
	now := time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC)
	l := vault.Login{BaseURL: "http://127.0.0.1:1", ClientID: "c", Token: brokerclient.PartnerToken{
		AccessToken: "access-secret-value", RefreshToken: "refresh-secret-value", Issued: now, Expiry: now.Add(time.Hour)}}
	if err := v.Save(l); err != nil {
		t.Fatal(err)
	}
	sealed, err := os.ReadFile(v.TokenFile)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("secret-value")) {
		t.Error("token file holds a token in clear")
	}
	for _, f := range []string{v.TokenFile, v.IdentityFile} {
		if fi, err := os.Stat(f); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v", f, fi, err)
		}
	}
	got, err := v.Load()
	if err != nil || got.Token.AccessToken != l.Token.AccessToken || !got.Token.Expiry.Equal(l.Token.Expiry) {
		t.Fatalf("load: %+v %v", got, err)
	}
	// A key others can read is refused, not used.
	if err := os.Chmod(v.IdentityFile, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Load(); err == nil || !strings.Contains(err.Error(), "readable by others") {
		t.Errorf("world-readable identity: %v", err)
	}
	if had, err := v.Forget(); !had || err != nil {
		t.Errorf("forget: %v %v", had, err)
	}
	if had, _ := v.Forget(); had {
		t.Error("forgot twice")
	}
}

// A token file, or the folder of its key, that another
// user could change is refused, as ssh does.
func TestVaultRefusesFilesOthersCouldChange(t *testing.T) {
	t.Parallel()
	v := testVault(t)
	now := time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC)
	if err := v.Save(vault.Login{BaseURL: "http://127.0.0.1:1", ClientID: "c", Token: brokerclient.PartnerToken{
		AccessToken: "a", RefreshToken: "r", Issued: now, Expiry: now.Add(time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	for _, open := range []string{v.TokenFile, filepath.Dir(v.IdentityFile)} {
		if err := os.Chmod(open, 0o777); err != nil {
			t.Fatal(err)
		}
		if _, err := v.Load(); !errors.Is(err, fileperm.ErrUnsafe) {
			t.Errorf("%s open to all: load = %v, want ErrUnsafe", open, err)
		}
		if err := os.Chmod(open, 0o700); err != nil {
			t.Fatal(err)
		}
	}
}
