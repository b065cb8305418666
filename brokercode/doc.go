// Package brokercode holds the broker's codes and the input rules every
// other package shares: locate statuses (48 New … 81 Quoting), locate type
// codes and the strings a sell sends for them, order statuses, the symbol
// rule, and the one error type for input refused before anything is sent.
//
// It is named for what it holds, the broker's codes, and is a leaf: it
// imports nothing of ours, so brokerclient, workflow, states, ledger, the
// engine and the CLI can all use the same definition of each code. The
// simulator (brokersim) does not import it: it keeps its own literals from
// the spec, so the client cannot agree with the simulator by accident.
//
// Sources: the broker's interface specification ("the spec" in comments),
// sections "States and transitions", "Locate types" and "Orders"
// (docs/broker.md summarizes what locator relies on); the symbol rule also
// follows the public reference's placement limits.
package brokercode
