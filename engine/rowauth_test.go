package engine_test

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/internal/store/storetest"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// rowKey is the key an engine on c's credentials MACs its rows with.
func rowKey(t *testing.T, c *brokerclient.Client) workflow.RowKey {
	t.Helper()
	k, err := c.RowKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// forgedPolicy is what the red team writes: any price, taken at once.
const forgedPolicy = `{"maxPrice":"9999","maxCost":"0","autoAccept":true,"allowSingleUse":false}`

// The red team's finding (SECURITY.md, "Database write"): a writer of the
// database without the API secret inserts a locate workflow (requested,
// maxPrice 9999, auto-accept), raises the maxPrice of an honest one by SQL
// and adds an order, and the owner would quote, accept and fill them at its
// next start. Each is refused now: the broker is sent nothing for it (spec
// "Short locates": no quote, accept, or order lookup names it), it stays
// as written, and it is listed as refused for `locator status`; the honest
// row the previous owner left is still served, before and after another
// restart, on SQLite and on Postgres (docs/design.md rule 10).
func TestRowsWrittenWithoutTheSecretAreRefused(t *testing.T) {
	t.Parallel()
	for _, driver := range storetest.Drivers {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			b := setup(t, setupOpt{driver: driver, noStart: true, scenario: func(sc *brokersim.Scenario) {
				for i := range 5 {
					sc.Pools = append(sc.Pools, brokersim.ScenarioPool{Symbol: fmt.Sprintf("HTB%02d", i), LocateType: 1, Shares: 10000,
						Price: brokersim.Dec(decimal.RequireFromString("0.01"))})
				}
			}})
			ctx := t.Context()
			key := rowKey(t, b.sim.Client(t, b.sim.Live))
			// The previous owner's rows, MACed as its engine made them.
			honest := func(id, symbol, maxPrice string) *workflow.Workflow {
				w := &workflow.Workflow{ID: id, Kind: states.Locate, Account: "LV100001", Symbol: symbol, Requested: 100,
					QuoteReqID: uuid.NewString(), State: states.Requested,
					Policy: workflow.Policy{MaxPrice: decimal.RequireFromString(maxPrice), AutoAccept: true}}
				w.MAC = key.Workflow(w)
				if err := b.store.Create(ctx, w); err != nil {
					t.Fatal(err)
				}
				return w
			}
			served := honest("wf-honest", "HTB00", "0.05")
			tampered := honest("wf-tampered", "HTB01", "0.005") // would be declined at 0.01
			db := rawDB(t, driver, b.dbPath)
			for _, q := range []string{
				`UPDATE workflows SET policy = '` + forgedPolicy + `' WHERE id = 'wf-tampered'`,
				`INSERT INTO workflows (id, kind, account, symbol, requested, quantity, quote_req_id, state, policy, locate_type, accepted_id,
					price, legs, offered_at, expires_at, sent_at, reason, created_at, updated_at, version, asker, cause, lost_quote_req_id, resends)
				SELECT 'wf-forged', kind, account, 'HTB02', 500, 0, 'q-forged', 'requested', '` + forgedPolicy + `', locate_type, accepted_id,
					price, legs, offered_at, expires_at, sent_at, '', created_at, updated_at, 1, 'red team', cause, '', 0
				FROM workflows WHERE id = 'wf-honest'`,
			} {
				if _, err := db.ExecContext(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			// An order written with locator's own code but no key pair,
			// old enough for the next owner to look it up.
			if err := b.store.CreateOrder(ctx, &workflow.Order{ClientOrderID: "co-forged", Account: "LV100001", Symbol: "HTB03", Side: "Sell",
				OpenClose: "Open", OrderType: "Market", TimeInForce: "Day", Quantity: 5000}); err != nil {
				t.Fatal(err)
			}
			b.sim.Advance(2 * time.Minute)

			for restart := range 2 {
				b.engine = b.start(t, nil)
				if restart == 0 {
					if got := b.wait(t, served.ID); got.State != states.Filled {
						t.Fatalf("the honest row: %s (%s), want filled", got.State, got.Reason)
					}
				} else {
					// The honest row the engine itself made is served too.
					w := b.locate(t, "HTB04", 100, workflow.Policy{MaxPrice: decimal.RequireFromString("0.05"), AutoAccept: true})
					if stored, err := b.store.Get(ctx, w.ID); err != nil || w.State != states.Filled || !key.VerifyWorkflow(stored) {
						t.Fatalf("a locate after the restart: %s, %v; want filled, its row MACed", w.State, err)
					}
				}
				if n, active := b.engine.Queued(), b.engine.Active(); n != 0 || len(active) != 0 {
					t.Fatalf("start %d: %d queued, %d open; want the refused rows neither queued nor open", restart, n, len(active))
				}
				for _, r := range b.sim.Sim.Requests() {
					for _, x := range []string{"q-forged", tampered.QuoteReqID, "co-forged", "HTB01", "HTB02", "HTB03"} {
						if strings.Contains(r.Path+"?"+r.Query+" "+r.Body, x) {
							t.Fatalf("start %d: the broker was sent %s %s?%s %s, naming %s", restart, r.Method, r.Path, r.Query, r.Body, x)
						}
					}
				}
				refused, err := b.store.Refused(ctx)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, r := range refused {
					got = append(got, r.Kind+" "+r.ID+" "+r.Symbol)
				}
				if want := "order co-forged HTB03,workflow wf-forged HTB02,workflow wf-tampered HTB01"; strings.Join(got, ",") != want {
					t.Fatalf("start %d: refused %q, want %q", restart, strings.Join(got, ","), want)
				}
				for _, id := range []string{"wf-forged", "wf-tampered"} {
					if w, err := b.store.Get(ctx, id); err != nil || w.State != states.Requested || w.Version != 1 {
						t.Fatalf("start %d: %s is %+v, %v; want it left as written", restart, id, w, err)
					}
				}
				b.engine.Close()
			}
		})
	}
}

// rawDB is the database at dsn as a writer without locator sees it.
func rawDB(t *testing.T, driver, dsn string) *sql.DB {
	t.Helper()
	name := map[string]string{"sqlite": "sqlite", "postgres": "pgx"}[driver]
	db, err := sql.Open(name, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
