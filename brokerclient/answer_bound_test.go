package brokerclient_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

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

// Issue 28 item 5, the streams: a message longer than the bound (a P&L
// snapshot streamed past 64 MiB) is an ErrAnswerTooLarge once the bound is
// read, and it stops the watch for good: reconnecting would get the same
// snapshot, so the server sees one connection.
func TestOversizedStreamMessageStopsTheWatch(t *testing.T) {
	t.Parallel()
	var conns atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conns.Add(1)
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ctx := r.Context()
		ws.Write(ctx, websocket.MessageText, []byte(`{"@system":true,"status":"PENDING_AUTH","message":"Send authenticate message"}`))
		if _, _, err := ws.Read(ctx); err != nil { // the key pair
			return
		}
		ws.Write(ctx, websocket.MessageText, []byte(`{"@system":true,"status":"CONNECTED","message":"Connected"}`))
		if _, _, err := ws.Read(ctx); err != nil { // the subscribe
			return
		}
		mw, err := ws.Writer(ctx, websocket.MessageText)
		if err != nil {
			return
		}
		io.WriteString(mw, `{"action":"init","target":"pnlReturn","account":"LV100001","pnlReturn":{"note":"`)
		pad := bytes.Repeat([]byte("x"), 64<<10)
		for range (128 << 20) / len(pad) {
			if _, err := mw.Write(pad); err != nil {
				return
			}
		}
		io.WriteString(mw, `"}}`)
		mw.Close()
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
	pw, err := c.Streams.WatchPnL(t.Context(), []string{"LV100001"}, brokerclient.WithPing(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	err = pw.Wait(ctx)
	var tooLarge *brokerclient.AnswerTooLargeError
	if !errors.As(err, &tooLarge) || tooLarge.Limit != 64<<20 {
		t.Fatalf("Wait: %v, want an *AnswerTooLargeError at 64 MiB", err)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1 (no reconnection)", n)
	}
}
