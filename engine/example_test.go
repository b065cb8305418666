package engine_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/workflow"
)

// startExample runs the simulator's default scenario and an engine on its
// live account LV100001, on one clock running 50 times faster than the wall
// clock so that the 30-second offer windows pass quickly. Against the real
// broker, pass its address and your keys, and leave Clock out.
func startExample() (*engine.Engine, func()) {
	clk := clock.NewScaled(time.Date(2026, 11, 24, 14, 30, 0, 0, time.UTC), 50)
	sc := brokersim.DefaultScenario()
	sim, err := brokersim.New(sc, brokersim.WithClock(clk))
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(sim)
	client, err := brokerclient.NewClient(brokerclient.WithBaseURL(srv.URL),
		brokerclient.WithCredentials(sc.Keys[0].KeyID, sc.Keys[0].Secret), brokerclient.WithClock(clk))
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "locator-example")
	if err != nil {
		log.Fatal(err)
	}
	st, err := store.Open(context.Background(), filepath.Join(dir, "locator.db"), clk)
	if err != nil {
		log.Fatal(err)
	}
	e, err := engine.New(engine.Config{Client: client, Store: st, Clock: clk, Account: "LV100001"})
	if err != nil {
		log.Fatal(err)
	}
	if err := e.Start(context.Background()); err != nil {
		log.Fatal(err)
	}
	return e, func() { e.Close(); st.Close(); srv.Close(); os.RemoveAll(dir) }
}

// Locate 300 shares under a price cap: with nobody to ask, the engine takes
// an offer within the cap and declines (cancels) any other.
func ExampleEngine_Locate() {
	e, stop := startExample()
	defer stop()
	ctx := context.Background()

	h, err := e.Locate(ctx, engine.Request{Symbol: "HTBX", Quantity: 300,
		Policy: engine.Policy{MaxPrice: decimal.RequireFromString("0.02")}})
	if err != nil {
		log.Fatal(err)
	}
	w, err := h.Wait(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(w.State, w.Quantity, "shares at", w.Price, "located:", w.Located())
	// Output: filled 300 shares at 0.015 located: true
}

// Locate then short: the engine makes sure the shares are located, checks
// the sizing, places the sell under a clientOrderId it recorded first, and
// follows the order to a final or working state. The fat-finger guard
// measures the limit against the symbol's reference price: the trader's
// own here, since the day's first short has no position or fill to go by.
func ExampleEngine_Short() {
	e, stop := startExample()
	defer stop()
	ctx := context.Background()

	res, err := e.Short(ctx, account.ShortRequest{
		Symbol: "HTBX", Quantity: 100, Limit: decimal.NewFromInt(12),
		Policy: engine.Policy{MaxPrice: decimal.RequireFromString("0.02")},
		Guard:  workflow.Guard{RefPrice: decimal.RequireFromString("12.50")},
	}, engine.ShortAnswers{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("locate:", res.Locate.State)
	fmt.Println("order:", res.Order.State, res.Order.OrderStatus, res.Order.Executed)
	// Output:
	// locate: filled
	// order: filled Filled 100
}

// Credit back what is not used: located shares of a Locate row are sold back
// to the broker, and the workflow ends when the credit clears.
func ExampleEngine_CreditBack() {
	e, stop := startExample()
	defer stop()
	ctx := context.Background()

	h, err := e.Locate(ctx, engine.Request{Symbol: "HTBX", Quantity: 500, Policy: engine.Policy{AutoAccept: true}})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := h.Wait(ctx); err != nil {
		log.Fatal(err)
	}
	cb, err := e.CreditBack(ctx, engine.CreditBackRequest{Symbol: "HTBX", Shares: 200, Type: brokercode.LocateTypeLocate})
	if err != nil {
		log.Fatal(err)
	}
	w, err := cb.Wait(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(w.State, w.Quantity, w.LocateType)
	// Output: credited 200 Locate
}
