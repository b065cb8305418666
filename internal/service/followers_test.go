package service_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/internal/wire"
)

// Follower hosts hold credentials of their own instead of the
// owner's token. A host listed in the owner's followers file is served on
// its credential until its time; one past its time, one made from another
// token, and a host removed from the file (revoked while the owner runs,
// no restart) are refused before anything is sent. The token itself still
// admits (the same-site path).
func TestFollowerHostCredentials(t *testing.T) {
	t.Parallel()
	network, err := wire.NewNetwork("127.0.0.1", "", testToken, wire.NetworkLimits{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { network.Close() })
	const future, past = "2099-01-01T00:00:00Z", "2020-01-01T00:00:00Z"
	file := filepath.Join(t.TempDir(), "followers")
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("# host until\nhost-a " + future + "\nhost-b " + past + "\n")
	if err := network.AllowFollowers(file); err != nil {
		t.Fatal(err)
	}
	o := ownOn(t, filepath.Join(t.TempDir(), "locator.db"), network)
	l := o.owner.Lease()
	status := func(cred string) error {
		cl, err := wire.DialRemote("LV100001", l.Address, l.Pin, cred, account.Caller{Name: "f", Env: brokerclient.EnvLive}, o.sim.Client(t, o.sim.Live), o.sim.URL)
		if err != nil {
			return err
		}
		defer cl.Close()
		_, err = cl.Status(t.Context(), account.StatusRequest{})
		return err
	}
	hostA := wire.FollowerCredential(testToken, "host-a", future)
	if err := status(hostA); err != nil {
		t.Fatalf("host-a on its credential: %v", err)
	}
	if err := status(testToken); err != nil {
		t.Fatalf("the token itself: %v", err)
	}
	for name, cred := range map[string]string{
		"host-b, past its time":     wire.FollowerCredential(testToken, "host-b", past),
		"host-b, its time changed":  wire.FollowerCredential(testToken, "host-b", future),
		"host-a, of another token":  wire.FollowerCredential("another-token-0123456789abcdef-xyz", "host-a", future),
		"a host the file never had": wire.FollowerCredential(testToken, "host-c", future),
	} {
		if err := status(cred); account.KindOf(err) != account.KindRefused {
			t.Errorf("%s: %v, want refused", name, err)
		}
	}
	write("host-b " + past + "\n") // host-a revoked
	if err := status(hostA); account.KindOf(err) != account.KindRefused {
		t.Errorf("host-a after its line was removed: %v, want refused", err)
	}
}

// A follower's credential is issued only for a time that reads and is to
// come, from a token long enough to guess at; it is FollowerCredential's,
// and no error quotes the token.
func TestIssueFollowerCredential(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC)
	const until = "2027-01-31T00:00:00Z"
	if got, err := wire.IssueFollowerCredential(testToken, "desk-2", until, now); err != nil || got != wire.FollowerCredential(testToken, "desk-2", until) {
		t.Fatalf("credential %q, %v", got, err)
	}
	for name, c := range map[string]struct{ token, until, want string }{
		"a past time":   {testToken, "2026-11-25T15:00:00Z", "is past"},
		"no time":       {testToken, "", "want an RFC 3339 time"},
		"a date only":   {testToken, "2027-01-31", "want an RFC 3339 time"},
		"a short token": {"short-token", until, wire.OwnerTokenEnv + " must hold at least"},
	} {
		if _, err := wire.IssueFollowerCredential(c.token, "desk-2", c.until, now); err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), c.token) {
			t.Errorf("%s: %v, want %q, the token unsaid", name, err, c.want)
		}
	}
}
