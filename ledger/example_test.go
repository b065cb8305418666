package ledger_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/ledger"
)

// How much HTBX can the account short at 12.50, and what would 500 shares
// take? Size reads the account, its located inventory, the easy-to-borrow
// list and today's working sells; without a store (nil) it knows no last
// offer price, so it says what to locate but not what that would cost.
// Here against the simulator's default scenario; against the real broker,
// pass its address and your keys and leave the clock out.
func ExampleSize() {
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

	s, err := ledger.Size(context.Background(), client, nil, "LV100001", "HTBX", decimal.RequireFromString("12.50"), 500)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("shortable now:", s.Shortable, "bound by", s.Binding)
	fmt.Println("to reach 500:", s.LotsToLocate, "lots to locate")
	// Output:
	// shortable now: 0 bound by located inventory
	// to reach 500: 5 lots to locate
}
