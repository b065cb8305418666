package notify_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/notify"
)

var offerEvent = notify.Event{
	Kind: notify.OfferWaiting, Account: "LV100001", Time: time.Date(2026, 11, 25, 14, 30, 0, 0, time.UTC),
	Detail: "locate offer waits", WorkflowIDs: []string{"wf-1"},
	Offer: &notify.Offer{WorkflowID: "wf-1", Symbol: "HTBX", Shares: 200, PricePerShare: "0.0150",
		Total: "3.00", LocateType: "Locate", Deadline: time.Date(2026, 11, 25, 14, 30, 25, 0, time.UTC),
		ApproveURL: "https://phone.example/link/APPROVE-TOKEN", DeclineURL: "https://phone.example/link/DECLINE-TOKEN"},
}

// post is one request a webhook received, with its headers (an ntfy-style
// publish says most in them).
type post struct {
	path   string
	header http.Header
	body   string
}

// An offer reaches each webhook that asks for offers, in its format: the
// JSON event with both links (its figures and type as the CLI gives them:
// "0.0150", "3.00", "Locate"; issue 30), a Slack text linking both, and an ntfy
// publish whose Actions header holds a view button per link. A webhook
// that names no events (job failures and fee problems by default) is not
// told of it, and one told only of offers is not told of a failed job.
func TestNotifyOfferFormats(t *testing.T) {
	t.Parallel()
	got := make(chan post, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- post{r.URL.Path, r.Header.Clone(), string(body)}
	}))
	t.Cleanup(srv.Close)
	offers := []notify.Kind{notify.OfferWaiting}
	n, err := notify.New(notify.Config{
		Webhooks: []notify.Webhook{
			{URLEnv: "JSON", Format: notify.FormatJSON, Events: offers},
			{URLEnv: "SLACK", Format: notify.FormatSlack, Events: offers},
			{URLEnv: "NTFY", Format: notify.FormatNtfy, Events: offers},
			{URLEnv: "JOBS", Format: notify.FormatJSON},
		},
		LookupEnv: env(map[string]string{"JSON": srv.URL + "/json", "SLACK": srv.URL + "/slack", "NTFY": srv.URL + "/locator-offers", "JOBS": srv.URL + "/jobs"}),
		Clock:     clock.NewFake(offerEvent.Time),
	})
	if err != nil {
		t.Fatal(err)
	}
	n.Notify(offerEvent)
	n.Notify(event) // a failed job: only JOBS wants it
	n.Close(t.Context())
	close(got)
	byPath := map[string]post{}
	for p := range got {
		if _, dup := byPath[p.path]; dup {
			t.Fatalf("%s told twice", p.path)
		}
		byPath[p.path] = p
	}
	if len(byPath) != 4 {
		t.Fatalf("told %d webhooks, want 4: %v", len(byPath), byPath)
	}
	var jobs map[string]any
	if err := json.Unmarshal([]byte(byPath["/jobs"].body), &jobs); err != nil || jobs["event"] != "job_failed" {
		t.Errorf("the jobs webhook got %s (%v), want the failed job alone", byPath["/jobs"].body, err)
	}

	var j map[string]any
	if err := json.Unmarshal([]byte(byPath["/json"].body), &j); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"event": "offer_waiting", "account": "LV100001", "time": "2026-11-25T14:30:00Z", "detail": "locate offer waits",
		"workflowIds": []any{"wf-1"},
		"offer": map[string]any{"workflowId": "wf-1", "symbol": "HTBX", "shares": float64(200), "pricePerShare": "0.0150", "total": "3.00",
			"locateType": "Locate", "deadline": "2026-11-25T14:30:25Z",
			"approveUrl": "https://phone.example/link/APPROVE-TOKEN", "declineUrl": "https://phone.example/link/DECLINE-TOKEN"},
	}
	if diff := cmp.Diff(want, j); diff != "" {
		t.Errorf("json body (-want +got):\n%s", diff)
	}

	var slack struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal([]byte(byPath["/slack"].body), &slack); err != nil {
		t.Fatal(err)
	}
	wantText := ":bell: locator: locate offer waits: 200 HTBX at 0.0150 a share (3.00)\n" +
		"account LV100001, workflow wf-1: answer by 09:30:25 ET\n" +
		"<https://phone.example/link/APPROVE-TOKEN|Approve> · <https://phone.example/link/DECLINE-TOKEN|Decline>"
	if slack.Text != wantText {
		t.Errorf("slack text\n%q\nwant\n%q", slack.Text, wantText)
	}

	nt := byPath["/locator-offers"]
	for k, v := range map[string]string{
		"Content-Type": "text/plain; charset=utf-8",
		"Title":        "locator: locate offer waits: 200 HTBX at 0.0150 a share (3.00)",
		"Priority":     "high",
		"Tags":         "bell",
		"Actions":      "view, Approve, https://phone.example/link/APPROVE-TOKEN; view, Decline, https://phone.example/link/DECLINE-TOKEN",
	} {
		if got := nt.header.Get(k); got != v {
			t.Errorf("ntfy %s: %q, want %q", k, got, v)
		}
	}
	if wantBody := "locate offer waits: 200 HTBX at 0.0150 a share (3.00)\naccount LV100001, workflow wf-1: answer by 09:30:25 ET"; nt.body != wantBody {
		t.Errorf("ntfy body %q, want %q", nt.body, wantBody)
	}
}
