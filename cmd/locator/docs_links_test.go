package main

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

var (
	// mdLink is a Markdown link or image: [text](target) or ![alt](target).
	mdLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	// htmlLink is an HTML image or anchor: <img src="target">, <a href="target">.
	htmlLink = regexp.MustCompile(`<(?:img|a)\s[^>]*(?:src|href)="([^"]+)"`)
	// codeSpan is inline code, where brackets are text, not links.
	codeSpan = regexp.MustCompile("`[^`]*`")
	heading  = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
)

// pageLinks are the links of a page's lines outside code, with their
// 1-based lines.
func pageLinks(lines []string) (links []string, at []int) {
	fenced := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		l = codeSpan.ReplaceAllString(l, "")
		for _, re := range []*regexp.Regexp{mdLink, htmlLink} {
			for _, m := range re.FindAllStringSubmatch(l, -1) {
				links = append(links, m[1])
				at = append(at, i+1)
			}
		}
	}
	return links, at
}

// anchors are the anchors GitHub gives a page's headings: lower case,
// punctuation other than "-" and "_" dropped, spaces made "-", and a
// repeated one numbered ("-1", "-2", ...).
func anchors(lines []string) map[string]bool {
	out := map[string]bool{}
	fenced := false
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		m := heading.FindStringSubmatch(l)
		if fenced || m == nil {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		for n := 1; out[a]; n++ {
			a = fmt.Sprintf("%s-%d", b.String(), n)
		}
		out[a] = true
	}
	return out
}

// Every relative link of the README and of the pages under docs/ (the
// generated CLI reference too) points at a file or folder of the
// repository, and every #anchor at a heading of the page it names.
func TestDocsLinks(t *testing.T) {
	t.Parallel()
	pages := docPages(t)
	cli, err := filepath.Glob(filepath.Join(repoRoot, "docs", "cli", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cli {
		pages = append(pages, "docs/cli/"+filepath.Base(c))
	}
	checked := 0
	for _, page := range pages {
		links, at := pageLinks(readPage(t, page))
		for i, link := range links {
			where := fmt.Sprintf("%s:%d: %s", page, at[i], link)
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			target, anchor, _ := strings.Cut(link, "#")
			file := page
			if target != "" {
				file = path.Join(path.Dir(page), target)
				if strings.HasPrefix(file, "../") {
					t.Errorf("%s: points outside the repository", where)
					continue
				}
				if _, err := os.Stat(filepath.Join(repoRoot, filepath.FromSlash(file))); err != nil {
					t.Errorf("%s: no such file or folder (%s)", where, file)
					continue
				}
			}
			checked++
			if anchor == "" {
				continue
			}
			if !strings.HasSuffix(file, ".md") {
				t.Errorf("%s: an anchor into a file that is not Markdown", where)
				continue
			}
			if !anchors(readPage(t, file))[anchor] {
				t.Errorf("%s: %s has no heading #%s", where, file, anchor)
			}
		}
	}
	if checked < 20 {
		t.Errorf("checked %d links; the README alone links every page of docs/", checked)
	}
}
