// Package dashboard serves what people and scrapers watch of the long-running
// owner (locator serve, locator run) over HTTP: /healthz for a supervisor,
// /metrics for Prometheus (on a registry of its own), and a trading screen:
// an offer that waits on a person as a banner counting down, answered by
// its buttons or the keys Y and N; positions and P&L from the broker's P&L
// stream with each symbol's locate spend and P&L net of it; working orders
// with cancel; today's locates with spend and recovery; the located
// inventory with credit back per row and of all unused; a locate form;
// today's fees against the ledger's charges; the recent job runs; and the
// owner's connection to the broker, red as soon as its reads fail. It is
// kept current over server-sent events (/events): the sections on every
// change of a workflow and every two seconds, the connection every second.
// Everything it reads and does goes through each account's API
// (account.Account), so it works the same in the process that owns an
// account and in one that follows it.
//
// It listens on loopback by default, where every user of the machine shares
// the addresses and a browser hands 127.0.0.1's cookies to all its ports:
// there it answers only the user running it, the owner of the peer's
// socket as the kernel tells it (ownUser; on Linux, refusing a peer whose
// owner cannot be found), and every other user is refused 403 whatever
// they hold. Each start makes a random token (Access.Token, or a fixed one
// from TokenEnv), required of every request as a bearer header or as the
// cookie a one-time ?token= login sets (locator_dashboard_PORT, or
// __Host-locator_dashboard_PORT under TLS: a random session id, never the
// token, that expires, rotates and is ended by the page's log-out); wrong
// tokens are rate limited, and /healthz without it answers its verdict
// alone. Serving without a token (Access.NoToken) is for loopback only,
// where it answers only to loopback host names; beyond loopback it needs
// TLS (a certificate) or a trusted TLS proxy, and plain HTTP is answered
// to loopback peers only. Connections are bounded in number and by read,
// write and idle timeouts (the event stream lifts them for itself), and a
// form by its size. Answers and actions are POSTs that must come from the
// page's own origin with its login's form token (or carry the bearer
// token), so neither another site nor a page of another port that was sent
// the cookie can make a browser answer an offer or place a locate. The
// signed answer links of package answerlink (Config.Links, under /link/)
// are the one exception to the token: each is its own credential for one
// offer, so a phone without a login can open it; the rules on transport
// and on the user hold for them too. Nothing it serves holds a key's
// secret or a token: the page shows workflows, positions, orders,
// inventory, fees and job runs, which hold none, and its forms' token,
// which is no credential without the login's cookie.
package dashboard
