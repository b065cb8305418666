package brokerclient_test

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/locatorhq/locator/brokerclient"
)

// ledgerRow is one cash ledger row as the service sends it (spec: "Cash
// ledger row"), its note padded to notePad bytes.
func ledgerRow(i, notePad int) string {
	note := fmt.Sprintf("Locate fee HTBX %d shares @ 0.015", i)
	note += strings.Repeat(".", max(0, notePad-len(note)))
	return fmt.Sprintf(`{"accountId":"LV100001","cashType":"Locate Fees","currency":"USD","deposit":0,"withdraw":7.50,"entryDate":"2026-11-25T00:00:00","note":%q}`, note)
}

// goMemory is the memory the Go runtime has obtained from the system
// (runtime.MemStats.Sys): it grows with the heap's peak and is not given
// back, so read after a call it bounds the peak of that call. Unlike the
// process's peak RSS it leaves out the race detector's shadow memory.
func goMemory() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.Sys
}

// Issue 28 item 5: a broker whose success body never ends (1.5 GiB of
// ledger rows, streamed without a Content-Length) gets a typed
// ErrAnswerTooLarge once the client has read its 64 MiB bound: the client
// stops reading there (the server writes far less than 1.5 GiB before the
// connection goes) and the process's memory stays under 300 MB. Not
// parallel: the memory measured is the whole process's.
func TestOversizedAnswerStopsAtTheBound(t *testing.T) {
	const total = 3 << 29 // 1.5 GiB
	var chunk bytes.Buffer
	for i := 0; chunk.Len() < 64<<10; i++ {
		chunk.WriteString(ledgerRow(i, 0) + ",")
	}
	var written atomic.Int64
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(done)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		n, _ := w.Write([]byte(`{"cashHistory":[`))
		written.Add(int64(n))
		w.(http.Flusher).Flush() // chunked: no Content-Length to refuse early
		for written.Load() < total && r.Context().Err() == nil {
			n, err := w.Write(chunk.Bytes())
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	c, err := brokerclient.NewClient(
		brokerclient.WithBaseURL(srv.URL),
		brokerclient.WithCredentials("FIXTUREKEY", "fixture-secret"),
		brokerclient.WithHTTPClient(srv.Client()),
		brokerclient.WithoutPacing(),
	)
	if err != nil {
		t.Fatal(err)
	}

	_, _, err = c.Ledger.List(t.Context(), "LV100001", time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC), nil)
	var tooLarge *brokerclient.AnswerTooLargeError
	if !errors.Is(err, brokerclient.ErrAnswerTooLarge) || !errors.As(err, &tooLarge) {
		t.Fatalf("err = %v, want an *AnswerTooLargeError", err)
	}
	if tooLarge.Limit != 64<<20 {
		t.Errorf("Limit = %d, want 64 MiB", tooLarge.Limit)
	}
	<-done
	if w := written.Load(); w >= total {
		t.Errorf("the server wrote all %d bytes: the client read past its bound", w)
	}
	if peak := goMemory(); peak >= 300e6 {
		t.Errorf("the runtime holds %d MB, want under 300 MB", peak/1e6)
	}
	t.Logf("server wrote %d MiB before the client went; the runtime holds %d MB", written.Load()>>20, goMemory()/1e6)
}

// The bound leaves room for the largest legitimate answer: a cash ledger
// page at the service's 10,000-row maximum (spec: Limits, "Cash ledger page
// size"), each row's note padded to 1 KiB (about 11 MiB in all), decodes
// whole.
func TestLargeAnswerUnderTheBoundDecodes(t *testing.T) {
	t.Parallel()
	var body bytes.Buffer
	body.WriteString(`{"cashHistory":[`)
	for i := range brokerclient.MaxLedgerPageSize {
		if i > 0 {
			body.WriteString(",")
		}
		body.WriteString(ledgerRow(i, 1<<10))
	}
	fmt.Fprintf(&body, `],"pagination":{"currentLimit":10000,"currentOffset":0,"totalRecords":%d}}`, brokerclient.MaxLedgerPageSize)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Write(body.Bytes())
	}))
	t.Cleanup(srv.Close)
	c, err := brokerclient.NewClient(
		brokerclient.WithBaseURL(srv.URL),
		brokerclient.WithCredentials("FIXTUREKEY", "fixture-secret"),
		brokerclient.WithHTTPClient(srv.Client()),
		brokerclient.WithoutPacing(),
	)
	if err != nil {
		t.Fatal(err)
	}
	page, _, err := c.Ledger.List(t.Context(), "LV100001", time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC), &brokerclient.CashListOptions{Limit: brokerclient.MaxLedgerPageSize})
	if err != nil {
		t.Fatalf("a %d MiB page: %v", body.Len()>>20, err)
	}
	if got := len(page.CashHistory); got != brokerclient.MaxLedgerPageSize {
		t.Fatalf("%d rows, want %d", got, brokerclient.MaxLedgerPageSize)
	}
	if last := page.CashHistory[len(page.CashHistory)-1].Note; !strings.HasPrefix(last, "Locate fee HTBX 9999 shares") || len(last) != 1<<10 {
		t.Errorf("last note = %.40q… (%d bytes), want row 9999's, 1 KiB", last, len(last))
	}
}
