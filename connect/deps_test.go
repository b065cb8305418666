package connect_test

import (
	"os/exec"
	"strings"
	"testing"
)

// A program that opens an account links no plotting: the report's charts
// are drawn by package chart, which only the command's `report --charts`
// imports.
func TestConnectLinksNoPlotting(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 2 {
		t.Fatalf("go list -deps named %d packages: %q", len(deps), out)
	}
	for _, dep := range deps {
		for _, bad := range []string{"gonum.org/v1/plot", "github.com/locatorhq/locator/internal/report/chart"} {
			if dep == bad || strings.HasPrefix(dep, bad+"/") {
				t.Errorf("connect depends on %s", dep)
			}
		}
	}
	t.Logf("connect links %d packages", len(deps))
}
