package wire

import (
	"crypto/tls"
	"fmt"
	"strings"
	"time"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/workflow"
)

// The transport carries the account API between a follower and its owner
// as JSON over HTTP on the owner's socket (and over TLS, see Network). It
// only carries: every rule is local.Account's. Its routes, under /v1, are the ops
// of routes.go, which server.table serves and the Client calls, published
// as api/openapi.yaml (generated from the table and checked by
// TestOpenAPI). Each request names its caller in the
// callerHeader (the caller's id, name, environment and whether it can
// answer questions); a caller that can answers the questions put to it on
// its question stream. An error answer is an *account.Error as JSON, with
// its kind.
const callerHeader = "Locator-Caller"

// sessionHeader carries the session a follower earned by proving it holds
// the owner's credentials (POST /v1/session); every call but hello and
// session needs one. The owner's refusal of a request without a live
// session carries it too ("expired"): the follower then earns another and
// sends the request again, once.
const sessionHeader = "Locator-Session"

// sessionTTL is how long a session lasts from its proof, in real time.
const sessionTTL = 12 * time.Hour

// Prover proves this process holds a broker client's credentials without
// sending them: *brokerclient.Client is one.
type Prover interface {
	Prove(msg []byte) (identity string, mac []byte, err error)
}

// proof is what a follower sends to earn a session: the owner's challenge
// answered with its own credentials, for its broker address, on this
// channel.
type proof struct {
	Nonce    string `json:"nonce"`
	Identity string `json:"identity"`
	MAC      []byte `json:"mac"`
	BaseURL  string `json:"baseURL"`
}

// earnedSession is the owner's answer to a proof: the session, and the
// owner's own proof of the key pair on the same challenge and channel,
// which the follower checks.
type earnedSession struct {
	Session string `json:"session"`
	MAC     []byte `json:"mac"`
}

// challenge is the message side ("follower" or "owner") signs with the
// account's key pair: the owner's nonce, the broker address and the
// channel it travels on (see channel).
func challenge(side, nonce, baseURL, channel string) []byte {
	return []byte("locator " + side + "\n" + nonce + "\n" + strings.TrimRight(baseURL, "/") + "\n" + channel)
}

// channel names the connection a proof travels on, as one end sees it:
// over TLS, the connection's exporter value (RFC 8446 section 7.5, as ssh
// signs its session id) and the pin of the owner's certificate (the
// owner's own, the one the follower saw); on the socket, whose peers are
// this user's processes (SO_PEERCRED), just that. A proof a relay passes
// on was made for the relay's connection and certificate, and the owner,
// checking it against its own, refuses it.
func channel(cs *tls.ConnectionState, pin string) (string, error) {
	if cs == nil {
		return "unix", nil
	}
	ekm, err := cs.ExportKeyingMaterial("EXPORTER-locator-key-pair", nil, 32)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("tls %x %s", ekm, pin), nil
}

// challengeTTL is how long a challenge may be answered.
const challengeTTL = 30 * time.Second

// Role says what kind of process owns an account: a daemon owns it until
// stopped; a command only for its run.
type Role string

// Roles.
const (
	RoleDaemon  Role = "daemon"
	RoleCommand Role = "command"
)

// Hello says who owns the account and through which database: a process
// that opened another database for the account is refused, not served.
type Hello struct {
	Account string        `json:"account"`
	BaseURL string        `json:"baseURL"`
	DB      string        `json:"db"`
	Role    Role          `json:"role"`
	Lease   locator.Lease `json:"lease"`
	// Nonce is a fresh challenge, answered once within challengeTTL to
	// earn a session.
	Nonce string `json:"nonce"`
}

// wireCaller is account.Caller on the wire: its Ask becomes CanAsk.
type wireCaller struct {
	ID     string           `json:"id"`
	Name   string           `json:"name"`
	Env    brokerclient.Env `json:"env"`
	CanAsk bool             `json:"canAsk,omitempty"`
}

// message is one line of a stream.
type message struct {
	Update    *account.Update     `json:"update,omitempty"`
	End       *workflow.Workflow  `json:"end,omitempty"`
	Error     *account.Error      `json:"error,omitempty"`
	Question  *account.Question   `json:"question,omitempty"`
	Watch     *account.WatchEvent `json:"watch,omitempty"`
	Withdrawn string              `json:"withdrawn,omitempty"`
	// Answered says the withdrawn question was answered elsewhere (else
	// its time ran out).
	Answered bool `json:"answered,omitempty"`
}

// reply answers a question put on a question stream.
type reply struct {
	Question string `json:"question"`
	Accept   bool   `json:"accept"`
}

// jobCall is a job run handed to the owner, with the ref /v1/job/stop
// names it by.
type jobCall struct {
	account.JobRequest
	Ref string `json:"ref"`
}
