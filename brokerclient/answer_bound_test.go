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

// endlessAnswer is a broker that answers every request 200 with open
// followed by 1.5 GiB of one 64 KiB chunk, streamed without a
// Content-Length, until the client goes. It counts the requests and the
// bytes written; done receives when an answer has stopped.
type endlessAnswer struct {
	client   *brokerclient.Client
	requests atomic.Int32
	written  atomic.Int64
	done     chan struct{}
}

const endlessTotal = 3 << 29 // 1.5 GiB

// endlessPage is a ledger page of rows whose notes are 128 KiB long,
// without end: over the answer's byte bound after 512 rows, each row
// within its own bound and the rows within their cap.
func endlessPage(t *testing.T) *endlessAnswer {
	return newEndlessAnswer(t, `{"cashHistory":[`, []byte(ledgerRow(0, 128<<10)+","))
}

// endlessNote is a ledger page whose first row's note never ends: a row
// over its byte bound.
func endlessNote(t *testing.T) *endlessAnswer {
	return newEndlessAnswer(t, `{"cashHistory":[{"note":"`, bytes.Repeat([]byte("x"), 64<<10))
}

func newEndlessAnswer(t *testing.T, open string, chunk []byte) *endlessAnswer {
	t.Helper()
	e := &endlessAnswer{done: make(chan struct{}, 1)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.requests.Add(1)
		defer func() {
			select {
			case e.done <- struct{}{}:
			default: // a request too many: the test fails on the count
			}
		}()
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		n, _ := w.Write([]byte(open))
		e.written.Add(int64(n))
		w.(http.Flusher).Flush() // chunked: no Content-Length to refuse early
		for e.written.Load() < endlessTotal && r.Context().Err() == nil {
			n, err := w.Write(chunk)
			e.written.Add(int64(n))
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
	e.client = c
	return e
}

// A broker whose success body never ends (1.5 GiB of ledger rows of
// 128 KiB, streamed without a Content-Length) gets a typed
// ErrAnswerTooLarge once the client has read its 64 MiB bound: the client
// stops reading there (the server writes far less than 1.5 GiB before the
// connection goes), does not ask again, and the process's memory stays
// under 300 MB. Not parallel: the memory measured is the whole process's.
func TestOversizedAnswerStopsAtTheBound(t *testing.T) {
	e := endlessPage(t)
	_, _, err := e.client.Ledger.List(t.Context(), "LV100001", time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC), nil)
	var tooLarge *brokerclient.AnswerTooLargeError
	if !errors.Is(err, brokerclient.ErrAnswerTooLarge) || !errors.As(err, &tooLarge) {
		t.Fatalf("err = %v, want an *AnswerTooLargeError", err)
	}
	if tooLarge.Limit != 64<<20 || tooLarge.Row {
		t.Errorf("Limit = %d, Row %v; want the answer's 64 MiB", tooLarge.Limit, tooLarge.Row)
	}
	<-e.done
	if w := e.written.Load(); w >= endlessTotal {
		t.Errorf("the server wrote all %d bytes: the client read past its bound", w)
	}
	if n := e.requests.Load(); n != 1 {
		t.Errorf("%d requests, want 1: an oversized answer is not asked for again", n)
	}
	if peak := goMemory(); peak >= 300e6 {
		t.Errorf("the runtime holds %d MB, want under 300 MB", peak/1e6)
	}
	t.Logf("server wrote %d MiB before the client went; the runtime holds %d MB", e.written.Load()>>20, goMemory()/1e6)
}

// A write that is never sent twice (a locate quote) and whose answer is
// over a bound (of bytes: rows that never end; of rows: `{},{},…`)
// was received by the broker but not read: it is an ErrOutcomeUnknown,
// settled by its client id, as well as the bound's error, and it is sent
// once.
func TestOversizedAnswerToAQuoteIsOutcomeUnknown(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		e     func(t *testing.T) *endlessAnswer
		bound error
	}{
		{"bytes", endlessPage, brokerclient.ErrAnswerTooLarge},
		{"rows", func(t *testing.T) *endlessAnswer {
			return newEndlessAnswer(t, `[`, bytes.Repeat([]byte("{},"), 16<<10))
		}, brokerclient.ErrTooManyRows},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := tc.e(t)
			_, _, err := e.client.Locates.Quote(t.Context(), brokerclient.QuoteRequest{Account: "LV100001", Symbol: "HTBX", Quantity: 100, QuoteReqID: "q-big"})
			var unknown *brokerclient.OutcomeUnknownError
			if !errors.As(err, &unknown) || unknown.ClientID != "q-big" || !errors.Is(err, tc.bound) {
				t.Fatalf("err = %v, want an *OutcomeUnknownError for q-big wrapping %v", err, tc.bound)
			}
			<-e.done
			if n := e.requests.Load(); n != 1 {
				t.Errorf("%d quotes sent, want 1", n)
			}
		})
	}
}

// A row that never ends (a ledger row's note, spec: Resources, "Cash
// ledger row") is an ErrAnswerTooLarge once it passes its own bound of
// 1 MiB: the client stops reading there, long before the answer's own
// bound (the rows are decoded one at a time: a row is what it holds).
func TestOversizedRowStopsAtItsBound(t *testing.T) {
	t.Parallel()
	e := endlessNote(t)
	_, _, err := e.client.Ledger.List(t.Context(), "LV100001", time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC), nil)
	var tooLarge *brokerclient.AnswerTooLargeError
	if !errors.As(err, &tooLarge) || tooLarge.Limit != 1<<20 || !tooLarge.Row {
		t.Fatalf("err = %v, want an *AnswerTooLargeError of a row over 1 MiB", err)
	}
	if !strings.Contains(err.Error(), "a row of the broker's answer exceeded 1048576 bytes") {
		t.Errorf("message %q does not say a row passed 1 MiB", err)
	}
	<-e.done
	if w := e.written.Load(); w >= 64<<20 {
		t.Errorf("the server wrote %d bytes: the client read on past the row's bound", w)
	}
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

// The streams: a message longer than the bound (a P&L
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
