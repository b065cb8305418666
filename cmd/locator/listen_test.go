package main

import (
	"net"
	"strings"
	"testing"

	"github.com/locatorhq/locator/internal/console"
)

// A --listen address that cannot be bound is found before anything is
// sent: serve and run exit 2 without taking the account or calling the
// broker, rather than after owning it.
func TestListenTakenRefusedBeforeSending(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"serve", []string{"serve", "--listen", addr}},
		{"run", []string{"run", "--config", writeFile(t, "c.json", daemonConfig), "--listen", addr}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(b.sim.Requests())
			code, _, errOut := b.MustRunMain(t, nil, tc.args...)
			if code != console.ExitUsage || !strings.Contains(errOut, "--listen "+addr) || strings.Contains(errOut, "serving") {
				t.Errorf("exit %d, stderr %q; want 2 naming --listen %s", code, errOut, addr)
			}
			if n := len(b.sim.Requests()) - before; n != 0 {
				t.Errorf("%d requests sent", n)
			}
		})
	}
}
