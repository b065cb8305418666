// Package ledger answers three questions a short seller asks after the
// locates are done: what did they really cost, and how much can be shorted
// right now.
//
// Sync copies an account's cash ledger into the store. The broker's rows have
// no id, arrive later than the fills they charge for, and may be repeated
// verbatim (two identical borrow charges on one day are two charges), so each
// row is stored under a dedupe key:
//
//	sha256(account, entryDate, cashType, currency, deposit, withdraw, note, occurrence)
//
// where the amounts are in canonical decimal form and occurrence is the
// row's index among the rows of the same day that are identical in every
// other field (0 for the first, 1 for its twin, ...). Sync always fetches
// whole days (the ledger's dates have no time of day), so the occurrence
// index is computed over the complete day each time and a re-sync derives the
// same keys: nothing is inserted twice, twins stay apart, and a twin that
// appears later gets the next index and is inserted. A window is re-read when
// its totalRecords changes while it is being paged, since a row landing
// mid-walk shifts the offsets and could show one row twice. Unknown cashType
// labels are stored as they came.
//
// Reconcile matches the engine's filled locates to their `Locate Fees`
// charges and its credit-backs to their `Locate Fees` credits, and compares
// each day's charges with the account's totalLocateCosts. Size says how many
// shares can be shorted now and what it would take to reach a target;
// Unused, which located shares are not in use and may be credited back.
package ledger
