package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/locatorhq/locator/internal/console"
)

// `locator offers -o json`, from another shell, lists an offer
// waiting on a person: a Reg SHO pair (RSHO, SingleUse allowed) with the
// price and side of both legs and the seconds left; the person then
// declines it from there.
func TestOffersListsAWaitingPair(t *testing.T) {
	t.Parallel()
	b := setupOwnersAt(t, 0, personSpeed)
	b.serve(t)
	var stdout, stderr syncBuffer
	m := b.inProcess(&stdout, &stderr)
	m.Stdin = openTerminal(t)
	done := make(chan int, 1)
	go func() { done <- m.Run(t.Context(), []string{"locate", "RSHO", "300", "--allow-single-use"}) }()
	waitFor(t, "the prompt and the workflow id", func() bool {
		return strings.Contains(stderr.String(), "Take RSHO 300 shares, a Reg SHO pair") && idIn(stderr.String(), "RSHO") != ""
	})
	id := idIn(stderr.String(), "RSHO")

	code, out := b.run(t, nil, "offers", "-o", "json")
	var got []console.WaitingOffer
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "{") {
			var o console.WaitingOffer
			if err := json.Unmarshal([]byte(line), &o); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			got = append(got, o)
		}
	}
	if code != 0 || len(got) != 1 || got[0].ID != id || got[0].Symbol != "RSHO" || got[0].Shares != 300 || got[0].SecondsLeft <= 0 || got[0].SecondsLeft > 30 {
		t.Fatalf("offers: exit %d, %+v; want the RSHO offer %s with seconds left\n%s", code, got, id, out)
	}
	sides := map[string]string{}
	for _, l := range got[0].Legs {
		sides[l.LocateType] = l.PricePerShare
		if l.PricePerShare == "" || l.Total == "" {
			t.Errorf("leg %+v lacks its price", l)
		}
	}
	if len(got[0].Legs) != 2 || sides["PreBorrow"] == "" || sides["SingleUse"] == "" {
		t.Errorf("legs %+v, want the PreBorrow and SingleUse sides priced", got[0].Legs)
	}
	if code, out := b.run(t, nil, "decline", id); code != 0 {
		t.Errorf("decline: exit %d\n%s", code, out)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("the asking shell did not end\n%s", stderr.String())
	}
}
