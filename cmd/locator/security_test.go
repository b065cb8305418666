package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/wire"
)

// nonLoopbackIP is an address of this machine beyond loopback, or the test
// is skipped.
func nonLoopbackIP(t *testing.T) net.IP {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Skip(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP
		}
	}
	t.Skip("no address beyond loopback")
	return nil
}

// An http:// broker address beyond loopback is refused with exit
// 2 and nothing sent: here the simulator listens on every interface and is
// named by this machine's own network address, so a request would reach it.
func TestPlainBrokerAddressBeyondLoopbackRefused(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	ip := nonLoopbackIP(t)
	ln, err := net.Listen("tcp", net.JoinHostPort(ip.String(), "0"))
	if err != nil {
		t.Skip(err)
	}
	var got atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got.Add(1) }))
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	for _, args := range [][]string{{"locate", "HTBX", "100", "--yes"}, {"inventory"}, {"serve", "--listen", ""}, {"config"}} {
		code, _, errOut := b.MustRunMain(t, map[string]string{"LOCATOR_BASE_URL": srv.URL}, args...)
		if code != console.ExitUsage || !strings.Contains(errOut, "http:// beyond this machine's loopback") || !strings.Contains(errOut, "env LOCATOR_BASE_URL") {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming the rule and where the address came from", args, code, errOut)
		}
	}
	// A webhook too: an event names accounts and workflows.
	hooked := writeFile(t, "c.json", strings.Replace(daemonConfig, "\n  ]\n}", "\n  ],\n  \"notify\": {\"webhooks\": [{\"urlEnv\": \"PLAIN_HOOK\", \"format\": \"json\"}]}\n}", 1))
	code, _, errOut := b.MustRunMain(t, map[string]string{"PLAIN_HOOK": srv.URL + "/hook"}, "run", "--config", hooked, "--once", "watch", "--listen", "")
	if code != console.ExitUsage || !strings.Contains(errOut, "webhook PLAIN_HOOK: webhook address refused: http:// beyond this machine's loopback") || strings.Contains(errOut, srv.URL) {
		t.Errorf("plain-http webhook: exit %d, stderr %q; want 2 naming the variable, not the address", code, errOut)
	}
	if len(b.sim.Requests()) != 0 {
		t.Errorf("the broker was called: %v", b.sim.Requests())
	}
	if n := got.Load(); n != 0 {
		t.Errorf("%d requests reached the plain-http address", n)
	}
}

// A base address carrying a password or a query is refused, and never
// printed, by the commands and by 'locator config'.
func TestBaseURLWithCredentialsRefused(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	host := strings.TrimPrefix(b.env["LOCATOR_BASE_URL"], "http://")
	for _, raw := range []string{"http://me:hunter2@" + host, "http://" + host + "/?key=hunter2"} {
		for _, args := range [][]string{{"locate", "HTBX", "100", "--yes"}, {"config"}} {
			code, out, errOut := b.MustRunMain(t, map[string]string{"LOCATOR_BASE_URL": raw}, args...)
			if code != console.ExitUsage || strings.Contains(out+errOut, "hunter2") {
				t.Errorf("%v with a secret in the address: exit %d, stdout %q, stderr %q; want 2, the address unprinted", args, code, out, errOut)
			}
		}
	}
	if n := len(b.sim.Requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

// A broker address that redirects to another host (the
// simulator here) receives the key pair once; the target never hears of
// it, and the command says where the redirect pointed.
func TestRedirectingBrokerAddress(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	var keys atomic.Int64
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("TZ-API-SECRET-KEY") != "" {
			keys.Add(1)
		}
		http.Redirect(w, r, b.env["LOCATOR_BASE_URL"]+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	}))
	t.Cleanup(front.Close)
	code, _, errOut := b.MustRunMain(t, map[string]string{"LOCATOR_BASE_URL": front.URL}, "locate", "HTBX", "100", "--yes")
	simHost := strings.TrimPrefix(b.env["LOCATOR_BASE_URL"], "http://")
	if code == console.ExitOK || !strings.Contains(errOut, "a redirect to "+simHost) {
		t.Errorf("exit %d, stderr %q; want a failure naming the redirect's host", code, errOut)
	}
	if n := keys.Load(); n != 1 {
		t.Errorf("the redirecting address received the key pair %d times, want 1", n)
	}
	if n := len(b.sim.Requests()); n != 0 {
		t.Errorf("the redirect target received %d requests", n)
	}
}

