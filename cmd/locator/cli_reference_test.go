package main

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// cliReferenceDir is the CLI reference, one page per command, made from
// the command tree by cobra's doc generator.
const cliReferenceDir = "../../docs/cli"

// genCLIReference writes the reference of the command tree a run builds
// into dir. The tree is built with an empty environment, so no default
// shown (the settings file's place, say) depends on who runs the test,
// and without the generator's dated footer, so a page changes only when
// a command does.
func genCLIReference(t *testing.T, dir string) {
	t.Helper()
	root := NewMain(io.Discard, io.Discard, func(string) string { return "" }).root()
	root.DisableAutoGenTag = true
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.DisableAutoGenTag = true
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if err := doc.GenMarkdownTree(root, dir); err != nil {
		t.Fatal(err)
	}
}

// readPages is the .md files of dir by name.
func readPages(t *testing.T, dir string) map[string]string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages := map[string]string{}
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		pages[filepath.Base(n)] = string(b)
	}
	return pages
}

// docs/cli is what cobra's doc generator makes of the command tree now:
// a command, flag or help text changed without the reference fails here.
// `go test ./cmd/locator -run TestCLIReference -update` (or UPDATE_GOLDEN=1)
// rewrites it.
func TestCLIReference(t *testing.T) {
	t.Parallel()
	fresh := t.TempDir()
	genCLIReference(t, fresh)
	want := readPages(t, fresh)
	if len(want) < 20 {
		t.Fatalf("the generator wrote %d pages; want one per command", len(want))
	}
	if *readmeUpdate || os.Getenv("UPDATE_GOLDEN") == "1" {
		if err := os.RemoveAll(cliReferenceDir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(cliReferenceDir, 0o755); err != nil {
			t.Fatal(err)
		}
		genCLIReference(t, cliReferenceDir)
		t.Logf("rewrote %d pages of docs/cli", len(want))
		return
	}
	got := readPages(t, cliReferenceDir)
	var names []string
	for n := range want {
		names = append(names, n)
	}
	for n := range got {
		if _, ok := want[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		w, inWant := want[n]
		g, inGot := got[n]
		switch {
		case !inGot:
			t.Errorf("docs/cli/%s is missing: the command tree has it; -update writes it", n)
		case !inWant:
			t.Errorf("docs/cli/%s: the command tree has no such command now; -update removes it", n)
		case g != w:
			t.Errorf("docs/cli/%s is not what the command tree makes now (-docs +tree); -update rewrites it:\n%s", n, cmp.Diff(g, w))
		}
	}
}
