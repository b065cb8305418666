package connect_test

import (
	"context"
	"fmt"
	"log"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/connect"
	"github.com/locatorhq/locator/workflow"
)

// An execution helper opens the account from the LOCATOR_* variables the
// command reads, then locates and shorts under a cap; docs/library.md
// quotes this body (TestREADMEQuotesTheExample).
func ExampleOpen() {
	ctx := context.Background()
	opts := connect.FromEnv() // LOCATOR_BASE_URL, LOCATOR_KEY_ID, LOCATOR_SECRET, LOCATOR_ACCOUNT, LOCATOR_DB, ...
	opts.Name = "my-helper"   // how the owner records this process
	acct, err := connect.Open(ctx, opts)
	if err != nil {
		log.Fatal(err) // a setting missing or wrong: account.KindRefused, nothing was sent
	}
	defer acct.Close() // hands the account to the next owner when this process owned it
	res, err := acct.Short(ctx, account.ShortRequest{
		Symbol: "HTBX", Quantity: 100, Limit: decimal.NewFromInt(12),
		Policy: workflow.Policy{MaxPrice: decimal.RequireFromString("0.02")},
	})
	if err != nil {
		log.Fatalf("%s: %v", account.KindOf(err), err) // errors carry a kind
	}
	// res.Locate.Located() says plainly whether the shares are there;
	// res.Order.State is filled, working, rejected, ...
	fmt.Println(account.ShortOutcome(res).Words)
}