// The settings, jobs, accounts and token files, and the folders
// above them, are refused when another user could have written them (as
// ssh refuses its config): exit 2, naming the file and the fix, nothing
// sent.
func TestFilesOthersCanWriteRefused(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	groupWritable := func(name, body string) string {
		path := writeFile(t, name, body)
		if err := os.Chmod(path, 0o664); err != nil {
			t.Fatal(err)
		}
		return path
	}
	inOpenFolder := func(name, body string) (string, string) {
		path := writeFile(t, name, body)
		if err := os.Chmod(filepath.Dir(path), 0o777); err != nil {
			t.Fatal(err)
		}
		return path, filepath.Dir(path)
	}
	settings := groupWritable("config.json", `{"account": "LV100001"}`)
	jobsFile, jobsDir := inOpenFolder("jobs.json", `{"jobs": []}`)
	accounts := groupWritable("serve.json", `{"accounts": [{"account": "LV100001"}]}`)
	for _, tc := range []struct {
		args      []string
		env       map[string]string
		file, fix string
	}{
		{[]string{"locate", "HTBX", "100", "--yes"}, map[string]string{"LOCATOR_CONFIG": settings}, settings, "chmod go-w " + settings},
		{[]string{"run", "--config", jobsFile, "--listen", ""}, nil, jobsFile, "chmod go-w " + jobsDir},
		{[]string{"serve", "--config", accounts, "--listen", ""}, nil, accounts, "chmod go-w " + accounts},
	} {
		code, _, errOut := b.MustRunMain(t, tc.env, tc.args...)
		if code != console.ExitUsage || !strings.Contains(errOut, tc.file+" is not trusted") || !strings.Contains(errOut, tc.fix) {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming %s and %q", tc.args, code, errOut, tc.file, tc.fix)
		}
	}
	if n := len(b.sim.Requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}

}

// Serve makes a random dashboard token per start and prints the
// login address once; without the token the page is 401, the login
// address opens it.
func TestServePrintsDashboardLoginAddress(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	m := NewMain(io.Discard, pw, func(k string) string { return b.env[k] })
	done := make(chan int, 1)
	go func() {
		done <- m.Run(ctx, []string{"serve", "--listen", "127.0.0.1:0"})
		pw.Close()
	}()
	var login string
	lines := bufio.NewScanner(pr)
	for login == "" && lines.Scan() {
		if rest, ok := strings.CutPrefix(lines.Text(), "dashboard: open "); ok {
			login, _, _ = strings.Cut(rest, " ")
		}
	}
	go io.Copy(io.Discard, pr)
	base, token, ok := strings.Cut(login, "/?token=")
	if !ok || len(token) < 20 {
		t.Fatalf("no login address with a token printed: %q", login)
	}
	if resp, err := http.Get(base + "/"); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the page without the token: %v %v, want 401", resp, err)
	}
	jar, _ := cookiejar.New(nil)
	if resp, err := (&http.Client{Jar: jar}).Get(login); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("the login address: %v %v, want the page", resp, err)
	}
	cancel()
	<-done
}

// The dashboard's access flags are checked before anything is sent:
// without a token beyond loopback, beyond loopback without TLS, half a
// certificate, a proxy that is not an address.
func TestDashboardAccessFlagsRefused(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--listen", "0.0.0.0:0", "--dashboard-no-token-on-loopback"}, "without a token is allowed on loopback only"},
		{[]string{"--listen", "0.0.0.0:0"}, "needs TLS (a certificate and key) or a TLS proxy in front (a trusted proxy): pass --tls-cert and --tls-key, or --trusted-proxy"},
		{[]string{"--tls-cert", "cert.pem"}, "both a certificate and its key"},
		{[]string{"--trusted-proxy", "proxy.example"}, "want an IP address or a CIDR prefix"},
	} {
		code, _, errOut := b.MustRunMain(t, nil, append([]string{"serve"}, tc.args...)...)
		if code != console.ExitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 with %q", tc.args, code, errOut, tc.want)
		}
	}
	if n := len(b.sim.Requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

// The key pair (and the partner client secret) leave the
// process's environment once read, and serve and run make the process
// non-dumpable before anything else, as do watch and a command that becomes
// the account's owner, and mcp; a one-shot command that owns nothing is
// left as it is.
func TestSecretsForgottenDaemonsNotDumpable(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	run := func(args ...string) (forgot []string, noDump int) {
		m := NewMain(io.Discard, io.Discard, func(k string) string { return b.env[k] })
		m.Stdin = strings.NewReader("")
		m.Forget = func(name string) { forgot = append(forgot, name) }
		m.NoDump = func() error { noDump++; return nil }
		ctx := t.Context()
		if args[0] == "watch" { // until interrupted: interrupted at once
			c, cancel := context.WithCancel(ctx)
			cancel()
			ctx = c
		}
		m.Run(ctx, args)
		return forgot, noDump
	}
	forgot, noDump := run("inventory")
	for _, v := range []string{"LOCATOR_KEY_ID", "LOCATOR_SECRET", "LOCATOR_CLIENT_SECRET"} {
		if !slices.Contains(forgot, v) {
			t.Errorf("inventory: %s not forgotten (forgot %v)", v, forgot)
		}
	}
	if noDump != 0 {
		t.Error("a one-shot command made itself non-dumpable")
	}
	// Watch runs until interrupted, and a command that becomes
	// the account's owner (no other process owns it) may run as long as
	// its workflows take.
	for _, args := range [][]string{{"serve", "--trusted-proxy", "x"}, {"run", "--config", "/nonexistent.json"},
		{"watch", "orders"}, {"locate", "HTBX", "100", "--max-price", "0.02"}} {
		if _, noDump := run(args...); noDump != 1 {
			t.Errorf("%v: NoDump called %d times, want 1", args, noDump)
		}
	}
}

// An agent's server runs long, its environment holding the keys, whether
// it owns the account or follows the process that does: it makes itself
// non-dumpable from its start either way (a follower stayed dumpable).
func TestMCPNotDumpable(t *testing.T) {
	bothWays(t, testSpeed, func(t *testing.T, b *cliBundle) {
		noDump := 0
		m := NewMain(io.Discard, io.Discard, func(k string) string { return b.env[k] })
		m.Stdin = strings.NewReader("") // the agent closes stdin at once
		m.NoDump = func() error { noDump++; return nil }
		m.Run(t.Context(), []string{"mcp"})
		if noDump < 1 {
			t.Error("mcp: never made itself non-dumpable")
		}
	})
}

// .ci/vulncheck: with the vulnerability database out of reach (an
// address nothing answers, a folder that is not there) the scan is
// skipped at once, said plainly, and CI goes on (exit 0).
func TestVulncheckSkipsUnreachableDatabase(t *testing.T) {
	t.Parallel()
	for _, db := range []string{"http://127.0.0.1:1", "file://" + filepath.Join(t.TempDir(), "none")} {
		start := time.Now()
		cmd := exec.CommandContext(t.Context(), "bash", "../../.ci/vulncheck")
		cmd.Env = append(os.Environ(), "GOVULNDB="+db)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "govulncheck: SKIPPED") || !strings.Contains(string(out), db) {
			t.Errorf("GOVULNDB=%s: %v\n%s", db, err, out)
		}
		// A hang guard, ten times the probe's own 5-second limit: a
		// refused address answers at once.
		if d := time.Since(start); d > 50*time.Second {
			t.Errorf("GOVULNDB=%s: took %v to skip", db, d)
		}
	}
}

