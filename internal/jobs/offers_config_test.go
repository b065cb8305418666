package jobs_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/locatorhq/locator/internal/answerlink"
	"github.com/locatorhq/locator/internal/jobs"
	"github.com/locatorhq/locator/internal/notify"
)

// A webhook asks for the offers that wait on a person
// ("events"), in any format (ntfy among them), and "links" says where a
// phone reaches the answer links and which variable holds their secret; a
// webhook asking for offers without links, a secret in the file and a bad
// base address are refused with their line, quoting no secret.
func TestParseConfigOfferLinks(t *testing.T) {
	t.Parallel()
	cfg, err := jobs.ParseConfig([]byte(`{
  "jobs": [{"name": "fees", "kind": "reconcile", "schedule": "@close"}],
  "notify": {
    "webhooks": [
      {"urlEnv": "LOCATOR_NTFY_TOPIC", "format": "ntfy", "events": ["offer_waiting"]},
      {"urlEnv": "LOCATOR_WEBHOOK"}
    ],
    "links": {"baseURL": "https://locator.example:8790", "secretEnv": "LOCATOR_LINK_SECRET"}
  }
}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []notify.Webhook{{URLEnv: "LOCATOR_NTFY_TOPIC", Format: notify.FormatNtfy, Events: []notify.Kind{notify.OfferWaiting}},
		{URLEnv: "LOCATOR_WEBHOOK", Format: notify.FormatJSON}}
	if diff := cmp.Diff(want, cfg.Webhooks); diff != "" {
		t.Errorf("webhooks (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&answerlink.Config{BaseURL: "https://locator.example:8790", SecretEnv: "LOCATOR_LINK_SECRET"}, cfg.Links); diff != "" {
		t.Errorf("links (-want +got):\n%s", diff)
	}

	head := "{\n  \"jobs\": [{\"name\": \"a\", \"kind\": \"reconcile\", \"schedule\": \"@close\"}],\n  \"notify\": {\"webhooks\": [\n"
	offers := `{"urlEnv": "H", "format": "ntfy", "events": ["offer_waiting"]}`
	for _, tc := range []struct {
		name, in string
		line     int
		want     string
	}{
		{"offers without links", head + offers + "]}}", 3, `asks for offer_waiting, which carry answer links: add "links"`},
		{"unknown event", head + `{"urlEnv": "H",` + "\n" + `"events": ["offers"]}]}}`, 5, `event "offers"`},
		{"secret in the file", head + offers + "],\n\"links\": {\"baseURL\": \"https://l.example\", \"secret\": \"s3cret-s3cret\"}}}", 5, "a secret does not belong in the config"},
		{"secret in secretEnv", head + offers + "],\n\"links\": {\"baseURL\": \"https://l.example\", \"secretEnv\": \"s3cret s3cret\"}}}", 5, "secretEnv must name an environment variable"},
		{"plain http base", head + offers + "],\n\"links\": {\"baseURL\": \"http://l.example\", \"secretEnv\": \"S\"}}}", 5, "http:// beyond this machine's loopback"},
		{"unknown links field", head + offers + "],\n\"links\": {\"base\": \"https://l.example\"}}}", 5, `unknown links field "base"`},
	} {
		_, err := jobs.ParseConfig([]byte(tc.in))
		var ce *jobs.ConfigError
		if !errors.As(err, &ce) || ce.Line != tc.line || !strings.Contains(ce.Msg, tc.want) {
			t.Errorf("%s: %v, want line %d with %q\n%s", tc.name, err, tc.line, tc.want, tc.in)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: the error quotes the secret: %v", tc.name, err)
		}
	}
}

// serve's --notify takes a file holding the "notify" block alone, or a run
// config (its jobs parsed and left aside); a file with neither is refused
// with its line, as a bad block is.
func TestParseNotify(t *testing.T) {
	block := `"notify": {"webhooks": [{"urlEnv": "HOOK", "events": ["offer_waiting"]}], "links": {"baseURL": "https://desk.example", "secretEnv": "LINK_SECRET"}}`
	for _, ok := range []string{"{" + block + "}", `{"jobs": [{"name": "eod", "kind": "credit-back-unused", "schedule": "@close"}], ` + block + "}"} {
		cfg, err := jobs.ParseNotify([]byte(ok))
		if err != nil || len(cfg.Webhooks) != 1 || cfg.Links == nil || cfg.Links.BaseURL != "https://desk.example" {
			t.Errorf("%s: %+v %v", ok, cfg, err)
		}
	}
	for text, want := range map[string]string{
		`{}`: `no "notify" block`,
		`{"notify": {"webhooks": [{"urlEnv": "HOOK", "events": ["offer_waiting"]}]}}`: "links",
	} {
		if _, err := jobs.ParseNotify([]byte(text)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error about %s", text, err, want)
		}
	}
	if _, err := jobs.ParseConfig([]byte("{" + block + "}")); err == nil || !strings.Contains(err.Error(), `no "jobs" list`) {
		t.Errorf("a run config without jobs: %v", err)
	}
}
