// Package lanes runs each action's real binary exactly as the GitHub
// Actions runner does — inputs as INPUT_* variables, outputs, summary and state
// through the file-command files, the event payload at GITHUB_EVENT_PATH, the
// API at GITHUB_API_URL — against the simulated cloud over loopback HTTP.
package lanes

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

// TestMain builds the image's binary once for the package (harness.Main).
func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }

// simulated is a real-clock simulated cloud with fast timings, plus a consumer
// repository workspace holding the config; its methods here are the steps and
// pull requests only the lanes use.
type simulated struct{ *harness.Simulated }

// lostRunnerTimeout is how long the simulated GitHub keeps the job of a runner lost with
// its pod in progress: GitHub's ten minutes, shortened for the real clock but still well
// past the watchdog's confirmation of a lost runtime (two polls of a second), as ten
// minutes are past its polls on GitHub.
const lostRunnerTimeout = 6 * time.Second

func startCloud(t *testing.T, market *runpodsim.Market, faults runpodsim.Faults, configYAML string) *simulated {
	t.Helper()
	c, err := cloud.Start(cloud.Options{
		Clock: simclock.Real{}, Market: market, Faults: faults,
		RunPodOptions: []runpodsim.Option{runpodsim.WithProvisioningDelay(200 * time.Millisecond)},
		GitHubOptions: []githubsim.Option{githubsim.WithRunnerLostTimeout(lostRunnerTimeout)},
	})
	assert.NilError(t, err)
	t.Cleanup(c.Close)
	c.Model.ProofTime = 700 * time.Millisecond
	ws := t.TempDir()
	assert.NilError(t, os.MkdirAll(filepath.Join(ws, ".github"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(ws, ".github", "runpod-gpu.yml"), []byte(configYAML), 0o644))
	return &simulated{&harness.Simulated{Cloud: c, Workspace: ws, RunID: 9100}}
}

// startCloudWith is startCloud with the cloud's options open to the test
// (the balance, for one); the timings are startCloud's.
func startCloudWith(t *testing.T, o cloud.Options, configYAML string) *simulated {
	t.Helper()
	o.Clock = simclock.Real{}
	o.GitHubOptions = append([]githubsim.Option{githubsim.WithRunnerLostTimeout(lostRunnerTimeout)}, o.GitHubOptions...)
	o.RunPodOptions = append([]runpodsim.Option{runpodsim.WithProvisioningDelay(200 * time.Millisecond)}, o.RunPodOptions...)
	c, err := cloud.Start(o)
	assert.NilError(t, err)
	t.Cleanup(c.Close)
	c.Model.ProofTime = 700 * time.Millisecond
	ws := t.TempDir()
	assert.NilError(t, os.MkdirAll(filepath.Join(ws, ".github"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(ws, ".github", "runpod-gpu.yml"), []byte(configYAML), 0o644))
	return &simulated{&harness.Simulated{Cloud: c, Workspace: ws, RunID: 9100}}
}
