package lanes

import (
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// The runner-dir input reaches the startup script's validation before any
// spend: a path the script could not quote safely stops the step, naming the
// key, with no runner minted and no pod created. (Process mode, where the
// directory decides whether the runner starts, is tested in pkg/sim/cloud.)
func TestProcessRunnerDirValidatedBeforeSpending(t *testing.T) {
	t.Parallel()
	s := startCloud(t, testMarket(testHost("h1", harness.A4000, true)), runpodsim.Faults{}, fastConfig)
	st := s.ProvisionStep(s.openPR(t))
	st.Inputs["runner-dir"] = "home/runner; rm -rf /"

	res := harness.RunStep(t, st)

	assert.Equal(t, res.ExitCode, 1, res.Stdout)
	assert.Check(t, is.Contains(res.Stdout, `runner_dir = "home/runner; rm -rf /": want an absolute path`))
	assert.Check(t, is.Len(s.RunPod.Pods(), 0))
	assert.Check(t, is.Len(s.GitHub.Runners(), 0))
}
