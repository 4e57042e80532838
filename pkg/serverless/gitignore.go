package serverless

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// maxIgnoreFileBytes bounds one .gitignore read: a larger file is read only
// that far (its later patterns do not exclude anything).
const maxIgnoreFileBytes = 1 << 20

// ignoreRule is one pattern of a .gitignore file, as git reads it.
type ignoreRule struct {
	segments []string // the pattern split at "/", "**" kept as a segment
	anchored bool     // a "/" before its end: matched from the file's directory, not at any depth
	dirOnly  bool     // a trailing "/": directories only
	negate   bool     // a leading "!": re-includes what an earlier rule excluded
}

// ignoreFile is one .gitignore (or .git/info/exclude) and the directory its
// patterns are relative to: base, relative to the payload root, for a file at
// or below it; for a file above the root, "." and above, the root's path
// relative to that file's directory.
type ignoreFile struct {
	base, above string
	rules       []ignoreRule
}

// parseIgnore reads gitignore patterns: blank lines and "#" comments are
// skipped, a trailing unescaped space is trimmed, "\#" and "\!" are literal.
// Any text parses; a pattern that path.Match cannot read matches nothing.
func parseIgnore(r io.Reader) []ignoreRule {
	var rules []ignoreRule
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxIgnoreFileBytes)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, `\ `) {
			line = line[:len(line)-1]
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var rule ignoreRule
		if strings.HasPrefix(line, "!") {
			rule.negate, line = true, line[1:]
		} else if strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`) {
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			rule.dirOnly, line = true, strings.TrimRight(line, "/")
		}
		rule.anchored = strings.Contains(line, "/")
		line = strings.TrimPrefix(line, "/")
		if line == "" {
			continue
		}
		rule.segments = strings.Split(line, "/")
		rules = append(rules, rule)
	}
	return rules
}

// matches reports whether rel (slash-separated, relative to the rule's
// directory) matches the rule; dir says whether rel is a directory.
func (r ignoreRule) matches(rel string, dir bool) bool {
	if r.dirOnly && !dir {
		return false
	}
	parts := strings.Split(rel, "/")
	if r.anchored {
		return matchSegments(r.segments, parts)
	}
	// Without a "/" the pattern matches the name at any depth.
	ok, err := path.Match(r.segments[0], parts[len(parts)-1])
	return err == nil && ok
}

// matchSegments matches path parts against pattern segments, "**" matching
// any number of parts (none included).
func matchSegments(pattern, parts []string) bool {
	if len(pattern) == 0 {
		return len(parts) == 0
	}
	if pattern[0] == "**" {
		for i := 0; i <= len(parts); i++ {
			if matchSegments(pattern[1:], parts[i:]) {
				return true
			}
		}
		return false
	}
	if len(parts) == 0 {
		return false
	}
	ok, err := path.Match(pattern[0], parts[0])
	return err == nil && ok && matchSegments(pattern[1:], parts[1:])
}

// gitIgnores are the ignore files that apply to a payload's tree: those of
// the root's directory and its ancestors up to the work tree's top (the one
// holding .git), that top's .git/info/exclude, and each directory's own as
// the walk enters it.
type gitIgnores struct {
	root  string
	files []ignoreFile
}

// loadGitIgnores reads the ignore files above and at root. A root in no git
// work tree still honours its own .gitignore files.
func loadGitIgnores(root string) (*gitIgnores, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	g := &gitIgnores{root: abs}
	var chain []string // root first, then its parents up to the top
	for dir := abs; ; dir = filepath.Dir(dir) {
		chain = append(chain, dir)
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil || filepath.Dir(dir) == dir {
			break
		}
	}
	top := chain[len(chain)-1]
	if _, err := os.Lstat(filepath.Join(top, ".git")); err != nil {
		chain = chain[:1] // no work tree: only the root's own files
	}
	for i := len(chain) - 1; i >= 0; i-- {
		above, err := filepath.Rel(chain[i], abs)
		if err != nil {
			return nil, err
		}
		if above == "." {
			above = ""
		}
		if i == len(chain)-1 {
			g.add(filepath.Join(top, ".git", "info", "exclude"), ".", filepath.ToSlash(above))
		}
		g.add(filepath.Join(chain[i], ".gitignore"), ".", filepath.ToSlash(above))
	}
	return g, nil
}

// add reads one ignore file, if there is one (a missing or unreadable file
// excludes nothing).
func (g *gitIgnores) add(file, base, above string) {
	f, err := os.Open(file)
	if err != nil {
		return
	}
	defer f.Close()
	data, _ := io.ReadAll(io.LimitReader(f, maxIgnoreFileBytes))
	if rules := parseIgnore(bytes.NewReader(data)); len(rules) > 0 {
		g.files = append(g.files, ignoreFile{base: base, above: above, rules: rules})
	}
}

// enter reads the .gitignore of dir (relative to the root) as the walk enters it.
func (g *gitIgnores) enter(rel string) {
	if rel == "." {
		return // read by loadGitIgnores
	}
	g.add(filepath.Join(g.root, filepath.FromSlash(rel), ".gitignore"), rel, "")
}

// ignored reports whether rel (relative to the root) is ignored: the last
// rule that matches it, over the files from the top down, decides.
func (g *gitIgnores) ignored(rel string, dir bool) bool {
	ignored := false
	for _, f := range g.files {
		sub, ok := f.relative(rel)
		if !ok {
			continue
		}
		for _, r := range f.rules {
			if r.matches(sub, dir) {
				ignored = !r.negate
			}
		}
	}
	return ignored
}

// relative returns rel (relative to the root) as the file's patterns see it,
// and whether it lies below the file's directory at all.
func (f ignoreFile) relative(rel string) (string, bool) {
	switch {
	case f.above != "":
		return f.above + "/" + rel, true
	case f.base == ".":
		return rel, true
	case strings.HasPrefix(rel, f.base+"/"):
		return strings.TrimPrefix(rel, f.base+"/"), true
	}
	return "", false
}
