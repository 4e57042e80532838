package rules

// The documentation is Markdown pages: the root README (what, why, the two
// commands and the set-up up to the first green gate) and the reference it
// links to, every page under .github (SECURITY.md, CONTRIBUTING.md and
// .github/docs/). Each check of documentation reads the page its text lives
// on; the checks that hold for every page (YAML blocks, links) read them all.

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// The pages whose text a check reads, relative to the repository's root.
const (
	docReadme        = "README.md"
	docSetup         = ".github/docs/setup.md"
	docConfiguration = ".github/docs/configuration.md"
	docWorkflows     = ".github/docs/workflows.md"
	docCostModel     = ".github/docs/cost-model.md"
	docServerless    = ".github/docs/serverless.md"
	docSecurity      = ".github/SECURITY.md"
)

// docReadmeMaxQuickStart is the most lines the root README may take from its
// top to the end of its first-green-gate section: a reader gets from nothing
// to a required, green gate without wading through the reference.
const docReadmeMaxQuickStart = 250

// docText reads the page at rel (relative to the repository's root).
func docText(t *testing.T, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(metaRepoRoot, filepath.FromSlash(rel)))
	assert.NilError(t, err, "the page %s", rel)
	return string(data)
}

// docPages lists every Markdown page of the documentation: the root README
// and every .md file under .github, sorted, each relative to the root.
func docPages(t *testing.T) []string {
	t.Helper()
	pages := []string{docReadme}
	err := filepath.WalkDir(filepath.Join(metaRepoRoot, ".github"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".md") {
			return err
		}
		rel, err := filepath.Rel(metaRepoRoot, path)
		pages = append(pages, filepath.ToSlash(rel))
		return err
	})
	assert.NilError(t, err)
	slices.Sort(pages)
	for _, want := range []string{docReadme, docSetup, docConfiguration, docWorkflows, docCostModel, docServerless, docSecurity} {
		assert.Assert(t, slices.Contains(pages, want), "the page %s is missing (found %v)", want, pages)
	}
	return pages
}

// markedSection returns the text between <!-- name:start --> and
// <!-- name:end --> of text, and whether text has the section.
func markedSection(t *testing.T, where, text, name string) (string, bool) {
	t.Helper()
	_, rest, ok := strings.Cut(text, "<!-- "+name+":start -->\n")
	if !ok {
		return "", false
	}
	section, _, ok := strings.Cut(rest, "<!-- "+name+":end -->")
	assert.Assert(t, ok, "%s: the %s section is not closed", where, name)
	return section, true
}

// docSection returns the marked section name and its page: exactly one page
// holds it, so a section moved to another page is still read, and a copy
// left behind is a failure, not a second truth.
func docSection(t *testing.T, name string) (section, page string) {
	t.Helper()
	var found []string
	for _, p := range docPages(t) {
		if s, ok := markedSection(t, p, docText(t, p), name); ok {
			section, page = s, p
			found = append(found, p)
		}
	}
	assert.Assert(t, len(found) == 1, "the <!-- %s:start --> section: want it on exactly one page, found it on %v", name, found)
	return section, page
}

// docHeadingLine is the 0-based line of the first heading (outside fenced
// blocks) whose text contains title, case-insensitively; -1 when none.
func docHeadingLine(lines []string, title string) int {
	fenced := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		if !fenced && strings.HasPrefix(l, "#") && strings.Contains(strings.ToLower(l), strings.ToLower(title)) {
			return i
		}
	}
	return -1
}

// docQuickStartLines counts the lines of a README from its top to the end of
// its first-green-gate section (the line before the next heading of the same
// or a higher level, or the end).
func docQuickStartLines(readme string) (int, error) {
	lines := strings.Split(strings.TrimSuffix(readme, "\n"), "\n")
	at := docHeadingLine(lines, "first green gate")
	if at < 0 {
		return 0, fmt.Errorf("no heading names the first green gate")
	}
	level := len(lines[at]) - len(strings.TrimLeft(lines[at], "#"))
	fenced := false
	for i := at + 1; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(l, "#") {
			continue
		}
		if n := len(l) - len(strings.TrimLeft(l, "#")); n <= level {
			return i, nil
		}
	}
	return len(lines), nil
}

// TestReadmeQuickStartStaysShort: the root README, from its top to the end of
// the first-green-gate section, is at most docReadmeMaxQuickStart lines; the
// reference belongs on the pages it links to.
func TestReadmeQuickStartStaysShort(t *testing.T) {
	n, err := docQuickStartLines(docText(t, docReadme))
	assert.NilError(t, err)
	assert.Check(t, n <= docReadmeMaxQuickStart,
		"README.md takes %d lines to its first green gate; keep it at %d or fewer by moving reference text to .github/docs/", n, docReadmeMaxQuickStart)
}

func TestDocQuickStartLines(t *testing.T) {
	long := "# x\n" + strings.Repeat("text\n", 300)
	tests := []struct {
		name, readme string
		want         int
		err          bool
	}{
		{name: "up to the next heading", readme: "# t\nintro\n### 6. The first green gate\ngo\n## Reference\nlinks\n", want: 4},
		{name: "to the end", readme: "# t\n## First green gate\na\nb\n", want: 4},
		{name: "a deeper heading stays inside", readme: "# t\n## The first green gate\na\n### detail\nb\n## Next\n", want: 5},
		{name: "a fenced comment is no heading", readme: "# t\n## The first green gate\n```sh\n# a comment\n```\n## Next\n", want: 5},
		{name: "too long", readme: long + "## The first green gate\n", want: 302},
		{name: "no such heading", readme: "# t\nfirst green gate in prose\n", err: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := docQuickStartLines(tc.readme)
			if tc.err {
				assert.Check(t, err != nil)
				return
			}
			assert.NilError(t, err)
			assert.Check(t, is.Equal(got, tc.want))
		})
	}
}

// TestDocPagesLinksResolve: every relative link of every page leads to a
// file and, for a Markdown file, to a heading that exists; and every page
// under .github is linked from the root README, so none is stranded.
func TestDocPagesLinksResolve(t *testing.T) {
	pages := docPages(t)
	for _, page := range pages {
		problems := markdownLinkProblems(filepath.Join(metaRepoRoot, filepath.FromSlash(page)), docText(t, page))
		assert.Check(t, len(problems) == 0, "%s:\n  %s", page, strings.Join(problems, "\n  "))
	}
	linked := map[string]bool{}
	for _, target := range markdownLinkTargets(docText(t, docReadme)) {
		path, _, _ := strings.Cut(target, "#")
		linked[filepath.ToSlash(filepath.Clean(path))] = true
	}
	for _, page := range pages {
		if page != docReadme {
			assert.Check(t, linked[page], "README.md does not link %s: list it under its reference links", page)
		}
	}
}
