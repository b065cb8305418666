// Package dashboard serves what people and scrapers watch of the long-running
// owner (locator serve, locator run) over HTTP: /healthz for a supervisor,
// /metrics for Prometheus (on a registry of its own), and a web page with
// the live workflows and their offer countdowns, Approve and Decline for the
// offers that wait on a person, the located inventory, today's fees against
// the ledger's charges and the recent job runs, kept current over
// server-sent events (/events) fed by each engine's Subscribe.
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
// form by its size. Answers are POSTs that must come from the page's own
// origin (or carry the token), so another site cannot make a browser
// answer an offer. The signed answer links of package answerlink
// (Config.Links, under /link/) are the one exception to the token: each is
// its own credential for one offer, so a phone without a login can open
// it; the transport rule holds for them too. Nothing it serves holds a
// key's secret or a token: the page shows workflows, inventory, fees and
// job runs, which hold none.
package dashboard
