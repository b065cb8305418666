package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/internal/vault"
	"github.com/locatorhq/locator/simtest"
)

// partnerCLI is a simulator whose partner program redirects to a free
// loopback port, and the environment of a user of the CLI on it.
type partnerCLI struct {
	sim *simtest.Bundle
	env map[string]string
	dir string // holds the database and the token file
}

func setupPartnerCLI(t *testing.T) *partnerCLI {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	redirect := "http://" + ln.Addr().String() + "/callback"
	ln.Close()
	sim := simtest.New(t, simtest.WithScenario(func(sc *brokersim.Scenario) {
		sc.Partner.RedirectURI = redirect
		sc.RateLimits = false
	}))
	dir := t.TempDir()
	return &partnerCLI{sim: sim, dir: dir, env: map[string]string{
		"LOCATOR_BASE_URL": sim.URL, "LOCATOR_DB": filepath.Join(dir, "locator.db"),
		"LOCATOR_CLIENT_ID": sim.Partner.LiveClientID, "LOCATOR_CLIENT_SECRET": sim.Partner.ClientSecret,
		"LOCATOR_LOGIN_URL": sim.URL + sim.Partner.LoginPath, "LOCATOR_REDIRECT_URI": redirect,
		"XDG_CONFIG_HOME": filepath.Join(dir, "config"), "HOME": dir,
	}}
}

func (b *partnerCLI) getenv(env map[string]string) func(string) string {
	return func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return b.env[k]
	}
}

// run runs a command to its end.
func (b *partnerCLI) run(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	code := NewMain(&stdout, &stderr, b.getenv(env)).Run(ctx, args)
	return code, stdout.String(), stderr.String()
}

// runningLogin is a 'locator login --partner --json' waiting for its
// callback.
type runningLogin struct {
	authURL string
	cancel  context.CancelFunc
	done    chan int
	stdout  bytes.Buffer // complete once done and read are closed
	stderr  bytes.Buffer
	read    chan struct{}
}

// startLogin runs the login until it prints the authorize address.
func (b *partnerCLI) startLogin(t *testing.T, env map[string]string, args ...string) *runningLogin {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	pr, pw := io.Pipe()
	r := &runningLogin{cancel: cancel, done: make(chan int, 1), read: make(chan struct{})}
	first := make(chan string, 1)
	go func() {
		defer close(r.read)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			r.stdout.WriteString(line + "\n")
			var ev struct{ AuthorizeURL string }
			if json.Unmarshal([]byte(line), &ev) == nil && ev.AuthorizeURL != "" {
				first <- ev.AuthorizeURL
			}
		}
	}()
	m := NewMain(pw, &r.stderr, b.getenv(env))
	go func() {
		code := m.Run(ctx, append([]string{"login", "--partner", "--json"}, args...))
		pw.Close()
		r.done <- code
	}()
	select {
	case r.authURL = <-first:
	case code := <-r.done:
		<-r.read
		t.Fatalf("login ended with %d before printing the authorize address\nstdout %s\nstderr %s", code, r.stdout.String(), r.stderr.String())
	case <-time.After(20 * time.Second):
		t.Fatal("no authorize address")
	}
	t.Cleanup(cancel)
	return r
}

// wait returns the login's exit code and output.
func (r *runningLogin) wait(t *testing.T) (int, string, string) {
	t.Helper()
	select {
	case code := <-r.done:
		<-r.read
		return code, r.stdout.String(), r.stderr.String()
	case <-time.After(30 * time.Second):
		t.Fatal("login did not end")
		return 0, "", ""
	}
}

