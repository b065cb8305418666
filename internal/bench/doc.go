// Package bench measures locator against the simulated broker: a watchlist
// of N hard-to-borrow symbols located by the engine and, side by side, by
// the naive loop the spec's guidance suggests (quote, poll history every
// second, accept, one symbol at a time), together with the store's durable
// state changes per second, the memory of live workflows and the time to
// recover open workflows after a SIGKILL. `locator bench` runs it and
// writes the report; the figures docs/benchmarks.md quotes come from there.
package bench
