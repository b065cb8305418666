package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/locatorhq/locator/internal/console"
)

// Spec "Short locates" rule 2: while `locate RSHO 1000
// --allow-single-use` waits at its prompt (a real pseudo-terminal; this
// process owns the account, the others follow it), `status -o json` from
// another process shows the offer with the side and price put to the
// prompt (SingleUse, 0.0400), not empty; `approve ID` at another
// terminal shows that offer and asks first, and a no sends nothing and
// leaves it waiting (exit 0); `approve ID` without a terminal says which
// side at which price it approves, and fills exactly that (one accept, of
// the .SU leg), exit 0; the asking shell's prompt is withdrawn.
func TestWaitingOfferFromAnotherShell(t *testing.T) {
	t.Parallel()
	b := setupOwnersAt(t, 0, personSpeed)
	var stdout, stderr syncBuffer
	m := b.inProcess(&stdout, &stderr)
	m.Stdin = openTerminal(t)
	done := make(chan int, 1)
	go func() { done <- m.Run(t.Context(), []string{"locate", "RSHO", "1000", "--allow-single-use"}) }()
	waitFor(t, "the prompt and the workflow id", func() bool {
		// Both sides of the pair are put to the person.
		return strings.Contains(stderr.String(), "Take RSHO 1000 shares, a Reg SHO pair: [1] SingleUse at 0.0400 = 40.00, [2] PreBorrow at 0.0900 = 90.00?") &&
			idIn(stderr.String(), "RSHO") != ""
	})
	id := idIn(stderr.String(), "RSHO")

	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	out, err := b.command(ctx, "status", "-o", "json").Output()
	if err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	var rec map[string]any
	for _, o := range jsonLines(t, string(out)) {
		if o["id"] == id {
			rec = o
		}
	}
	if rec["state"] != "offered" || rec["pricePerShare"] != "0.0400" || rec["locateType"] != "SingleUse" || rec["total"] != "" {
		t.Errorf("status record of the waiting offer %v, want offered at 0.0400 SingleUse, no total", rec)
	}

	// At a terminal, approve asks; a no sends nothing.
	var approveOut, approveErr syncBuffer
	am := b.inProcess(&approveOut, &approveErr)
	term, keyboard := openTerminalPair(t)
	am.Stdin = term
	approved := make(chan int, 1)
	before := len(b.requests(t))
	go func() { approved <- am.Run(t.Context(), []string{"approve", id}) }()
	waitFor(t, "approve's question", func() bool {
		return strings.Contains(approveErr.String(), "Accept RSHO 1000 shares at 0.0400 (SingleUse) = 40.00?")
	})
	if _, err := keyboard.WriteString("n\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-approved:
		if code != console.ExitOK || !strings.Contains(approveErr.String(), "not approved: the offer still waits on "+id+"; nothing was sent") {
			t.Errorf("approve, no at its terminal: exit %d\n%s\n%s", code, approveOut.String(), approveErr.String())
		}
	case <-ctx.Done():
		t.Fatalf("approve did not end after its no:\n%s", approveErr.String())
	}
	if w := b.writesAfter(t, before); len(w) != 0 {
		t.Errorf("approve's no sent %v", w)
	}

	code, text := b.run(t, nil, "approve", id[:12])
	for _, want := range []string{"approving RSHO " + id + ": 1000 shares at 0.0400 (SingleUse, offer ", ".SU) = 40.00", "filled — 1000 shares at 0.0400 (SingleUse) = 40.00"} {
		if code != console.ExitOK || !strings.Contains(text, want) {
			t.Errorf("approve: exit %d, want 0 with %q\n%s", code, want, text)
		}
	}
	select {
	case code := <-done:
		if code != console.ExitOK || !strings.Contains(stderr.String(), "answered elsewhere") {
			t.Errorf("the asking shell: exit %d, want 0 with its prompt withdrawn\n%s\n%s", code, stdout.String(), stderr.String())
		}
	case <-ctx.Done():
		t.Fatalf("the asking shell did not end\n%s", stderr.String())
	}
	var accepts []string
	for _, r := range b.requests(t) {
		if r.Path == "/v1/api/accounts/locates/accept" {
			accepts = append(accepts, r.Body)
		}
	}
	if len(accepts) != 1 || !strings.Contains(accepts[0], `.SU"`) {
		t.Errorf("accepts %v, want one, of the .SU leg", accepts)
	}
	b.noBrokerTrouble(t)
}
