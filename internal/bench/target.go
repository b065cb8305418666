package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/workflow"
)

// Account is the simulator's live account the benchmark locates on.
const Account = "LV100001"

// Target is a simulator to run against, and the clock it keeps.
type Target struct {
	BaseURL, KeyID, Secret string
	Clock                  clock.Clock
	stop                   func()
}

// Close stops the simulator if the benchmark started it.
func (t *Target) Close() {
	if t.stop != nil {
		t.stop()
	}
}

// Client returns a client of the target on its clock.
func (t *Target) Client() (*brokerclient.Client, error) {
	return brokerclient.NewClient(brokerclient.WithBaseURL(t.BaseURL), brokerclient.WithCredentials(t.KeyID, t.Secret),
		brokerclient.WithClock(t.Clock))
}

// RowKey is the key an owner on the target's key pair MACs its rows with
// (workflow.RowKey): what Seed needs to leave rows an engine resumes.
func (t *Target) RowKey() (workflow.RowKey, error) {
	c, err := t.Client()
	if err != nil {
		return nil, err
	}
	return c.RowKey()
}

// Requests returns the simulator's request log (GET /_sim/requests).
func (t *Target) Requests(ctx context.Context) ([]brokersim.RequestRecord, error) {
	var out []brokersim.RequestRecord
	return out, t.admin(ctx, "/_sim/requests", &out)
}

// Locates returns the simulator's locate rows (GET /_sim/locates), with
// when each quote settled as Offered.
func (t *Target) Locates(ctx context.Context) ([]brokersim.LocateRecord, error) {
	var out []brokersim.LocateRecord
	return out, t.admin(ctx, "/_sim/locates", &out)
}

// admin decodes the answer of one of the simulator's admin reads into v.
func (t *Target) admin(ctx context.Context, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.BaseURL+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Symbols names n benchmark symbols for one runner (a letter) and batch,
// distinct across runs so that one simulator serves them all without its
// 30-second same-symbol rule or earlier fills getting in the way.
func Symbols(runner byte, batch, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("Z%c%d%04d", runner, batch, i)
	}
	return out
}

// Scenario is the default scenario with a Locate pool for every symbol
// (the default's own keys untouched).
func Scenario(symbols []string) brokersim.Scenario {
	sc := brokersim.DefaultScenario()
	for _, s := range symbols {
		sc.Pools = append(sc.Pools, brokersim.ScenarioPool{Symbol: s, LocateType: 1, Shares: 1_000_000,
			Price: brokersim.Dec(decimal.RequireFromString("0.01"))})
	}
	return sc
}

// InProcess serves the simulator in this process on clk (a sped-up
// clock.Scaled for quick runs), on a private loopback port, with the admin
// routes Requests reads.
func InProcess(sc brokersim.Scenario, clk clock.Clock) (*Target, error) {
	sim, err := brokersim.New(sc, brokersim.WithClock(clk), brokersim.WithAdmin())
	if err != nil {
		return nil, err
	}
	srv := httptest.NewServer(sim)
	k := sc.Keys[0]
	return &Target{BaseURL: srv.URL, KeyID: k.KeyID, Secret: k.Secret, Clock: clk, stop: srv.Close}, nil
}

// Remote is a `locator sim` already serving at baseURL, in real time, with
// the default scenario's first key pair.
func Remote(baseURL string) *Target {
	k := brokersim.DefaultScenario().Keys[0]
	return &Target{BaseURL: baseURL, KeyID: k.KeyID, Secret: k.Secret, Clock: clock.Real{}}
}

// Spawn starts `exe sim` (the locator binary) on a scenario written to dir,
// in real time, and waits for its ready line.
func Spawn(ctx context.Context, exe, dir string, sc brokersim.Scenario) (*Target, error) {
	path := filepath.Join(dir, "bench-scenario.json")
	b, err := json.Marshal(sc)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "sim", "--scenario", path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	stop := func() { cmd.Process.Kill(); cmd.Wait() }
	ready := make(chan error, 1)
	var line struct {
		BaseURL string `json:"baseURL"`
	}
	go func() {
		// The line lists every key pair and its accounts: a desk of
		// thousands makes it longer than a bufio.Scanner's line.
		b, err := bufio.NewReader(out).ReadBytes('\n')
		if err != nil {
			ready <- fmt.Errorf("locator sim ended before it was ready: %v", err)
			return
		}
		ready <- json.Unmarshal(b, &line)
	}()
	select {
	case err = <-ready:
	case <-time.After(30 * time.Second):
		err = fmt.Errorf("locator sim not ready after 30 s")
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		stop()
		return nil, err
	}
	t := Remote(line.BaseURL)
	t.stop = stop
	return t, nil
}
