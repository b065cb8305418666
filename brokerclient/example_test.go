package brokerclient_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/clock"
)

// exampleSim starts the simulator of the default scenario on an httptest
// server and returns a client of its first live key (LV100001, LV100002).
// With clk nil both run on the wall clock, which is fine for reads.
func exampleSim(clk clock.Clock) (*brokersim.Sim, *brokerclient.Client, func()) {
	sc := brokersim.DefaultScenario()
	var simOpts []brokersim.Option
	clientOpts := []brokerclient.Option{}
	if clk != nil {
		simOpts = append(simOpts, brokersim.WithClock(clk))
		clientOpts = append(clientOpts, brokerclient.WithClock(clk))
	}
	sim, err := brokersim.New(sc, simOpts...)
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(sim)
	key := sc.Keys[0]
	c, err := brokerclient.NewClient(append(clientOpts,
		brokerclient.WithBaseURL(srv.URL),
		brokerclient.WithCredentials(key.KeyID, key.Secret),
		brokerclient.WithHTTPClient(srv.Client()),
	)...)
	if err != nil {
		log.Fatal(err)
	}
	return sim, c, srv.Close
}

// List the accounts a key pair owns; the call doubles as a credential check.
func ExampleAccountsService_List() {
	_, c, stop := exampleSim(nil)
	defer stop()

	accounts, _, err := c.Accounts.List(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	for _, a := range accounts {
		fmt.Println(a.Account, a.AccountType, a.AccountStatus)
	}
	// Output:
	// LV100001 Margin Active
	// LV100002 Margin Restricted
}

// Quote a hard-to-borrow symbol, wait for the offer, accept it and confirm
// the shares in inventory. The simulator and the client share a fake clock,
// so the 1.5 to 3 second settle is crossed with Advance, not by sleeping.
func ExampleLocatesService_Quote() {
	clk := clock.NewFake(time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC)) // 10:00 ET
	sim, c, stop := exampleSim(clk)
	defer stop()
	ctx := context.Background()

	ack, _, err := c.Locates.Quote(ctx, brokerclient.QuoteRequest{Account: "LV100001", Symbol: "HTBX", Quantity: 500})
	if err != nil {
		log.Fatal(err) // an *OutcomeUnknownError here: settle it with ResolveQuote
	}
	sim.Advance(3 * time.Second)

	rows, _, err := c.Locates.History(ctx, "LV100001")
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range rows {
		if r.BaseID() == ack.QuoteReqID && r.LocateStatus == brokercode.LocateStatusOffered {
			fmt.Printf("offer: %s %d shares at %s a share, %s pool\n", r.Symbol, r.LocateShares, r.LocatePrice, r.Type())
		}
	}

	if _, _, err := c.Locates.Accept(ctx, "LV100001", ack.QuoteReqID); err != nil {
		log.Fatal(err)
	}
	inv, _, err := c.Locates.Inventory(ctx, "LV100001")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("available to short:", brokerclient.Available(inv, "HTBX"))
	// Output:
	// offer: HTBX 500 shares at 0.015 a share, Locate pool
	// available to short: 500
}

// Walk the cash ledger of a month, page by page, and total it.
func ExampleLedgerService_Entries() {
	_, c, stop := exampleSim(nil)
	defer stop()

	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	end := start.AddDate(0, 1, 0)
	var net = brokerclient.CashEntry{}.Amount()
	for e, err := range c.Ledger.Entries(context.Background(), "LV100001", start, end, nil) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s %-22s %10s\n", e.EntryDate.Format(time.DateOnly), e.CashType, e.Amount().StringFixed(2))
		net = net.Add(e.Amount())
	}
	fmt.Println("net:", net.StringFixed(2))
	// Output:
	// 2026-11-02 General                 100000.00
	// 2026-11-05 Software & Data            -29.95
	// 2026-11-10 Dividend                    24.00
	// 2026-11-12 Locate & Borrow Charge      -3.10
	// 2026-11-12 Locate & Borrow Charge      -3.10
	// 2026-11-16 Margin                     -12.40
	// 2026-11-18 Interest Adjustment          0.87
	// net: 99976.32
}

// Follow an order from the portfolio stream: watch it before placing it,
// feed the placement's answer in (a synchronous rejection may push
// nothing), then read its states until a final one. While the stream is
// down the follower reads the order book instead, and Connected says so.
func ExampleOrderFollower() {
	// The broker's clock runs from 10:00 ET on a trading day: orders fill
	// only in the exchange's session.
	_, c, stop := exampleSim(clock.NewScaled(time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC), 1))
	defer stop()
	ctx := context.Background()

	f, err := c.Streams.FollowOrders(ctx, "LV100001")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()

	limit := decimal.RequireFromString("200") // above AAPL's 190: marketable
	req := brokerclient.OrderRequest{
		ClientOrderID: "example-1", Symbol: "AAPL", Side: brokerclient.SideBuy, OrderType: brokerclient.OrderTypeLimit,
		SecurityType: brokerclient.SecurityTypeStock, TimeInForce: brokerclient.TimeInForceDay,
		OrderQuantity: 10, LimitPrice: &limit, Route: "SMART",
	}
	w := f.Watch(req.ClientOrderID)
	defer w.Close()
	placed, _, err := c.Orders.Place(ctx, "LV100001", req)
	if err != nil {
		log.Fatal(err)
	}
	w.Observe(placed)
	for {
		o, err := w.Next(ctx)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(o.OrderStatus)
		if o.IsTerminal() {
			break
		}
	}
	// Output:
	// PendingNew
	// Accepted
	// Filled
}
