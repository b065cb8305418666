package service_test

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/service"
	"github.com/locatorhq/locator/internal/store/storetest"
	"github.com/locatorhq/locator/internal/wire"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// A follower proves it holds the owner's key pair for the
// owner's broker address (an HMAC of the owner's one-use challenge keyed
// by its own secret; the secret never travels). One that holds another
// secret, or names another address, is refused before anything is sent.
func TestFollowerMustHoldTheOwnersKeyPair(t *testing.T) {
	t.Parallel()
	o := own(t)
	locate := account.LocateRequest{Items: []account.LocateItem{{Symbol: "HTBX", Quantity: 100, Policy: workflow.Policy{MaxPrice: decimal.RequireFromString("0.05")}}}}
	wrong, err := brokerclient.NewClient(brokerclient.WithBaseURL(o.sim.URL), brokerclient.WithCredentials(o.sim.Live.ID, "not-the-secret"))
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		prover  wire.Prover
		baseURL string
	}{
		"wrong secret":  {wrong, o.sim.URL},
		"other address": {o.sim.Client(t, o.sim.Live), "http://127.0.0.1:1"},
		"no key pair":   {nil, o.sim.URL},
	} {
		cl := wire.Dial(o.owner.Lease().Endpoint, account.Caller{Name: name, Env: brokerclient.EnvLive}, c.prover, c.baseURL)
		t.Cleanup(cl.Close)
		before := writes(o)
		_, err := cl.Locate(t.Context(), locate)
		if account.KindOf(err) != account.KindRefused || console.ExitOf(err) != console.ExitUsage || !strings.Contains(err.Error(), "nothing was sent") {
			t.Errorf("%s: %v, want refused (exit 2), nothing sent", name, err)
		}
		if n := writes(o) - before; n != 0 {
			t.Errorf("%s: %d writes reached the broker", name, n)
		}
	}
	// The same with the owner's key pair is served.
	cl := wire.Dial(o.owner.Lease().Endpoint, account.Caller{Name: "right", Env: brokerclient.EnvLive}, o.sim.Client(t, o.sim.Live), o.sim.URL)
	t.Cleanup(cl.Close)
	if _, err := cl.Locate(t.Context(), locate); err != nil {
		t.Fatalf("the owner's key pair: %v", err)
	}
	// Sessions expire (sessionTTL, 12 h): a follower proves the key pair
	// again when its session has, and its request goes through once.
	// (The locate is of the same symbol: the broker may see nothing of it,
	// the inventory covering it; that it started once at the owner and
	// ended is the proof.)
	o.owner.ExpireSessions()
	res, err := cl.Locate(t.Context(), locate)
	if err == nil {
		err = res.Err()
	}
	if err != nil || len(res.Started) != 1 {
		t.Fatalf("after the session expired: %v (%d started)", err, len(res.Started))
	}
	w, err := cl.Follow(t.Context(), account.FollowRequest{ID: res.Started[0].ID}, nil)
	if err != nil || !states.Terminal(w.State) {
		t.Fatalf("the locate after the session expired: %v", err)
	}
	o.owner.ExpireSessions()
	if _, err := cl.Status(t.Context(), account.StatusRequest{}); err != nil {
		t.Fatalf("a status after the session expired: %v", err)
	}
}

// The owner's socket takes no connection from another
// user (SO_PEERCRED), beside its folder being the user's only.
func TestSocketRefusesAnotherUser(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("needs root to run a process as another user")
	}
	o := own(t)
	sock := o.owner.Lease().Endpoint
	// Another user cannot even reach the socket in its private folder.
	cmd := exec.Command("/bin/cat", sock)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "Permission denied") {
		t.Errorf("another user reached the socket: %v %s", err, out)
	}
	// And with the folder opened to all, its connection is dropped at
	// accept: a peer of another uid is never served.
	dir := filepath.Dir(sock)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(sock, 0o777); err != nil {
		t.Fatal(err)
	}
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("no curl to connect as another user")
	}
	cmd = exec.Command(curl, "-sS", "--max-time", "5", "--unix-socket", sock, "http://owner/v1/hello")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err == nil || strings.Contains(string(out), "baseURL") {
		t.Errorf("another user was served: %v %s", err, out)
	}
	// This user still is.
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}

// writes counts the requests that changed something at the broker (the
// owner's poller reads meanwhile).
func writes(o *owned) int {
	n := 0
	for _, r := range o.sim.Sim.Requests() {
		if r.Method != "GET" {
			n++
		}
	}
	return n
}

