package main

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
	"github.com/locatorhq/locator/fileperm"
)

// The partner tokens are kept encrypted at rest (docs/design.md rule 9): an age
// file beside the database, whose key, an age identity, lives in the user's
// config directory, readable by the user only. Neither a copy of the state
// directory nor of the database is enough to use the tokens.

const (
	tokenFileName    = "partner-token.age"
	identityFileName = "age-identity.txt"
)

// partnerLogin is what the token file holds: the pair and the non-secret
// parts of the program it was issued by, so every later command renews it
// against the same program. The client secret is never stored.
type partnerLogin struct {
	BaseURL     string                    `json:"baseURL"`
	ClientID    string                    `json:"clientId"`
	LoginURL    string                    `json:"loginURL"`
	RedirectURI string                    `json:"redirectURI"`
	Token       brokerclient.PartnerToken `json:"token"`
}

// tokenVault is where one user's partner login is kept.
type tokenVault struct {
	tokenFile    string // beside the database
	identityFile string // in the config directory
}

func newTokenVault(db string, getenv func(string) string) tokenVault {
	return tokenVault{
		tokenFile:    filepath.Join(filepath.Dir(db), tokenFileName),
		identityFile: filepath.Join(configDir(getenv), identityFileName),
	}
}

// configDir is the user's config directory for locator, after the XDG
// convention that defaultDBPath follows for state.
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
func (v tokenVault) identity(create bool) (*age.X25519Identity, error) {
	fi, err := os.Stat(v.identityFile)
	switch {
	case errors.Is(err, fs.ErrNotExist) && create:
		id, err := age.GenerateX25519Identity()
		if err != nil {
			return nil, err
		}
		if err := os.MkdirAll(filepath.Dir(v.identityFile), 0o700); err != nil {
			return nil, fmt.Errorf("config directory: %w", err)
		}
		f, err := os.OpenFile(v.identityFile, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, fmt.Errorf("age identity: %w", err)
		}
		_, werr := fmt.Fprintln(f, id.String())
		if err := errors.Join(werr, f.Close()); err != nil {
			return nil, fmt.Errorf("age identity: %w", err)
		}
		return id, nil
	case err != nil:
		return nil, fmt.Errorf("age identity %s: %w", v.identityFile, err)
	case fi.Mode().Perm()&0o077 != 0:
		return nil, fmt.Errorf("age identity %s is readable by others (mode %o): run chmod 600 on it", v.identityFile, fi.Mode().Perm())
	}
	if err := fileperm.Check(v.identityFile); err != nil {
		return nil, fmt.Errorf("age identity %w", err)
	}
	b, err := os.ReadFile(v.identityFile)
	if err != nil {
		return nil, fmt.Errorf("age identity: %w", err)
	}
	id, err := age.ParseX25519Identity(strings.TrimSpace(string(b)))
	if err != nil {
		return nil, fmt.Errorf("age identity %s: %w", v.identityFile, err)
	}
	return id, nil
}

// save encrypts the login to the token file, replacing it atomically.
func (v tokenVault) save(l partnerLogin) error {
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
	if err := os.MkdirAll(filepath.Dir(v.tokenFile), 0o700); err != nil {
		return fmt.Errorf("token directory: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(v.tokenFile), tokenFileName+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(sealed.Bytes())
	if err := errors.Join(werr, tmp.Chmod(0o600), tmp.Close()); err != nil {
		return fmt.Errorf("token file: %w", err)
	}
	return os.Rename(tmp.Name(), v.tokenFile)
}

// errNoPartnerLogin: nothing is stored; the user has not logged in.
var errNoPartnerLogin = errors.New("no partner login stored: run 'locator login --partner'")

// load decrypts the stored login.
func (v tokenVault) load() (partnerLogin, error) {
	var l partnerLogin
	f, err := os.Open(v.tokenFile)
	if errors.Is(err, fs.ErrNotExist) {
		return l, errNoPartnerLogin
	}
	if err != nil {
		return l, err
	}
	defer f.Close()
	if err := fileperm.Check(v.tokenFile); err != nil {
		return l, fmt.Errorf("token file %w", err)
	}
	id, err := v.identity(false)
	if err != nil {
		return l, err
	}
	r, err := age.Decrypt(f, id)
	if err != nil {
		return l, fmt.Errorf("token file %s: %w", v.tokenFile, err)
	}
	plain, err := io.ReadAll(r)
	if err != nil {
		return l, fmt.Errorf("token file %s: %w", v.tokenFile, err)
	}
	if err := json.Unmarshal(plain, &l); err != nil {
		return l, fmt.Errorf("token file %s: %w", v.tokenFile, err)
	}
	return l, nil
}

// forget removes the stored login; it reports whether there was one.
func (v tokenVault) forget() (bool, error) {
	err := os.Remove(v.tokenFile)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}
