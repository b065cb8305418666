package account_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestAccountLinksNoDriver proves the account API is a leaf a helper can
// import without linking a database: none of the packages account depends
// on is a SQL driver, nor store or ledger (which import both drivers).
func TestAccountLinksNoDriver(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	forbidden := []string{
		"github.com/jackc/pgx",
		"modernc.org/sqlite",
		"github.com/locatorhq/locator/internal/store",
		"github.com/locatorhq/locator/ledger",
	}
	deps := strings.Fields(string(out))
	if len(deps) < 2 {
		t.Fatalf("go list -deps named %d packages: %q", len(deps), out)
	}
	for _, dep := range deps {
		for _, bad := range forbidden {
			if dep == bad || strings.HasPrefix(dep, bad+"/") {
				t.Errorf("account depends on %s", dep)
			}
		}
	}
}