// An owner serving other hosts takes requests only from
// a process presenting its token, over TLS with the certificate its lease
// names, for the account it names in its handshake. A wrong token, a
// missing one, a pin that is not the lease's or an account the process
// does not own is refused before anything is sent; the right ones are
// served. A process's owners share one port, each behind a certificate
// of its own, and one that goes is no longer reached there.
func TestRemoteFollowerNeedsTokenAndPin(t *testing.T) {
	t.Parallel()
	network, err := wire.NewNetwork("127.0.0.1", "", testToken, wire.NetworkLimits{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { network.Close() })
	o := ownOn(t, storetest.Postgres(t), network)
	l := o.owner.Lease()
	if !strings.HasPrefix(l.Address, "https://127.0.0.1:") || l.Address != network.Address() || len(l.Pin) != 64 {
		t.Fatalf("lease address %q pin %q; want the network's address %s", l.Address, l.Pin, network.Address())
	}
	locate := account.LocateRequest{Items: []account.LocateItem{{Symbol: "HTBX", Quantity: 100, Policy: workflow.Policy{MaxPrice: decimal.RequireFromString("0.05")}}}}
	otherPin := strings.Repeat("0", 64)
	for name, c := range map[string]struct{ account, pin, token string }{
		"wrong token":     {"LV100001", l.Pin, "ffffffffffffffffffffffffffffffff"},
		"no token":        {"LV100001", l.Pin, ""},
		"another owner":   {"LV100001", otherPin, testToken},
		"another account": {"LV300001", l.Pin, testToken},
	} {
		before := writes(o)
		cl, err := wire.DialRemote(c.account, l.Address, c.pin, c.token, account.Caller{Name: name, Env: brokerclient.EnvLive}, o.sim.Client(t, o.sim.Live), o.sim.URL)
		if err == nil {
			t.Cleanup(cl.Close)
			_, err = cl.Locate(t.Context(), locate)
		}
		if err == nil {
			t.Errorf("%s: served", name)
		}
		if n := writes(o) - before; n != 0 {
			t.Errorf("%s: %d writes reached the broker", name, n)
		}
	}
	cl, err := wire.DialRemote("LV100001", l.Address, l.Pin, testToken, account.Caller{Name: "right", Env: brokerclient.EnvLive}, o.sim.Client(t, o.sim.Live), o.sim.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	if _, err := cl.Locate(t.Context(), locate); err != nil {
		t.Fatalf("the owner's token and pin: %v", err)
	}
	// A follower of an older locator, sending the token in a header, is
	// told to upgrade, in an answer it can show.
	older := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{ServerName: "LV100001", InsecureSkipVerify: true}}}
	req, _ := http.NewRequest(http.MethodGet, l.Address+"/v1/hello", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := older.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUpgradeRequired || !strings.Contains(string(body), "upgrade locator on this host") {
		t.Errorf("an older follower: %s %s; want 426 saying to upgrade", resp.Status, body)
	}
	// A second account of the process, on the same port.
	cfg := o.cfg
	cfg.Engine.Account, cfg.Engine.Client = "LV300001", o.sim.Client(t, o.sim.Live2)
	second, err := service.Own(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	l2 := second.Lease()
	if l2.Address != l.Address || l2.Pin == l.Pin {
		t.Fatalf("second owner at %s pin %s; want %s with a pin of its own", l2.Address, l2.Pin, l.Address)
	}
	for _, c := range []struct{ account, pin string }{{"LV100001", l.Pin}, {"LV300001", l2.Pin}} {
		cl, err := wire.DialRemote(c.account, l.Address, c.pin, testToken, account.Caller{Name: "right", Env: brokerclient.EnvLive}, o.sim.Client(t, o.sim.Live), o.sim.URL)
		if err != nil {
			t.Fatal(err)
		}
		hello, err := cl.Hello(t.Context())
		cl.Close()
		if err != nil || hello.Account != c.account {
			t.Fatalf("follower of %s reached %+v, %v", c.account, hello, err)
		}
	}
	second.Close()
	cl2, err := wire.DialRemote("LV300001", l.Address, l2.Pin, testToken, account.Caller{Name: "late", Env: brokerclient.EnvLive}, o.sim.Client(t, o.sim.Live2), o.sim.URL)
	if err == nil {
		defer cl2.Close()
		_, err = cl2.Hello(t.Context())
	}
	if err == nil {
		t.Fatalf("the owner of LV300001 closed, and a follower still reached it")
	}
}

// The owner's port holds no connection that has not
// proven the token for longer than its admission deadline (one second
// here, ten by default): 200 connections that finished their TLS
// handshake and then say nothing are all closed by the owner, each seen
// as its end of file, within 30 s; and a peer holding MaxPending
// connections not admitted yet has any more closed at once. A follower
// with the token is served afterwards.
func TestOwnerPortDropsIdleConnections(t *testing.T) {
	t.Parallel()
	network, err := wire.NewNetwork("127.0.0.1", "", testToken, wire.NetworkLimits{AdmitWait: time.Second, MaxPending: 250})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { network.Close() })
	o := ownOn(t, filepath.Join(t.TempDir(), "locator.db"), network)
	l := o.owner.Lease()
	host := strings.TrimPrefix(l.Address, "https://")
	cfg := &tls.Config{MinVersion: tls.VersionTLS13, ServerName: "LV100001", InsecureSkipVerify: true}
	idle := func(n int) []net.Conn {
		var conns []net.Conn
		for range n {
			c, err := tls.Dial("tcp", host, cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			conns = append(conns, c)
		}
		return conns
	}
	// closedBy waits for the owner to close each connection: a read ends
	// (end of file, or a reset) before the deadline.
	closedBy := func(conns []net.Conn, deadline time.Time) int {
		open := 0
		for _, c := range conns {
			c.SetReadDeadline(deadline)
			if _, err := c.Read(make([]byte, 1)); errors.Is(err, os.ErrDeadlineExceeded) {
				open++
			}
		}
		return open
	}
	conns := idle(200)
	if open := closedBy(conns, time.Now().Add(30*time.Second)); open != 0 {
		t.Fatalf("%d of 200 idle connections still open after 30 s", open)
	}
	cl, err := wire.DialRemote("LV100001", l.Address, l.Pin, testToken, account.Caller{Name: "right", Env: brokerclient.EnvLive}, o.sim.Client(t, o.sim.Live), o.sim.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	if _, err := cl.Status(t.Context(), account.StatusRequest{}); err != nil {
		t.Fatalf("a follower with the token after the idle ones: %v", err)
	}
}

// Beyond MaxPending connections of one peer not admitted yet, each new
// one takes the place of the oldest the owner holds, which is closed at
// once, long before the deadlines (an hour here): of 30 connections that
// say nothing, 20 are closed and the 10 held still complete their
// handshake. A
// follower with the token, dialling from the same address while 10 silent
// ones are held there, is served at once: held connections never keep it
// out (they used to, until the admission deadline closed them).
func TestOwnerPortCapsPendingConnections(t *testing.T) {
	t.Parallel()
	network, err := wire.NewNetwork("127.0.0.1", "", testToken, wire.NetworkLimits{AdmitWait: time.Hour, HandshakeWait: time.Hour, MaxPending: 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { network.Close() })
	o := ownOn(t, filepath.Join(t.TempDir(), "locator.db"), network)
	l := o.owner.Lease()
	host := strings.TrimPrefix(l.Address, "https://")
	conns := make([]net.Conn, 30)
	closed := make(chan int, len(conns))
	for i := range conns {
		c, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		conns[i] = c
		go func() {
			// Ends when the owner closes c (or the test stops reading).
			c.Read(make([]byte, 1))
			closed <- i
		}()
	}
	gone := map[int]bool{}
	for range 20 {
		gone[<-closed] = true
	}
	for i, c := range conns {
		if gone[i] {
			continue
		}
		c.SetReadDeadline(time.Now()) // stop the reader
		<-closed
		c.SetReadDeadline(time.Time{})
		tc := tls.Client(c, &tls.Config{MinVersion: tls.VersionTLS13, ServerName: "LV100001", InsecureSkipVerify: true})
		if err := tc.HandshakeContext(t.Context()); err != nil {
			t.Errorf("connection %d, within the cap, was not held: %v", i, err)
		}
	}
	// The 10 still hold their place, silent after their handshake; the
	// follower's connections push the oldest out.
	cl, err := wire.DialRemote("LV100001", l.Address, l.Pin, testToken, account.Caller{Name: "right", Env: brokerclient.EnvLive}, o.sim.Client(t, o.sim.Live), o.sim.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a hang guard: served at once
	defer cancel()
	if _, err := cl.Status(ctx, account.StatusRequest{}); err != nil {
		t.Fatalf("a follower with the token beside 10 silent connections of its address: %v", err)
	}
}
