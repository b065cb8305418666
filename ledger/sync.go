package ledger

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/market"
)

// eastern is the market's time zone: trade dates, and the dates the broker
// stamps on ledger rows, are Eastern calendar days.
var eastern = market.NewYork

// TradeDate is the Eastern calendar date of t, as midnight UTC: the form the
// ledger's entryDate and the store's dates take, so dates compare directly.
func TradeDate(t time.Time) time.Time {
	et := t.In(eastern)
	return time.Date(et.Year(), et.Month(), et.Day(), 0, 0, 0, 0, time.UTC)
}

// PastTradeDate reads a trade date a person typed as YYYY-MM-DD (in field)
// that may not lie after the trade date of now.
func PastTradeDate(field, typed string, now time.Time) (time.Time, error) {
	d, err := time.Parse(time.DateOnly, typed)
	if err != nil {
		return time.Time{}, brokercode.Invalid(field, "%q: want a date as YYYY-MM-DD", typed)
	}
	if today := TradeDate(now); d.After(today) {
		return time.Time{}, brokercode.Invalid(field, "%s is after today (%s)", typed, today.Format(time.DateOnly))
	}
	return d, nil
}

// civilDate is t's calendar date in its own location, as midnight UTC.
func civilDate(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// windowAttempts bounds how often one window is re-read when its
// totalRecords moves while it is being paged.
const windowAttempts = 3

// Sync copies the account's cash ledger dated on or after from and before to
// into the store, idempotently: rows already stored (by the dedupe key of the
// package doc) are skipped, so syncing a window twice stores each row once.
// from and to are read as calendar dates in their own location (pass
// TradeDate values); to is exclusive, so TradeDate(now)+1 day includes today.
// A range longer than 365 days is read as consecutive windows of at most 365
// days, each paged as the spec's "Cash ledger" rules say (offset raised by
// the effective limit the service echoes while offset + rows <
// totalRecords); each window's rows are stored in one transaction, so a
// failure part-way keeps the windows already read.
//
// Spec: GET /v1/api/accounts/{accountId}/cash-transactions/start-date/{startDate}.
func Sync(ctx context.Context, c *brokerclient.Client, st *store.Store, account string, from, to time.Time) (locator.SyncResult, error) {
	var res locator.SyncResult
	switch {
	case c == nil || st == nil:
		return res, brokercode.Invalid("client/store", "both are required")
	case strings.TrimSpace(account) == "":
		return res, brokercode.Invalid("account", "is empty")
	case from.IsZero() || to.IsZero():
		return res, brokercode.Invalid("from/to", "both dates are required")
	}
	account = strings.ToUpper(strings.TrimSpace(account))
	start, end := civilDate(from), civilDate(to)
	if end.Before(start) {
		return res, brokercode.Invalid("to", "%s is before from %s", end.Format(time.DateOnly), start.Format(time.DateOnly))
	}
	for start.Before(end) {
		days := min(int(end.Sub(start).Hours()/24), brokerclient.MaxLedgerWindowDays)
		rows, err := readWindow(ctx, c, account, start, days)
		if err != nil {
			return res, err
		}
		res.Fetched += len(rows)
		n, err := st.InsertCashEntries(ctx, keyed(account, rows))
		if err != nil {
			return res, err
		}
		res.Inserted += n
		start = start.AddDate(0, 0, days)
	}
	return res, nil
}

// readWindow reads every row of one window of at most 365 days, re-reading
// it when totalRecords changes between pages (a row that lands mid-walk
// shifts the offsets, which could show one row twice or skip one).
func readWindow(ctx context.Context, c *brokerclient.Client, account string, start time.Time, days int) ([]brokerclient.CashEntry, error) {
	for attempt := 1; ; attempt++ {
		rows, stable, err := walkWindow(ctx, c, account, start, days)
		if err != nil || stable {
			return rows, err
		}
		if attempt == windowAttempts {
			return nil, fmt.Errorf("ledger: cash ledger %s from %s: the window kept changing while it was read (%d attempts)",
				account, start.Format(time.DateOnly), attempt)
		}
	}
}

// walkWindow pages through one window; stable is false when totalRecords
// moved between pages.
func walkWindow(ctx context.Context, c *brokerclient.Client, account string, start time.Time, days int) (rows []brokerclient.CashEntry, stable bool, err error) {
	offset, total := 0, -1
	for {
		page, _, err := c.Ledger.List(ctx, account, start, &brokerclient.CashListOptions{
			NumberOfDays: days, Offset: offset, Limit: brokerclient.MaxLedgerPageSize,
		})
		if err != nil {
			return nil, false, err
		}
		if total >= 0 && page.Pagination.TotalRecords != total {
			return nil, false, nil
		}
		total = page.Pagination.TotalRecords
		rows = append(rows, page.CashHistory...)
		n := len(page.CashHistory)
		if offset+n >= total {
			return rows, true, nil
		}
		if n == 0 {
			return nil, false, fmt.Errorf("ledger: cash ledger %s from %s: empty page at offset %d of %d records",
				account, start.Format(time.DateOnly), offset, total)
		}
		// Raise offset by the limit the service applied (currentLimit, after
		// its clamp); if it echoed none, or fewer than it sent, by the rows.
		step := page.Pagination.CurrentLimit
		if step <= 0 || step < n {
			step = n
		}
		offset += step
	}
}

// keyed turns one window's rows into store entries with their dedupe keys.
// The window holds whole days, so counting identical rows per day here sees
// every twin.
func keyed(account string, rows []brokerclient.CashEntry) []store.CashEntry {
	seen := map[string]int{}
	out := make([]store.CashEntry, 0, len(rows))
	for _, r := range rows {
		date := civilDate(r.EntryDate.Time)
		content := strings.Join([]string{
			account, date.Format(time.DateOnly), string(r.CashType), r.Currency,
			r.Deposit.String(), r.Withdraw.String(), r.Note,
		}, "\x1f")
		occ := seen[content]
		seen[content] = occ + 1
		sum := sha256.Sum256([]byte(content + "\x1f" + strconv.Itoa(occ)))
		out = append(out, store.CashEntry{
			Key: hex.EncodeToString(sum[:]), Account: account, EntryDate: date, CashType: string(r.CashType),
			Currency: r.Currency, Deposit: r.Deposit, Withdraw: r.Withdraw, Note: r.Note, Occurrence: occ,
		})
	}
	return out
}
