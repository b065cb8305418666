package answerlink

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/locatorhq/locator/brokerclient"
)

// Config is how a daemon makes links, as its config says: the address a
// phone reaches the dashboard at, and the environment variable holding
// the secret the links' key is derived from.
type Config struct {
	// BaseURL is the dashboard as the person's phone reaches it (its
	// https address, or a TLS proxy's in front of it); a link is BaseURL
	// + "/link/" + token. It is no secret.
	BaseURL string
	// SecretEnv names the variable holding the secret (at least MinSecret
	// bytes), read once and removed from the environment.
	SecretEnv string
}

// envName is what SecretEnv must look like: a variable's name, so a secret
// pasted there by mistake is refused without being echoed.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Check reports what is wrong with c, without quoting a value that might
// be the secret.
func (c Config) Check() error {
	if !envName.MatchString(c.SecretEnv) {
		return errors.New("secretEnv must name an environment variable (letters, digits and '_'), not hold the secret")
	}
	_, err := ParseBase(c.BaseURL)
	return err
}

// ParseBase checks a links' base address: https (http only on this
// machine's loopback, where no phone is: for trying it out), a host, no
// user, query or fragment, and no ',' ';' or space (an ntfy button's
// syntax separates with them).
func ParseBase(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "":
		return nil, errors.New(`links' baseURL: want https://host[:port][/path], the dashboard's address as a phone reaches it`)
	case u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return nil, errors.New("links' baseURL: no user, query or fragment (a link appends /link/TOKEN to it)")
	case strings.ContainsAny(raw, ",; \t"):
		return nil, errors.New("links' baseURL: no ',', ';' or spaces")
	case u.Scheme == "http" && !brokerclient.Loopback(u.Hostname()):
		return nil, fmt.Errorf("links' baseURL: http:// beyond this machine's loopback would carry the links in clear: use https://")
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	return u, nil
}
