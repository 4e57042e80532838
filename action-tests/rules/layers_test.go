package rules

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

// metaJobPackages are the packages that each do one job of the workflow.
// They sit side by side: each imports only packages below them (cost,
// ownership, gatecheck, runpod, ghapi, …), never another job, and never the
// runner's interface (actionio, actionkit), which only the action mains use.
// What two jobs share (the gate check's record and protocol, resource names)
// lives below them: pkg/gatecheck, pkg/ownership.
var metaJobPackages = []string{"provision", "watchdog", "gate", "cleanup", "reap", "history", "localgate", "serverless"}

// TestJobPackagesImportOnlyDownward checks the dependency graph, transitively:
// the watchdog builds its cost report without cleanup, provision names its
// retention artifact without the reaper and leaves writing outputs to its
// action's main, provision, history and the local gate read and publish gates
// through pkg/gatecheck, and the reaper reads the Serverless lane's names from
// pkg/ownership; generally, no job package depends on another or on the
// runner's interface.
func TestJobPackagesImportOnlyDownward(t *testing.T) {
	args := []string{"list", "-f", `{{.ImportPath}} {{join .Deps " "}}`}
	for _, p := range metaJobPackages {
		args = append(args, "./pkg/"+p)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = metaRepoRoot
	out, err := cmd.CombinedOutput()
	assert.NilError(t, err, "%s", out)
	deps := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		deps[strings.TrimPrefix(fields[0], metaModule+"/pkg/")] = fields[1:]
	}
	assert.Equal(t, len(deps), len(metaJobPackages), "%s", out)

	var problems []string
	for _, job := range metaJobPackages {
		for _, below := range []string{"actionio", "actionkit"} {
			if slices.Contains(deps[job], metaModule+"/pkg/"+below) {
				problems = append(problems, "pkg/"+job+" depends on pkg/"+below+": only an action's main talks to the runner")
			}
		}
		for _, other := range metaJobPackages {
			if other != job && slices.Contains(deps[job], metaModule+"/pkg/"+other) {
				problems = append(problems, "pkg/"+job+" depends on pkg/"+other+": a job package imports no other job")
			}
		}
	}
	assert.Check(t, len(problems) == 0, "\n  %s", strings.Join(problems, "\n  "))

	// The edges this repository once had, named so that their return reads plainly.
	for _, edge := range [][2]string{{"watchdog", "cleanup"}, {"provision", "reap"}, {"provision", "actionio"},
		{"provision", "gate"}, {"history", "gate"}, {"localgate", "gate"}, {"reap", "serverless"}} {
		assert.Check(t, !slices.Contains(deps[edge[0]], metaModule+"/pkg/"+edge[1]), "go list -deps ./pkg/%s shows pkg/%s", edge[0], edge[1])
	}
}

// TestNoPackageImportsItsOwnName: nothing below the actions imports them, and a reader who meets provision.Run finds one
// function, not two. Each action's room is package <role>action for that
// reason (actions/provision is provisionaction, which imports pkg/provision),
// and no other package of this module may import a package of its own name.
func TestNoPackageImportsItsOwnName(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-test", "-f", `{{.ImportPath}}|{{.Name}}|{{join .Imports " "}}`, "./...")
	cmd.Dir = metaRepoRoot
	out, err := cmd.CombinedOutput()
	assert.NilError(t, err, "%s", out)
	names := map[string]string{}
	type pkg struct {
		path, name string
		imports    []string
	}
	var ours []pkg
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.SplitN(line, "|", 3)
		if len(f) != 3 {
			continue
		}
		path, _, _ := strings.Cut(f[0], " ") // "p [p.test]" for a package compiled with its tests
		names[path] = f[1]
		if strings.HasPrefix(path, metaModule) && !strings.HasSuffix(path, ".test") {
			ours = append(ours, pkg{path: path, name: f[1], imports: strings.Fields(f[2])})
		}
	}
	var problems []string
	for _, p := range ours {
		// The actions sit on top: only the programs (pkg/cmd/...), the rooms
		// themselves, the end-to-end tests and the rehearsal (pkg/rehearse,
		// which runs them in its process as the runner runs the image's
		// program) may import them.
		top := strings.HasPrefix(p.path, metaModule+"/actions") || strings.HasPrefix(p.path, metaModule+"/pkg/cmd/") ||
			strings.HasPrefix(p.path, metaModule+"/action-tests") || p.path == metaModule+"/pkg/rehearse"
		for _, imp := range p.imports {
			imp, _, _ = strings.Cut(imp, " ")
			if imp != p.path && names[imp] == p.name && p.name != "main" {
				problems = append(problems, fmt.Sprintf("%s (package %s) imports %s, also package %s", p.path, p.name, imp, p.name))
			}
			if !top && (imp == metaModule+"/actions" || strings.HasPrefix(imp, metaModule+"/actions/")) {
				problems = append(problems, fmt.Sprintf("%s imports %s: only pkg/cmd's programs import the actions", p.path, imp))
			}
		}
	}
	assert.Assert(t, len(ours) > 50, "go list found only %d packages of this module", len(ours))
	assert.Check(t, len(problems) == 0, "\n  %s", strings.Join(slices.Compact(problems), "\n  "))
}
