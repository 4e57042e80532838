// Package startupbench compares the start-up time of the image's one
// multi-call program with the program per action it replaced: it builds both
// as the Dockerfile does (CGO_ENABLED=0, -trimpath, -ldflags "-s -w"), starts
// every role many times in an empty environment, where each stops at its first
// input check, and prints the mean and median per role, the new/old ratio, and
// the GODEBUG=inittrace=1 totals (time, bytes and allocations spent in package
// initialisation). Command startup-bench (pkg/cmd/startup-bench) is its main.
//
// The baseline is a ref's tree (default: the commit before pkg/actions/actions.go
// was added, the last with a program per action), taken with git archive, so
// no worktree is left behind.
package startupbench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// program is one way to start a role: the binary and its arguments.
type program struct {
	path string
	args []string
}

// Run builds the baseline at base (a git ref; "" for the default) and the
// working tree's program, starts every role n times with each and prints the
// comparison table to stdout. Run it inside this repository's checkout.
func Run(ctx context.Context, stdout io.Writer, base string, n int) error {
	if n < 1 {
		return fmt.Errorf("-n %d: want at least 1 start per role", n)
	}
	root, err := output(ctx, "", "git", "rev-parse", "--show-toplevel")
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "startup-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	base, baseDir, roles, err := checkoutBaseline(ctx, root, base, tmp)
	if err != nil {
		return err
	}
	multi := filepath.Join(tmp, "new", "runpod-gpu-actions")
	if err := build(ctx, root, multi, "./pkg/cmd/runpod-gpu-actions"); err != nil {
		return err
	}
	cwd := filepath.Join(tmp, "cwd") // empty: roles that read the config find none
	if err := os.Mkdir(cwd, 0o755); err != nil {
		return err
	}

	fmt.Fprintf(stdout, "baseline %s (a program per action) against the working tree's multi-call program; %d starts each, empty environment\n\n", base, n)
	w := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "role\told mean\tnew mean\told median\tnew median\tnew/old (median)\told init\tnew init\told init bytes\tnew init bytes\told init allocs\tnew init allocs\t")
	var oldAll, newAll []time.Duration
	for _, role := range roles {
		single := filepath.Join(tmp, "old", role)
		if err := build(ctx, baseDir, single, "./actions/"+role); err != nil {
			return err
		}
		times, inits, err := measureRole(ctx, [2]program{{path: single}, {path: multi, args: []string{role}}}, cwd, n)
		if err != nil {
			return fmt.Errorf("%s: %w", role, err)
		}
		oldAll, newAll = append(oldAll, times[0]...), append(newAll, times[1]...)
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%.2f\t%s\t%s\t%d\t%d\t%d\t%d\t\n", role,
			ms(mean(times[0])), ms(mean(times[1])), ms(median(times[0])), ms(median(times[1])),
			float64(median(times[1]))/float64(median(times[0])),
			ms(inits[0].clock), ms(inits[1].clock), inits[0].bytes, inits[1].bytes, inits[0].allocs, inits[1].allocs)
	}
	fmt.Fprintf(w, "all roles\t%s\t%s\t%s\t%s\t%.2f\t\t\t\t\t\t\t\n", ms(mean(oldAll)), ms(mean(newAll)), ms(median(oldAll)), ms(median(newAll)),
		float64(median(newAll))/float64(median(oldAll)))
	return w.Flush()
}

// checkoutBaseline unpacks the per-action baseline (base, or by default the
// commit before the multi-call program arrived) into tmp and lists its roles.
func checkoutBaseline(ctx context.Context, root, base, tmp string) (ref, dir string, roles []string, err error) {
	if base == "" {
		added, err := output(ctx, root, "git", "log", "--diff-filter=A", "--format=%H", "-1", "--", "pkg/actions/actions.go")
		if err != nil || added == "" {
			return "", "", nil, fmt.Errorf("find the commit that added pkg/actions/actions.go (pass -base): %v", err)
		}
		base = added + "^"
	}
	dir = filepath.Join(tmp, "base")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", "", nil, err
	}
	archive := exec.CommandContext(ctx, "sh", "-c", `git -C "$1" archive "$2" | tar -x -C "$3"`, "sh", root, base, dir)
	if out, err := archive.CombinedOutput(); err != nil {
		return "", "", nil, fmt.Errorf("git archive %s: %v\n%s", base, err, out)
	}
	mains, err := filepath.Glob(filepath.Join(dir, "actions", "*", "main.go"))
	if err != nil || len(mains) == 0 {
		return "", "", nil, fmt.Errorf("%s has no actions/*/main.go: is it a per-action commit?", base)
	}
	for _, m := range mains {
		roles = append(roles, filepath.Base(filepath.Dir(m)))
	}
	return base, dir, roles, nil
}