// signInOverHTTP plays the browser: the login form, then the redirect to
// the CLI's callback.
func (b *partnerCLI) signInOverHTTP(t *testing.T, authURL, user, password, code string) {
	t.Helper()
	cb := b.sim.PartnerLogin(t, authURL, user, password, code)
	resp, err := http.Get(cb.String())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

// checkPartnerFlow runs a login whose sign-in is done by signIn, then checks
// what the issue asks: the tokens are stored encrypted, and later commands
// run on them over Bearer; logout forgets them.
func (b *partnerCLI) checkPartnerFlow(t *testing.T, signIn func(authURL string)) {
	t.Helper()
	login := b.startLogin(t, nil)
	signIn(login.authURL)
	code, out, errOut := login.wait(t)
	if code != 0 || !strings.Contains(out, `"account":"LV100001"`) || !strings.Contains(out, `"account":"LV100002"`) {
		t.Fatalf("login: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}

	// Stored encrypted, the key outside the database's directory, 0600.
	v := vault.Open(b.env["LOCATOR_DB"], b.getenv(nil))
	tokenFile := v.TokenFile
	sealed, err := os.ReadFile(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(sealed, []byte("age-encryption.org/v1")) {
		t.Errorf("token file is not an age file: %.40q", sealed)
	}
	idFile := v.IdentityFile
	if fi, err := os.Stat(idFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("identity file %s: %v %v", idFile, fi, err)
	}
	stored, err := v.Load()
	if err != nil {
		t.Fatal(err)
	}
	tok := stored.Token
	for _, secret := range []string{tok.AccessToken, tok.RefreshToken, jwtBody(tok.AccessToken), jwtBody(tok.RefreshToken)} {
		if secret == "" {
			t.Fatal("empty token stored")
		}
		if bytes.Contains(sealed, []byte(secret)) || strings.Contains(out+errOut, secret) {
			t.Error("a token is stored or printed in clear")
		}
	}

	// Every command works on the partner token, over Bearer.
	before := len(b.sim.Sim.Requests())
	code, out, errOut = b.run(t, map[string]string{"LOCATOR_AUTH": "partner"}, "accounts", "--json")
	if code != 0 || !strings.Contains(out, `"account":"LV100001"`) {
		t.Fatalf("accounts: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	code, out, errOut = b.run(t, nil, "pnl", "--auth", "partner", "--account", "LV100001", "--json")
	if code != 0 || !strings.Contains(out, "accountValue") {
		t.Fatalf("pnl: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	var bearer int
	for _, r := range b.simRequests(t)[before:] {
		if r.Auth != "bearer" || r.KeyID != "" {
			t.Errorf("request without the Bearer token: %+v", r)
		}
		bearer++
	}
	if bearer < 2 {
		t.Errorf("%d Bearer requests", bearer)
	}
	if dbHas(t, b.dir, tok.AccessToken) || dbHas(t, b.dir, tok.RefreshToken) {
		t.Error("a token is in the state directory in clear")
	}

	code, out, _ = b.run(t, nil, "logout")
	if code != 0 || !strings.Contains(out, "Forgot") {
		t.Fatalf("logout: exit %d %s", code, out)
	}
	if _, err := os.Stat(tokenFile); !os.IsNotExist(err) {
		t.Errorf("token file after logout: %v", err)
	}
	if code, _, errOut := b.run(t, map[string]string{"LOCATOR_AUTH": "partner"}, "accounts"); code != 2 || !strings.Contains(errOut, "login --partner") {
		t.Errorf("accounts after logout: exit %d %s", code, errOut)
	}
}

// simRequests reads the simulator's request log.
func (b *partnerCLI) simRequests(t *testing.T) []brokersim.RequestRecord {
	t.Helper()
	return simRequestLog(t, b.sim.URL)
}

// jwtBody is a token's claims segment: finding it would betray a token
// stored in clear even if its other segments were split or re-encoded.
func jwtBody(tok string) string {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return tok
	}
	return parts[1]
}

// dbHas tells whether any file in dir (database, WAL, token file) holds s.
func dbHas(t *testing.T, dir, s string) bool {
	t.Helper()
	found := false
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err == nil && bytes.Contains(b, []byte(s)) {
			found = true
		}
		return nil
	})
	return found
}

func TestLoginPartnerOverHTTP(t *testing.T) {
	t.Parallel()
	b := setupPartnerCLI(t)
	b.checkPartnerFlow(t, func(authURL string) { b.signInOverHTTP(t, authURL, "alice", "alice-pass", "123456") })
}

// A callback whose state is not this login's (forged, here
// carrying the real code) is answered 400 and ignored: nothing is
// exchanged, and the login goes on waiting for its own callback, which then
// signs in with the code the forged one carried unspent. Before, the forged
// callback ended the login (exit 2).
func TestLoginPartnerIgnoresForgedCallback(t *testing.T) {
	t.Parallel()
	b := setupPartnerCLI(t)
	login := b.startLogin(t, nil)
	cb := b.sim.PartnerLogin(t, login.authURL, "alice", "alice-pass", "123456")
	forged := *cb
	q := forged.Query()
	q.Set("state", "forged")
	forged.RawQuery = q.Encode()
	resp, err := http.Get(forged.String())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("forged callback answered %d, want 400", resp.StatusCode)
	}
	for _, r := range b.sim.Sim.Requests() {
		if r.Path == brokersim.TokenPath {
			t.Errorf("exchanged on the forged callback: %+v", r)
		}
	}
	if _, err := os.Stat(filepath.Join(b.dir, vault.TokenFileName)); !os.IsNotExist(err) {
		t.Errorf("token file after the forged callback: %v", err)
	}
	resp, err = http.Get(cb.String())
	if err != nil {
		t.Fatalf("the real callback after the forged one: %v (the login stopped listening)", err)
	}
	resp.Body.Close()
	if code, out, errOut := login.wait(t); code != 0 || !strings.Contains(out, `"account":"LV100001"`) {
		t.Errorf("login after a forged then the real callback: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
}

// The provisioning case: the sign-in works but the list is empty, and the
// CLI says what that means.
func TestLoginPartnerExplainsEmptyList(t *testing.T) {
	t.Parallel()
	b := setupPartnerCLI(t)
	login := b.startLogin(t, nil)
	b.signInOverHTTP(t, login.authURL, "nina", "nina-pass", "111111")
	code, out, errOut := login.wait(t)
	if code != 0 || !strings.Contains(out, "provisioning") {
		t.Errorf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
}

// Bad input exits 2 and sends nothing.
func TestLoginBadInput(t *testing.T) {
	t.Parallel()
	b := setupPartnerCLI(t)
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"without --partner", nil, []string{"login"}, "--partner"},
		{"no client secret", map[string]string{"LOCATOR_CLIENT_SECRET": ""}, []string{"login", "--partner"}, "LOCATOR_CLIENT_SECRET"},
		{"no client id", map[string]string{"LOCATOR_CLIENT_ID": ""}, []string{"login", "--partner"}, "client id"},
		{"redirect off this machine", map[string]string{"LOCATOR_REDIRECT_URI": "http://192.0.2.1:8765/callback"}, []string{"login", "--partner"}, "redirect address"},
		{"unknown auth", nil, []string{"accounts", "--auth", "oauth"}, "want keys or partner"},
		{"partner auth before any login", map[string]string{"LOCATOR_AUTH": "partner"}, []string{"accounts"}, "login --partner"},
		{"partner auth without client secret", map[string]string{"LOCATOR_AUTH": "partner", "LOCATOR_CLIENT_SECRET": ""}, []string{"accounts"}, "LOCATOR_CLIENT_SECRET"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := b.run(t, tc.env, tc.args...)
			if code != 2 || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, want 2 with %q: %s", code, tc.want, errOut)
			}
		})
	}
	if r := b.sim.Sim.Requests(); len(r) != 0 {
		t.Errorf("sent %+v", r)
	}
}
