// Package report turns what locator recorded into answers: what locates
// cost and what they were used for (Build: per symbol, per day and in
// total, with charts), whether every short sale was covered when it was
// sent (Audit, the Reg SHO trail), and how much to locate tomorrow (Plan).
//
// Every date is a trade date on the broker's calendar: New York, the
// market's zone, taken on the broker's clock (this machine's times, as the
// store holds them, moved by the broker's clock offset). Money is
// shopspring/decimal; floats only feed the plots.
package report