// Locator sim beyond loopback says on stderr that its /_sim/
// admin routes take no credentials; on loopback (its default) it says
// nothing. Both start, print their ready line and stop (interrupted at
// once).
func TestSimBeyondLoopbackWarns(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for addr, warn := range map[string]bool{"0.0.0.0:0": true, "127.0.0.1:0": false} {
		var out, errOut strings.Builder
		m := NewMain(&out, &errOut, func(string) string { return "" })
		if code := m.Run(ctx, []string{"sim", "--addr", addr}); code != console.ExitOK {
			t.Fatalf("sim --addr %s: exit %d, %s", addr, code, errOut.String())
		}
		if !strings.Contains(out.String(), `"baseURL"`) {
			t.Errorf("sim --addr %s: stdout %q, want the ready line", addr, out.String())
		}
		said := strings.Contains(errOut.String(), "/_sim/ admin routes") && strings.Contains(errOut.String(), "take no credentials")
		if said != warn {
			t.Errorf("sim --addr %s: stderr %q; warning wanted: %v", addr, errOut.String(), warn)
		}
	}
}

// Owner-credential prints a follower host's own credential, the
// one the owner's followers file admits (wire.FollowerCredential of
// LOCATOR_OWNER_TOKEN, the host and its time), and the line for that file;
// the token itself is never printed. A past or malformed time, or no
// token, is refused (exit 2) with nothing printed on stdout.
func TestOwnerCredentialCommand(t *testing.T) {
	t.Parallel()
	const token, until = "owner-token-0123456789abcdef-0123456789", "2099-01-01T00:00:00Z"
	env := map[string]string{"LOCATOR_OWNER_TOKEN": token}
	run := func(env map[string]string, args ...string) (int, string, string) {
		var out, errOut strings.Builder
		code := NewMain(&out, &errOut, func(k string) string { return env[k] }).Run(t.Context(), args)
		return code, out.String(), errOut.String()
	}
	code, out, errOut := run(env, "owner-credential", "desk-2", "--until", until)
	if code != console.ExitOK || out != wire.FollowerCredential(token, "desk-2", until)+"\n" || !strings.Contains(errOut, "desk-2 "+until+"\n") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if strings.Contains(out+errOut, token) {
		t.Error("the owner token was printed")
	}
	for name, c := range map[string]struct {
		env  map[string]string
		args []string
	}{
		"a past time":   {env, []string{"owner-credential", "desk-2", "--until", "2020-01-01T00:00:00Z"}},
		"no time":       {env, []string{"owner-credential", "desk-2"}},
		"no token":      {nil, []string{"owner-credential", "desk-2", "--until", until}},
		"no host named": {env, []string{"owner-credential", "--until", until}},
	} {
		if code, out, _ := run(c.env, c.args...); code != console.ExitUsage || out != "" {
			t.Errorf("%s: exit %d, stdout %q; want 2 and nothing", name, code, out)
		}
	}
}
