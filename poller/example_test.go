package poller_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"
	"time"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/poller"
)

// A poller follows a quote to its offer: after the write (Wrote) and the
// broker's answer (Quoted), its history reads are spaced for the quote's
// settle window, and each read's new or changed rows reach Rows. Here the
// simulator's default scenario runs on a clock 50 times faster than the
// wall clock; against the real broker, pass its address and your keys and
// leave Clock out.
func Example() {
	clk := clock.NewScaled(time.Date(2026, 11, 24, 14, 30, 0, 0, time.UTC), 50)
	sc := brokersim.DefaultScenario()
	sim, err := brokersim.New(sc, brokersim.WithClock(clk))
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(sim)
	defer srv.Close()
	client, err := brokerclient.NewClient(brokerclient.WithBaseURL(srv.URL),
		brokerclient.WithCredentials(sc.Keys[0].KeyID, sc.Keys[0].Secret), brokerclient.WithClock(clk))
	if err != nil {
		log.Fatal(err)
	}

	offered := make(chan brokerclient.HistoryRow, 1)
	p := poller.New(poller.Config{
		Account: "LV100001", Source: poller.ClientSource(client), Clock: clk,
		Rows: func(rows []brokerclient.HistoryRow) {
			for _, r := range rows {
				if r.LocateStatus == brokercode.LocateStatusOffered {
					select {
					case offered <- r:
					default:
					}
				}
			}
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go p.Run(ctx)

	p.Wrote()
	if _, _, err := client.Locates.Quote(ctx, brokerclient.QuoteRequest{Account: "LV100001", Symbol: "HTBX", Quantity: 300, QuoteReqID: "example-1"}); err != nil {
		log.Fatal(err)
	}
	p.Quoted(clk.Now())
	r := <-offered
	fmt.Println(r.QuoteReqID, r.Symbol, r.LocateShares, r.LocateStatus, "at", r.LocatePrice)
	// Output: example-1 HTBX 300 65 Offered at 0.015
}
