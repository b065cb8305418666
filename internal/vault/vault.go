// Package vault keeps a user's partner login (the OAuth token pair and the
// program it was issued by) encrypted at rest (docs/design.md rule 9): an
// age file beside the database, whose key, an age identity, lives in the
// user's config folder, readable by the user only. Neither a copy of the
// state folder nor of the database is enough to use the tokens.
package vault

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"filippo.io/age"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/internal/fileperm"
	"github.com/locatorhq/locator/internal/store"
)

const (
	// TokenFileName is the token file's name, beside the database.
	TokenFileName    = "partner-token.age"
	identityFileName = "age-identity.txt"
)

// Login is what the token file holds: the pair and the non-secret
// parts of the program it was issued by, so every later command renews it
// against the same program. The client secret is never stored.
type Login struct {
	BaseURL     string                    `json:"baseURL"`
	ClientID    string                    `json:"clientId"`
	LoginURL    string                    `json:"loginURL"`
	RedirectURI string                    `json:"redirectURI"`
	Token       brokerclient.PartnerToken `json:"token"`
}

// Vault is where one user's partner login is kept.
type Vault struct {
	TokenFile    string // beside a SQLite database, else in the config folder
	IdentityFile string // in the config folder
}

// Open is the vault of the database db, its key in the config folder
// getenv points to. The tokens of a SQLite database are kept beside it;
// those of a Postgres database (a URL, no folder) in the config folder,
// this host's (the tokens never go into the shared database).
func Open(db string, getenv func(string) string) Vault {
	dir := filepath.Dir(db)
	if store.IsPostgres(db) {
		dir = configDir(getenv)
	}
	return Vault{
		TokenFile:    filepath.Join(dir, TokenFileName),
		IdentityFile: filepath.Join(configDir(getenv), identityFileName),
	}
}

// configDir is the user's config directory for locator, after the XDG
// convention that config.DefaultDBPath follows for state.
func configDir(getenv func(string) string) string {
	if d := getenv("XDG_CONFIG_HOME"); d != "" {
		return filepath.Join(d, "locator")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "locator")
	}
	return "."
}

// identity reads the age identity, creating it (mode 0600) on first use.
// An identity others can read, or could have written (fileperm.Check), is
// refused rather than used.
func (v Vault) identity(create bool) (*age.X25519Identity, error) {
	fi, err := os.Stat(v.IdentityFile)
	switch {
	case errors.Is(err, fs.ErrNotExist) && create:
		id, err := age.GenerateX25519Identity()
		if err != nil {
			return nil, err
		}
		if err := os.MkdirAll(filepath.Dir(v.IdentityFile), 0o700); err != nil {
			return nil, fmt.Errorf("config directory: %w", err)
		}
		f, err := os.OpenFile(v.IdentityFile, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, fmt.Errorf("age identity: %w", err)
		}
		_, werr := fmt.Fprintln(f, id.String())
		if err := errors.Join(werr, f.Close()); err != nil {
			return nil, fmt.Errorf("age identity: %w", err)
		}
		return id, nil
	case err != nil:
		return nil, fmt.Errorf("age identity %s: %w", v.IdentityFile, err)
	case fi.Mode().Perm()&0o077 != 0:
		return nil, fmt.Errorf("age identity %s is readable by others (mode %o): run chmod 600 on it", v.IdentityFile, fi.Mode().Perm())
	}
	if err := fileperm.Check(v.IdentityFile); err != nil {
		return nil, fmt.Errorf("age identity %w", err)
	}
	b, err := os.ReadFile(v.IdentityFile)
	if err != nil {
		return nil, fmt.Errorf("age identity: %w", err)
	}
	id, err := age.ParseX25519Identity(strings.TrimSpace(string(b)))
	if err != nil {
		return nil, fmt.Errorf("age identity %s: %w", v.IdentityFile, err)
	}
	return id, nil
}

// Save encrypts the login to the token file, replacing it atomically.
func (v Vault) Save(l Login) error {
	id, err := v.identity(true)
	if err != nil {
		return err
	}
	plain, err := json.Marshal(l)
	if err != nil {
		return err
	}
	var sealed bytes.Buffer
	w, err := age.Encrypt(&sealed, id.Recipient())
	if err != nil {
		return err
	}
	if _, err := w.Write(plain); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(v.TokenFile), 0o700); err != nil {
		return fmt.Errorf("token directory: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(v.TokenFile), TokenFileName+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(sealed.Bytes())
	if err := errors.Join(werr, tmp.Chmod(0o600), tmp.Close()); err != nil {
		return fmt.Errorf("token file: %w", err)
	}
	return os.Rename(tmp.Name(), v.TokenFile)
}

// ErrNoLogin: nothing is stored; the user has not logged in.
var ErrNoLogin = errors.New("no partner login stored: run 'locator login --partner'")

// Load decrypts the stored login.
func (v Vault) Load() (Login, error) {
	var l Login
	f, err := os.Open(v.TokenFile)
	if errors.Is(err, fs.ErrNotExist) {
		return l, ErrNoLogin
	}
	if err != nil {
		return l, err
	}
	defer f.Close()
	if err := fileperm.Check(v.TokenFile); err != nil {
		return l, fmt.Errorf("token file %w", err)
	}
	id, err := v.identity(false)
	if err != nil {
		return l, err
	}
	r, err := age.Decrypt(f, id)
	if err != nil {
		return l, fmt.Errorf("token file %s: %w", v.TokenFile, err)
	}
	plain, err := io.ReadAll(r)
	if err != nil {
		return l, fmt.Errorf("token file %s: %w", v.TokenFile, err)
	}
	if err := json.Unmarshal(plain, &l); err != nil {
		return l, fmt.Errorf("token file %s: %w", v.TokenFile, err)
	}
	return l, nil
}

// Forget removes the stored login; it reports whether there was one.
func (v Vault) Forget() (bool, error) {
	err := os.Remove(v.TokenFile)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}