// measureRole starts the old and the new program n times each, alternating
// so drift in the machine's load hits both alike, then reads their init cost.
func measureRole(ctx context.Context, progs [2]program, cwd string, n int) (times [2][]time.Duration, inits [2]initCost, err error) {
	for i := range n {
		for k := range progs {
			p := progs[(i+k)%2]
			d, err := start(ctx, p, cwd, nil)
			if err != nil {
				return times, inits, err
			}
			times[(i+k)%2] = append(times[(i+k)%2], d)
		}
	}
	for k, p := range progs {
		if inits[k], err = inittrace(ctx, p, cwd); err != nil {
			return times, inits, err
		}
	}
	return times, inits, nil
}

// build compiles pkg in dir to out as the Dockerfile builds the image's programs.
func build(ctx context.Context, dir, out, pkg string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-ldflags", "-s -w", "-o", out, pkg)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build %s in %s: %v\n%s", pkg, dir, err, b)
	}
	return nil
}

// start runs p once with env as its whole environment and returns the time
// from start to exit. A role started without its inputs must stop with an
// error annotation; anything else means it did not stop where measured.
func start(ctx context.Context, p program, cwd string, env []string) (time.Duration, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, p.path, p.args...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = cwd, append([]string{}, env...), &stdout, &stderr
	t0 := time.Now()
	err := cmd.Run()
	d := time.Since(t0)
	if ctx.Err() != nil {
		return 0, ctx.Err() // interrupted: the role did not stop on its own
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || !strings.Contains(stdout.String()+stderr.String(), "::error") {
		return 0, fmt.Errorf("%s %v: want an input error and a non-zero exit, got %v:\n%s%s", p.path, p.args, err, &stdout, &stderr)
	}
	return d, nil
}

// initCost is what package initialisation took in one start, from GODEBUG=inittrace=1.
type initCost struct {
	clock         time.Duration
	bytes, allocs int64
}

// inittrace sums the "init <pkg> @… ms, <clock> ms clock, <bytes> bytes, <allocs> allocs"
// lines of several starts and returns the start with the median clock.
func inittrace(ctx context.Context, p program, cwd string) (initCost, error) {
	var runs []initCost
	for range 21 {
		var out bytes.Buffer
		cmd := exec.CommandContext(ctx, p.path, p.args...)
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = cwd, []string{"GODEBUG=inittrace=1"}, &out, &out
		_ = cmd.Run() // the role fails on its missing inputs, as measured
		var c initCost
		for _, line := range strings.Split(out.String(), "\n") {
			f := strings.Fields(line)
			if len(f) < 11 || f[0] != "init" || f[6] != "clock," {
				continue
			}
			clock, err1 := strconv.ParseFloat(f[4], 64)
			b, err2 := strconv.ParseInt(f[7], 10, 64)
			a, err3 := strconv.ParseInt(f[9], 10, 64)
			if err := errors.Join(err1, err2, err3); err != nil {
				return initCost{}, fmt.Errorf("inittrace line %q: %w", line, err)
			}
			c.clock += time.Duration(clock * float64(time.Millisecond))
			c.bytes += b
			c.allocs += a
		}
		runs = append(runs, c)
	}
	slices.SortFunc(runs, func(a, b initCost) int { return int(a.clock - b.clock) })
	return runs[len(runs)/2], nil
}

// output runs name with args in dir and returns its trimmed standard output.
func output(ctx context.Context, dir, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}

func mean(ds []time.Duration) time.Duration {
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return sum / time.Duration(len(ds))
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }
