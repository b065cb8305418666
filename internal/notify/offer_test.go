package notify_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/notify"
	"github.com/locatorhq/locator/internal/notifytest"
)

var offerEvent = notify.Event{
	Kind: notify.OfferWaiting, Account: "LV100001", Time: time.Date(2026, 11, 25, 14, 30, 0, 0, time.UTC),
	Detail: "locate offer waits", WorkflowIDs: []string{"wf-1"},
	Offer: &notify.Offer{WorkflowID: "wf-1", Symbol: "HTBX", Shares: 200, PricePerShare: "0.0150",
		Total: "3.00", LocateType: "Locate", Deadline: time.Date(2026, 11, 25, 14, 30, 25, 0, time.UTC),
		ApproveURL: "https://phone.example/link/APPROVE-TOKEN", DeclineURL: "https://phone.example/link/DECLINE-TOKEN"},
}

// An offer reaches each webhook that asks for offers, in its format: the
// JSON event with both links (its figures and type as the CLI gives them:
// "0.0150", "3.00", "Locate"), a Slack text linking both, and an ntfy
// publish whose Actions header holds a view button per link. A webhook
// that names no events (job failures and fee problems by default) is not
// told of it, and one told only of offers is not told of a failed job.
func TestNotifyOfferFormats(t *testing.T) {
	t.Parallel()
	rcv := notifytest.NewReceiver(t)
	offers := []notify.Kind{notify.OfferWaiting}
	n, err := notify.New(notify.Config{
		Webhooks: []notify.Webhook{
			{URLEnv: "JSON", Format: notify.FormatJSON, Events: offers},
			{URLEnv: "SLACK", Format: notify.FormatSlack, Events: offers},
			{URLEnv: "NTFY", Format: notify.FormatNtfy, Events: offers},
			{URLEnv: "JOBS", Format: notify.FormatJSON},
		},
		LookupEnv: env(map[string]string{"JSON": rcv.URL + "/json", "SLACK": rcv.URL + "/slack", "NTFY": rcv.URL + "/locator-offers", "JOBS": rcv.URL + "/jobs"}),
		Clock:     clock.NewFake(offerEvent.Time),
	})
	if err != nil {
		t.Fatal(err)
	}
	n.Notify(offerEvent)
	n.Notify(event) // a failed job: only JOBS wants it
	n.Close(t.Context())
	byPath := map[string]notifytest.Post{}
	for _, p := range rcv.Received() {
		if _, dup := byPath[p.Path]; dup {
			t.Fatalf("%s told twice", p.Path)
		}
		byPath[p.Path] = p
	}
	if len(byPath) != 4 {
		t.Fatalf("told %d webhooks, want 4: %v", len(byPath), byPath)
	}
	var jobs map[string]any
	if err := json.Unmarshal(byPath["/jobs"].Body, &jobs); err != nil || jobs["event"] != "job_failed" {
		t.Errorf("the jobs webhook got %s (%v), want the failed job alone", byPath["/jobs"].Body, err)
	}

	want := map[string]any{
		"event": "offer_waiting", "account": "LV100001", "time": "2026-11-25T14:30:00Z", "detail": "locate offer waits",
		"workflowIds": []any{"wf-1"},
		"offer": map[string]any{"workflowId": "wf-1", "symbol": "HTBX", "shares": float64(200), "pricePerShare": "0.0150", "total": "3.00",
			"locateType": "Locate", "deadline": "2026-11-25T14:30:25Z",
			"approveUrl": "https://phone.example/link/APPROVE-TOKEN", "declineUrl": "https://phone.example/link/DECLINE-TOKEN"},
	}

	wantText := ":bell: locator: locate offer waits: 200 HTBX at 0.0150 a share (3.00)\n" +
		"account LV100001, workflow wf-1: answer by 09:30:25 ET\n" +
		"<https://phone.example/link/APPROVE-TOKEN|Approve> · <https://phone.example/link/DECLINE-TOKEN|Decline>"
	checkBodies(t, byPath["/json"], byPath["/slack"], want, wantText)

	nt := byPath["/locator-offers"]
	for k, v := range map[string]string{
		"Content-Type": "text/plain; charset=utf-8",
		"Title":        "locator: locate offer waits: 200 HTBX at 0.0150 a share (3.00)",
		"Priority":     "high",
		"Tags":         "bell",
		"Actions":      "view, Approve, https://phone.example/link/APPROVE-TOKEN; view, Decline, https://phone.example/link/DECLINE-TOKEN",
	} {
		if got := nt.Header.Get(k); got != v {
			t.Errorf("ntfy %s: %q, want %q", k, got, v)
		}
	}
	if wantBody := "locate offer waits: 200 HTBX at 0.0150 a share (3.00)\naccount LV100001, workflow wf-1: answer by 09:30:25 ET"; string(nt.Body) != wantBody {
		t.Errorf("ntfy body %q, want %q", nt.Body, wantBody)
	}
}
