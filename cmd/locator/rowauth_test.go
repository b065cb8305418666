package main

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/locatorhq/locator/internal/store"
)

// The red team's repro of SECURITY.md "Database rows", end to end: a writer
// of the database without the API secret inserts a locate (requested,
// maxPrice 9999, auto-accept) with SQL; the next owner (here `locator
// resume`) sends the broker nothing for it (spec "Short locates": no
// quote), leaves it as written, and `locator status` says it was refused,
// in a line and as a "refused" record. Before the row MACs (docs/design.md
// rule 10) the owner quoted, accepted and filled it.
func TestOwnerRefusesARowWrittenWithoutTheSecret(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	ctx := t.Context()
	st, err := store.Open(ctx, b.env["LOCATOR_DB"], b.clk) // the database, as an earlier run left it
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	db, err := sql.Open("sqlite", b.env["LOCATOR_DB"])
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := b.clk.Now().UTC().Format("2006-01-02T15:04:05.000000000Z")
	if _, err := db.ExecContext(ctx, `INSERT INTO workflows (id, kind, account, symbol, requested, quantity, quote_req_id, state, policy, created_at, updated_at)
		VALUES ('wf-redteam', 'locate', 'LV100001', 'HTBX', 500, 0, 'q-redteam', 'requested',
			'{"maxPrice":"9999","maxCost":"0","autoAccept":true,"allowSingleUse":false}', ?, ?)`, now, now); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := b.MustRunMain(t, nil, "resume")
	if code != 0 || !strings.Contains(out, "resumed 0 workflow(s)") {
		t.Fatalf("resume: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	for _, w := range b.writes() {
		t.Errorf("the broker was sent %s for a row nobody with the secret wrote", w)
	}
	code, out, errOut = b.MustRunMain(t, nil, "status")
	if code != 0 || !strings.Contains(out, "account LV100001: refused workflow wf-redteam (HTBX) since ") || !strings.Contains(out, "its row does not verify") {
		t.Fatalf("status: exit %d\nstdout %s\nstderr %s; want wf-redteam refused", code, out, errOut)
	}
	code, out, _ = b.MustRunMain(t, nil, "status", "-o", "json")
	if code != 0 || !strings.Contains(out, `"type":"refused"`) || !strings.Contains(out, `"id":"wf-redteam"`) {
		t.Fatalf("status -o json: exit %d\n%s; want a refused record", code, out)
	}
	var state string
	if err := db.QueryRowContext(ctx, `SELECT state FROM workflows WHERE id = 'wf-redteam'`).Scan(&state); err != nil || state != "requested" {
		t.Fatalf("the forged row is %q (%v); want it left as written", state, err)
	}
}
