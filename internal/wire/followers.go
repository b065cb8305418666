package wire

import (
	"bufio"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/locatorhq/locator/account"
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
// "HOST EXPIRES" a line (EXPIRES RFC 3339; '#' starts a comment). A line
// that ends with the word bearer ("HOST EXPIRES bearer") also lets its
// credential be sent as "Authorization: Bearer" by a client that is not
// locator (see bearerOf): a credential that travels, so only on the lines
// that say so. The file is read again at each connection (and each bearer
// request), so a line removed (a host revoked) or one past its time
// refuses that host's next connection without a restart; re-issuing a
// host's credential takes a new EXPIRES. The file holds no secret, but
// whoever can change it can admit a host: it is refused when others may
// write it (fileperm.Check).
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
type follower struct {
	host, expires string
	bearer        bool // its credential may be sent as a bearer
}

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
		if len(fields) < 2 || len(fields) > 3 || (len(fields) == 3 && fields[2] != "bearer") {
			return nil, fmt.Errorf("%s:%d: want HOST EXPIRES (RFC 3339), and the word bearer after them to admit the credential as a bearer", path, line)
		}
		at, err := time.Parse(time.RFC3339, fields[1])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %q is not an RFC 3339 time (2027-01-31T00:00:00Z)", path, line, fields[1])
		}
		if now.Before(at) {
			out = append(out, follower{host: fields[0], expires: fields[1], bearer: len(fields) == 3})
		}
	}
	return out, sc.Err()
}

// bearerOf is the follower host whose credential authorization ("Bearer
// CREDENTIAL") carries, among the followers file's hosts whose line
// admits a bearer, at now. Every credential is compared in constant time,
// and the error never quotes what was sent. OwnerTokenEnv itself is never
// a bearer (it never travels): a request carrying it is refused with
// errUpgrade, what a locator follower older than its owner sends.
func (n *Network) bearerOf(authorization string, now time.Time) (string, error) {
	scheme, token, _ := strings.Cut(authorization, " ")
	if !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", errNoBearer
	}
	master := subtle.ConstantTimeCompare([]byte(token), []byte(n.Token)) == 1
	n.mu.Lock()
	path := n.followers
	n.mu.Unlock()
	var hosts []follower
	if path != "" {
		hosts, _ = readFollowers(path, now) // unreadable: no bearer admitted
	}
	host := ""
	for _, h := range hosts {
		cred := FollowerCredential(n.Token, h.host, h.expires)
		if subtle.ConstantTimeCompare([]byte(token), []byte(cred)) == 1 && h.bearer {
			host = h.host
		}
	}
	switch {
	case master:
		return "", errUpgrade
	case host == "":
		return "", errBearerRefused
	}
	return host, nil
}

// The refusals of a bearer: each answered 401 but errUpgrade (426).
var (
	errNoBearer = account.Errorf(account.KindRefused, "this port serves the account API to locator's followers, which prove "+
		OwnerTokenEnv+" on the connection, and to other clients with the header Authorization: Bearer <the credential of a follower host "+
		"whose line in the owner's followers file ends with bearer> (locator owner-credential); nothing was sent")
	errBearerRefused = account.Errorf(account.KindRefused, "the bearer is not the credential of a follower host admitted as a bearer "+
		"(its line in the owner's followers file gone, past its time, without the word bearer, or another credential); nothing was sent")
	errUpgrade = account.Errorf(account.KindRefused, "the account's owner runs a newer locator, whose followers prove "+
		OwnerTokenEnv+" on each connection and never send it: upgrade locator on this host; nothing was sent")
)
