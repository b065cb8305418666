// Package dashboard serves what people and scrapers watch of the long-running
// owner (locator serve, locator run) over HTTP: /healthz for a supervisor,
// /metrics for Prometheus (on a registry of its own), and a web page with
// the live workflows and their offer countdowns, Approve and Decline for the
// offers that wait on a person, the located inventory, today's fees against
// the ledger's charges and the recent job runs, kept current over
// server-sent events (/events) fed by each engine's Subscribe.
//
// It listens on loopback by default, where every local user could reach it
// anyway; bound beyond loopback it refuses to start without a token, then
// accepted as a bearer header or as the cookie that a one-time ?token= login
// sets. Answers are POSTs that must come from the page's own origin (or carry
// the token), so another site cannot make a browser answer an offer. Nothing
// it serves holds a key's secret or a token: the page shows workflows,
// inventory, fees and job runs, which hold none.
package dashboard
