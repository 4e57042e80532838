package worker

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

// module is the import path every package of the repository starts with.
const module = "github.com/org/runpod-gpu"

// goList runs `go list` with args in this package's module and returns its lines.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list"}, args...)...).Output()
	if ee, ok := err.(*exec.ExitError); ok {
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, ee.Stderr)
	}
	assert.NilError(t, err, "go list %s", strings.Join(args, " "))
	return slices.DeleteFunc(strings.Split(string(out), "\n"), func(s string) bool { return s == "" })
}

// TestWorkerProgramLinksNoRunPodClient keeps the pod-side worker small: the
// program that runs this package (found wherever its main lives) speaks the
// job's wire format through jobwire and links neither the lane, the RunPod
// client, the request policy, the retry library nor the GitHub client.
func TestWorkerProgramLinksNoRunPodClient(t *testing.T) {
	forbidden := []string{module + "/pkg/serverless", module + "/pkg/runpod", module + "/pkg/reqpolicy",
		"github.com/hashicorp/go-retryablehttp", module + "/pkg/ghapi"}
	var programs []string
	for _, line := range goList(t, "-f", `{{if eq .Name "main"}}{{.ImportPath}} {{join .Imports " "}}{{end}}`, module+"/...") {
		fields := strings.Fields(line)
		if slices.Contains(fields[1:], module+"/pkg/serverless/worker") {
			programs = append(programs, fields[0])
		}
	}
	assert.Assert(t, len(programs) > 0, "no main package imports the worker")
	for _, prog := range programs {
		deps := goList(t, "-deps", "-test=false", "-f", "{{.ImportPath}}", prog)
		assert.Check(t, slices.Contains(deps, module+"/pkg/serverless/jobwire"), "%s does not link jobwire: is this still the worker?", prog)
		for _, f := range forbidden {
			assert.Check(t, !slices.Contains(deps, f), "%s links %s", prog, f)
		}
	}
}
