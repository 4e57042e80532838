package suitecopy

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Change is one file the copy rewrote: its path (slash-separated, relative
// to the checkout) and how many references in it were turned.
type Change struct {
	Path  string
	Count int
}

// Result is what Copy did (or, in a dry run, would do): the owner the
// checkout named (From), the one it names now (To), and each changed file
// in path order.
type Result struct {
	From, To string
	Changes  []Change
}

// References is how many references the changed files held in all.
func (r Result) References() int {
	n := 0
	for _, c := range r.Changes {
		n += c.Count
	}
	return n
}

// ErrNotSuite is a --dir that holds no checkout of the suite.
var ErrNotSuite = errors.New("not a checkout of the suite")

// moduleRE is go.mod's module line for a copy of the suite.
var moduleRE = regexp.MustCompile(`(?m)^module[ \t]+github\.com/([A-Za-z0-9-]+)/` + Repo + `[ \t]*(?://.*)?$`)

// CurrentOwner is the owner of the copy checked out at dir, read from its
// go.mod module path (github.com/OWNER/runpod-gpu).
func CurrentOwner(dir string) (string, error) {
	data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return "", fmt.Errorf("--dir %s: %w: %w", dir, ErrNotSuite, err)
	}
	m := moduleRE.FindSubmatch(data)
	if m == nil {
		return "", fmt.Errorf("--dir %s: go.mod's module is not github.com/OWNER/%s: %w", dir, Repo, ErrNotSuite)
	}
	return string(m[1]), nil
}

// Copy rewrites the checkout at dir, a copy of the suite, to name owner to
// instead of the owner its go.mod names: every text file but those under
// .git, binary files (a NUL byte) and symbolic links left as they are. With
// dryRun it only reports. Either every changed file is written or, when one
// cannot be staged, none. A second run with the same owner changes nothing.
func Copy(dir, to string, dryRun bool) (Result, error) {
	if err := CheckOwner(to); err != nil {
		return Result{}, err
	}
	from, err := CurrentOwner(dir)
	if err != nil {
		return Result{}, err
	}
	res := Result{From: from, To: to}
	if from == to {
		return res, nil
	}
	var edits []edit
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == ".git" && path != dir {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil // a worktree's .git file
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
			return nil
		}
		out, n := Rewrite(data, from, to)
		if n == 0 {
			return nil
		}
		rel, err := filepath.Rel(dir, path)
		edits = append(edits, edit{path: path, rel: filepath.ToSlash(rel), text: out, count: n})
		return err
	})
	if err != nil {
		return Result{}, fmt.Errorf("reading the checkout %s: %w (nothing changed)", dir, err)
	}
	slices.SortFunc(edits, func(a, b edit) int { return strings.Compare(a.rel, b.rel) })
	for _, e := range edits {
		res.Changes = append(res.Changes, Change{Path: e.rel, Count: e.count})
	}
	if dryRun {
		return res, nil
	}
	return res, apply(edits)
}

// edit is one file's new text.
type edit struct {
	path, rel string
	text      []byte
	count     int
}

// apply stages every new text beside its file, then renames them in place:
// a file that cannot be staged leaves the checkout as it was.
func apply(edits []edit) error {
	staged := make([]string, 0, len(edits))
	unstage := func() {
		for _, s := range staged {
			_ = os.Remove(s)
		}
	}
	for _, e := range edits {
		tmp, err := stage(e)
		if err != nil {
			unstage()
			return fmt.Errorf("writing %s: %w (nothing changed)", e.rel, err)
		}
		staged = append(staged, tmp)
	}
	var errs []error
	for i, e := range edits {
		if err := os.Rename(staged[i], e.path); err != nil {
			_ = os.Remove(staged[i])
			errs = append(errs, fmt.Errorf("replacing %s: %w", e.rel, err))
		}
	}
	return errors.Join(errs...)
}

// stage writes e's text to a new file beside e's, with e's mode.
func stage(e edit) (string, error) {
	st, err := os.Stat(e.path)
	if err != nil {
		return "", err
	}
	f, err := os.CreateTemp(filepath.Dir(e.path), ".copy-suite-*")
	if err != nil {
		return "", err
	}
	_, werr := f.Write(e.text)
	cerr := f.Close()
	if err := errors.Join(werr, cerr, os.Chmod(f.Name(), st.Mode().Perm())); err != nil {
		_ = os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}
