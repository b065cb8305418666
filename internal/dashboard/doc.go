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
// It listens on loopback by default. Each start makes a random token
// (Access.Token, or a fixed one from TokenEnv), required of every request
// as a bearer header or as the cookie a one-time ?token= login sets (a
// random session id that expires and rotates); wrong tokens are rate
// limited, and /healthz without it answers its verdict alone. Serving
// without a token (Access.NoToken) is for loopback only, where it answers
// only to loopback host names; beyond loopback it needs TLS (a
// certificate) or a trusted TLS proxy, and plain HTTP is answered to
// loopback peers only. Connections are bounded in number and by read,
// write and idle timeouts (the event stream lifts them for itself), and a
// form by its size. Answers and actions are POSTs that must come from the
// page's own origin (or carry the token), so another site cannot make a
// browser answer an offer or place a locate. The signed answer links of
// package answerlink (Config.Links, under /link/) are the one exception to
// the token: each is its own credential for one offer, so a phone without
// a login can open it; the transport rule holds for them too. Nothing it
// serves holds a key's secret or a token: the page shows workflows,
// positions, orders, inventory, fees and job runs, which hold none.
package dashboard
