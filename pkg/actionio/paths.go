package actionio

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Roots a path input may lie under: the runner's variables naming them.
const (
	RootWorkspace = "GITHUB_WORKSPACE"
	RootTemp      = "RUNNER_TEMP"
)

// ResolvePath accepts a file or directory path input's value (def when
// empty) that the action reads or writes only inside one of roots (the
// directories GITHUB_WORKSPACE, RUNNER_TEMP or HOME name), after resolving
// "..", and every symbolic link of the part that exists. A relative path is
// taken from the first root. It returns the resolved absolute path. A path
// outside could publish or overwrite any file the action can reach
// (/etc/passwd into a check run, say), so it is an *InputError naming input,
// value and roots. A `path` tag (see InputTag) makes ReadInputs call it; an
// action calls it itself where the default is computed or a bad path must
// not stop what comes first (cleanup's deletion).
func (r *IO) ResolvePath(name, value, def string, roots ...string) (string, error) {
	if value == "" {
		value = def
	}
	var bases, described []string
	for _, root := range roots {
		dir := r.getenv(root)
		if dir == "" {
			continue
		}
		abs, err := resolve(dir)
		if err != nil {
			continue // a root that does not exist holds nothing
		}
		bases = append(bases, abs)
		described = append(described, fmt.Sprintf("%s (%s)", root, dir))
	}
	expected := "a path inside " + strings.Join(described, " or ") + ", after resolving symbolic links and .."
	if len(bases) == 0 {
		return "", &InputError{Input: name, Value: value, Expected: "a path inside " + strings.Join(roots, " or ") + ", but none of them is set to an existing directory"}
	}
	if value == "" {
		return "", &InputError{Input: name, Expected: expected}
	}
	p := value
	if !filepath.IsAbs(p) {
		p = filepath.Join(r.getenv(roots[0]), p)
	}
	resolved, err := resolve(p)
	if err != nil {
		return "", &InputError{Input: name, Value: value, Expected: fmt.Sprintf("%s (%v)", expected, err)}
	}
	for _, base := range bases {
		if within(base, resolved) {
			return resolved, nil
		}
	}
	return "", &InputError{Input: name, Value: value, Expected: expected}
}

// resolve makes p absolute and resolves the symbolic links of its longest
// existing prefix; the rest, which does not exist yet, is appended as is
// (it was cleaned, so it holds no "..").
func resolve(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rest := ""
	for dir := abs; ; {
		real, err := filepath.EvalSymlinks(dir)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		if _, lerr := os.Lstat(dir); lerr == nil {
			// It exists but does not resolve: a dangling link, which
			// could be made to point anywhere before it is written.
			return "", fmt.Errorf("%s is a symbolic link to nothing", dir)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", err
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}

// within reports whether p is base or lies under it.
func within(base, p string) bool {
	rel, err := filepath.Rel(base, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// WorkspaceRelative returns a path ResolvePath accepted under the workspace
// relative to it: how a later step (upload-artifact, outside a container
// action's mounts) finds the file.
func (r *IO) WorkspaceRelative(path string) (string, error) {
	ws, err := resolve(r.getenv(RootWorkspace))
	if err != nil {
		return "", fmt.Errorf("%s: %w", RootWorkspace, err)
	}
	if !within(ws, path) {
		return "", fmt.Errorf("%s is not inside %s (%s)", path, RootWorkspace, ws)
	}
	return filepath.Rel(ws, path)
}

// resolvePath is ResolvePath for a value that already holds its default.
func (r *IO) resolvePath(name, value string, roots ...string) (string, error) {
	return r.ResolvePath(name, value, "", roots...)
}
