package rules

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// module is the import path every package of the repository starts with.
const module = "github.com/org/runpod-gpu"

// goListDeps returns the import paths pkg needs to build as a program (not as
// a test), via `go list -deps -test=false` from the repository root.
func goListDeps(t *testing.T, pkg string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-test=false", "-f", "{{.ImportPath}}", pkg)
	cmd.Dir = metaRepoRoot
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok {
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, ee.Stderr)
	}
	assert.NilError(t, err, "go list -deps %s", pkg)
	return strings.Fields(string(out))
}

// fixturePackage says why path must not be linked into a shipped program, or
// "" when it may be: the simulators (and the contract validator and fake
// registry that live with them) and test libraries are for tests only.
func fixturePackage(path string) string {
	switch {
	case path == module+"/pkg/sim" || strings.HasPrefix(path, module+"/pkg/sim/"):
		return "a simulator package"
	case path == module+"/pkg/contract" || strings.HasPrefix(path, module+"/action-tests"):
		return "a test fixture package"
	case path == "testing" || strings.HasPrefix(path, "testing/") || path == "net/http/httptest" ||
		strings.HasPrefix(path, "gotest.tools/") || strings.HasPrefix(path, "github.com/stretchr/testify"):
		return "a test library"
	}
	return ""
}

// simulatorsShipIn are the shipped programs that may link the simulators, and why.
var simulatorsShipIn = map[string]string{
	"./pkg/cmd/runpod-gpu": "runpod-gpu rehearse plays the repository's workflows on the embedded simulated cloud",
}

// TestShippedProgramsCarryNoTestFixtures checks the dependency graph of every
// program that ships (the image's one program, which links every action, the
// CUDA proof, the Serverless worker, and the developer's commands): none may
// link a simulator, the contract validator or a test library, so they carry
// only what runs in production — except that the developer's command line
// carries the simulated cloud its rehearse command plays on (never a test
// library: the cloud serves on its own listeners, not httptest's). The demo,
// simcloud, the market simulation and the start-up benchmark are the
// simulators' own programs.
func TestShippedProgramsCarryNoTestFixtures(t *testing.T) {
	programs := []string{"./pkg/cmd/runpod-gpu-actions", "./pkg/cmd/cuda-smoke", "./pkg/cmd/serverless-worker",
		"./pkg/cmd/runpod-gpu", "./pkg/cmd/cost-history", "./pkg/cmd/local-gpu-gate"}
	for _, prog := range programs {
		t.Run(prog, func(t *testing.T) {
			var bad []string
			for _, dep := range goListDeps(t, prog) {
				why := fixturePackage(dep)
				if _, ok := simulatorsShipIn[prog]; ok && why == "a simulator package" {
					continue
				}
				if why != "" {
					bad = append(bad, dep+" ("+why+")")
				}
			}
			assert.Check(t, is.Len(bad, 0), "%s links %s", prog, strings.Join(bad, ", "))
		})
	}
}

// TestPrintingNeedsNoRequestPolicy keeps the low packages low: writing an
// action's log lines and outputs (actionio), redaction and the version need
// neither the HTTP request policy nor its retry library.
func TestPrintingNeedsNoRequestPolicy(t *testing.T) {
	forbidden := []string{module + "/pkg/reqpolicy", "github.com/hashicorp/go-retryablehttp"}
	for _, pkg := range []string{"./pkg/actionio", "./pkg/redact", "./pkg/version"} {
		t.Run(pkg, func(t *testing.T) {
			deps := goListDeps(t, pkg)
			for _, f := range forbidden {
				assert.Check(t, !slices.Contains(deps, f), "%s depends on %s", pkg, f)
			}
		})
	}
}

// TestFixtureCheckRecognisesFixtures guards the check above against a rule
// that matches nothing.
func TestFixtureCheckRecognisesFixtures(t *testing.T) {
	tests := []struct {
		path string
		want bool
	}{
		{path: module + "/pkg/sim/runpodsim", want: true},
		{path: module + "/pkg/sim/contract", want: true},
		{path: module + "/pkg/sim/registrysim", want: true},
		{path: module + "/pkg/contract", want: true},
		{path: "testing", want: true},
		{path: "net/http/httptest", want: true},
		{path: "gotest.tools/v3/assert", want: true},
		{path: module + "/pkg/simple", want: false},
		{path: module + "/pkg/registry", want: false},
		{path: "net/http", want: false},
	}
	for _, tc := range tests {
		assert.Check(t, (fixturePackage(tc.path) != "") == tc.want, tc.path)
	}
}

// TestNoTemplateEngineInTheImage: executing a text/template (or html/template)
// makes the linker keep every exported method of every type the program may
// hold in an interface, because templates call methods by name: 3.6 MB of
// go-github in the image's program. Its packages render text by hand instead
// (pkg/startup's script is a fixed set of placeholders). go-githubactions
// imports html/template, but the image never executes one, so only a direct
// import from this module's code is refused.
func TestNoTemplateEngineInTheImage(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./pkg/cmd/runpod-gpu-actions")
	cmd.Dir = metaRepoRoot
	out, err := cmd.CombinedOutput()
	assert.NilError(t, err, "%s", out)
	var bad []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], module+"/") {
			continue
		}
		for _, imp := range f[1:] {
			if imp == "text/template" || imp == "html/template" {
				bad = append(bad, f[0]+" imports "+imp)
			}
		}
	}
	assert.Check(t, is.Len(bad, 0), "%s", strings.Join(bad, "; "))
}
