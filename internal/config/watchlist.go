package config

import (
	"encoding/csv"
	"fmt"
	"os"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/workflow"
)

// ReadWatchlist reads a CSV watchlist: symbol, quantity and an optional max
// price per row; blank lines and lines starting with # are skipped, and so
// is a first row whose quantity is not a number (a header). A row's max
// price, when given, caps that row under policy.
func ReadWatchlist(path string, policy workflow.Policy) ([]account.LocateItem, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("watchlist: %v", err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.Comment, r.FieldsPerRecord, r.TrimLeadingSpace = '#', -1, true
	rows, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("watchlist %s: %v", path, err)
	}
	var reqs []account.LocateItem
	for i, row := range rows {
		if i == 0 && len(row) >= 2 && !startsWithDigit(row[1]) {
			continue
		}
		if len(row) < 2 || len(row) > 3 {
			return nil, fmt.Errorf("watchlist %s line %d: want symbol, quantity[, max price]", path, i+1)
		}
		var qty int64
		symbol, err := brokercode.Symbol(row[0])
		if err == nil {
			qty, err = workflow.ParseQuantity(row[1])
		}
		if err != nil {
			return nil, fmt.Errorf("watchlist %s line %d: %w", path, i+1, err)
		}
		p := policy
		if len(row) == 3 && row[2] != "" {
			if p.MaxPrice, err = workflow.ParsePrice("max price", row[2]); err != nil {
				return nil, fmt.Errorf("watchlist %s line %d: %w", path, i+1, err)
			}
			p.AutoAccept = true
		}
		reqs = append(reqs, account.LocateItem{Symbol: symbol, Quantity: qty, Policy: p})
	}
	if len(reqs) == 0 {
		return nil, fmt.Errorf("watchlist %s has no rows", path)
	}
	return reqs, nil
}

func startsWithDigit(s string) bool { return s != "" && s[0] >= '0' && s[0] <= '9' }

// WatchlistSymbols is the symbols of the watchlist at path, in its order
// (ReadWatchlist's rows: what plan and shortable read of it).
func WatchlistSymbols(path string) ([]string, error) {
	items, err := ReadWatchlist(path, workflow.Policy{})
	if err != nil {
		return nil, err
	}
	symbols := make([]string, len(items))
	for i, it := range items {
		symbols[i] = it.Symbol
	}
	return symbols, nil
}
