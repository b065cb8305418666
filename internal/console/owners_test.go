package console

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/locatorhq/locator"
)

// `locator status` says which accounts a serve lists but
// cannot serve, from its standby record: why, since when and when it is
// tried again (table), and a "not-served" record with the same fields
// (JSON); a daemon that only waits to own an account still reads as
// standing by.
func TestOwnersSayWhatAServeCannotServe(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 27, 14, 0, 0, 0, time.UTC)
	sbs := []locator.Standby{
		{Account: "DK00001", PID: 7, Host: "desk", Since: at, NotServed: "account DK00001 not found for these keys", NotServedSince: at,
			Retry: at.Add(30 * time.Second)},
		{Account: "DK00002", PID: 7, Host: "desk", Since: at},
	}
	var table bytes.Buffer
	Owners(Printer{W: &table, Format: Table}, nil, sbs, at)
	lines := strings.Split(strings.TrimSpace(table.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "account DK00001: not served: pid 7 on desk serves it but cannot now: account DK00001 not found for these keys") ||
		!strings.Contains(lines[0], "tried again at") || !strings.Contains(lines[1], "account DK00002: pid 7 on desk stands by") {
		t.Errorf("status printed %q; want DK00001 not served and why, DK00002 standing by", table.String())
	}
	var js bytes.Buffer
	Owners(Printer{W: &js, Format: JSON}, nil, sbs[:1], at)
	var rec struct {
		Type, Account, Reason string
		PID                   int
		Retry                 time.Time
	}
	if err := json.Unmarshal(js.Bytes(), &rec); err != nil {
		t.Fatalf("%v in %q", err, js.String())
	}
	if rec.Type != "not-served" || rec.Account != "DK00001" || rec.PID != 7 || !strings.Contains(rec.Reason, "not found") || !rec.Retry.Equal(at.Add(30*time.Second)) {
		t.Errorf("JSON record %+v; want not-served, DK00001, pid 7, the reason and the retry", rec)
	}
}

// `locator status` lists the rows an owner refused (their MAC did not
// verify), the writer's text made safe for the terminal, and a "refused"
// record in JSON.
func TestStatusSaysWhichRowsWereRefused(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 27, 14, 0, 0, 0, time.UTC)
	rows := []locator.RefusedRow{{Account: "LV100001", Kind: "workflow", ID: "wf-forged\x1b[2J", Symbol: "HTBX", Reason: "its row does not verify", At: at}}
	var table bytes.Buffer
	Refused(Printer{W: &table, Format: Table}, rows)
	if got := table.String(); !strings.Contains(got, `account LV100001: refused workflow wf-forged\x1b[2J (HTBX) since `) ||
		!strings.HasSuffix(got, ": its row does not verify\n") {
		t.Errorf("status printed %q; want the refused row, its escape shown, and why", got)
	}
	var js bytes.Buffer
	Refused(Printer{W: &js, Format: JSON}, rows)
	var rec struct{ Type, Account, Kind, ID, Reason string }
	if err := json.Unmarshal(js.Bytes(), &rec); err != nil || rec.Type != "refused" || rec.ID != rows[0].ID || rec.Kind != "workflow" || rec.Reason == "" {
		t.Errorf("status -o json printed %s (%v); want a refused record", js.String(), err)
	}
}
