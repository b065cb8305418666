package wire

import (
	"bufio"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/locatorhq/locator/internal/fileperm"
)

// FollowerCredential is the credential of one follower host, made from the
// owner's OwnerTokenEnv (master) for host until expires (as the followers
// file writes it, RFC 3339): the hex HMAC-SHA256, keyed by master, of
// "locator follower", host and expires, one a line. The follower host holds
// it as its OwnerTokenEnv instead of master: it proves it on each
// connection exactly as master is proven, but opens no other host's
// connections and cannot pose as an owner to another host's followers.
func FollowerCredential(master, host, expires string) string {
	m := hmac.New(sha256.New, []byte(master))
	fmt.Fprintf(m, "locator follower\n%s\n%s", host, expires)
	return hex.EncodeToString(m.Sum(nil))
}

// IssueFollowerCredential is host's credential (FollowerCredential) until
// the RFC 3339 time until, checked first: until reads and is after now, and
// master is a token CheckToken admits. Its errors never quote master.
func IssueFollowerCredential(master, host, until string, now time.Time) (string, error) {
	t, err := time.Parse(time.RFC3339, until)
	if err != nil {
		return "", fmt.Errorf("until %q: want an RFC 3339 time, like 2027-01-31T00:00:00Z", until)
	}
	if !t.After(now) {
		return "", fmt.Errorf("until %s is past", until)
	}
	if err := CheckToken(master); err != nil {
		return "", err
	}
	return FollowerCredential(master, host, until), nil
}

// AllowFollowers makes the network admit, besides OwnerTokenEnv itself,
// the credentials of the follower hosts that the file at path lists, one
// "HOST EXPIRES" a line (EXPIRES RFC 3339; '#' starts a comment). The
// file is read again at each connection, so a line removed (a host
// revoked) or one past its time refuses that host's next connection
// without a restart; re-issuing a host's credential takes a new EXPIRES.
// The file holds no secret, but whoever can change it can admit a host:
// it is refused when others may write it (fileperm.Check).
func (n *Network) AllowFollowers(path string) error {
	if _, err := readFollowers(path, time.Now()); err != nil {
		return err
	}
	n.mu.Lock()
	n.followers = path
	n.mu.Unlock()
	return nil
}

// keys are the secrets a follower may prove at now: OwnerTokenEnv, then
// each listed host's credential while it lasts. A followers file that
// cannot be read admits no host but those holding OwnerTokenEnv.
func (n *Network) keys(now time.Time) []string {
	n.mu.Lock()
	path := n.followers
	n.mu.Unlock()
	keys := []string{n.Token}
	if path == "" {
		return keys
	}
	hosts, err := readFollowers(path, now)
	if err != nil {
		return keys
	}
	for _, h := range hosts {
		keys = append(keys, FollowerCredential(n.Token, h.host, h.expires))
	}
	return keys
}

// follower is one line of a followers file.
type follower struct{ host, expires string }

// readFollowers reads the followers file at path: the hosts whose time
// has not come at now.
func readFollowers(path string, now time.Time) ([]follower, error) {
	if err := fileperm.Check(path); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []follower
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(text)
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 2 {
			return nil, fmt.Errorf("%s:%d: want HOST EXPIRES (RFC 3339)", path, line)
		}
		at, err := time.Parse(time.RFC3339, fields[1])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %q is not an RFC 3339 time (2027-01-31T00:00:00Z)", path, line, fields[1])
		}
		if now.Before(at) {
			out = append(out, follower{host: fields[0], expires: fields[1]})
		}
	}
	return out, sc.Err()
}
