package rules

import (
	"os/exec"
	"path/filepath"
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

// TestShippedProgramsCarryNoTestFixtures checks the dependency graph of every
// program in the image (each action, the CUDA proof, the Serverless worker):
// none may link a simulator, the contract validator or a test library, so the
// image carries only what runs in production.
func TestShippedProgramsCarryNoTestFixtures(t *testing.T) {
	// Each action is a package in actions/<role>, beside its action.yml,
	// linked into the image's one program.
	mains, err := filepath.Glob(filepath.Join(metaRepoRoot, "actions", "*", "action.yml"))
	assert.NilError(t, err)
	assert.Assert(t, len(mains) >= 9, "found only %d actions under actions/", len(mains))
	programs := []string{"./pkg/cmd/runpod-gpu-actions", "./pkg/cmd/cuda-smoke", "./pkg/cmd/serverless-worker"}
	for _, m := range mains {
		programs = append(programs, "./actions/"+filepath.Base(filepath.Dir(m)))
	}
	for _, prog := range programs {
		t.Run(prog, func(t *testing.T) {
			var bad []string
			for _, dep := range goListDeps(t, prog) {
				if why := fixturePackage(dep); why != "" {
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
