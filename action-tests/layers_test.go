package actiontests

import (
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
