package fileperm_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locatorhq/locator/internal/fileperm"
)

func write(t *testing.T, path string, mode os.FileMode) string {
	t.Helper()
	if err := os.WriteFile(path, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	return path
}

// As ssh does: a file, or a folder above it, that another user can write
// or owns is refused, naming what is at fault and the fix; /tmp (sticky,
// root's) above a private folder is fine.
func TestCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ok := write(t, filepath.Join(dir, "ok.json"), 0o644)
	if err := fileperm.Check(ok); err != nil {
		t.Errorf("a private file: %v", err)
	}
	if err := fileperm.Check(filepath.Join(dir, "missing.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v, want ErrNotExist", err)
	}

	bad := write(t, filepath.Join(dir, "bad.json"), 0o664)
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(bad, link); err != nil {
		t.Fatal(err)
	}
	shared := filepath.Join(dir, "shared")
	if err := os.Mkdir(shared, 0o700); err != nil {
		t.Fatal(err)
	}
	inShared := write(t, filepath.Join(shared, "jobs.json"), 0o600)
	linkInShared := filepath.Join(shared, "to-ok.json")
	if err := os.Symlink(ok, linkInShared); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, at, fix string }{
		{bad, "it is writable by group or others (-rw-rw-r--)", "chmod go-w " + bad},
		{link, "it is writable by group or others", "chmod go-w " + bad},
		{inShared, "its folder " + shared + " is writable by group or others (drwxrwxrwx)", "chmod go-w " + shared},
		{linkInShared, "its folder " + shared + " is writable by group or others", "chmod go-w " + shared},
	} {
		err := fileperm.Check(tc.path)
		if !errors.Is(err, fileperm.ErrUnsafe) || !strings.HasPrefix(err.Error(), tc.path+" is not trusted") ||
			!strings.Contains(err.Error(), tc.at) || !strings.Contains(err.Error(), tc.fix) {
			t.Errorf("Check(%s) = %v, want ErrUnsafe naming %q and %q", tc.path, err, tc.at, tc.fix)
		}
	}
}

// A file owned by another user is refused even when it is not writable by
// anyone but that user.
func TestCheckOwner(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("giving a file to another user needs root")
	}
	theirs := write(t, filepath.Join(t.TempDir(), "config.json"), 0o644)
	if err := os.Chown(theirs, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	err := fileperm.Check(theirs)
	if !errors.Is(err, fileperm.ErrUnsafe) || !strings.Contains(err.Error(), "it is owned by uid 65534") {
		t.Errorf("Check = %v, want ErrUnsafe naming the owner", err)
	}
}
