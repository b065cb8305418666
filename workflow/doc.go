// Package workflow is locator's domain: the records of a locate request, a
// price check, a credit-back and an order, the cost policy, the broker's locate statuses,
// the one definition of shares available to short, input validation, the
// choice between offers, and the pure step function that turns a record, an
// event and the time into the transition and the effects to carry out.
//
// It does no I/O and imports nothing of locator's but the states tables, so
// every decision can be tested row by row without a broker or a database,
// and the engine, the store, the ledger and the CLI share one truth.
package workflow
