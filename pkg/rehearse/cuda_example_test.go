package rehearse

import (
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// cudaExample is the worked CUDA project a team copies.
const cudaExample = "../../examples/cuda-vector-add"

// The CUDA example's own files, as they are in the repository, rehearse
// green: its CI in progress starts the lane, the hosted build job (CUDA's
// devel container) and the four parts run, the GPU job runs on the
// simulated pod's runner with its download, retry, unpack and test steps,
// and the gate passes.
func TestCUDAExampleRehearsesGreen(t *testing.T) {
	r := rehearse(t, cudaExample)
	assertGreen(t, r, "authorize", "build", "provision", "watchdog", "gpu", "finish", "finish / gate")
	p := r.Played[0]
	assert.Check(t, is.Equal(p.Workflow, ".github/workflows/runpod-gpu.yml"))
	assert.Check(t, is.Equal(p.CI, "CI"), "the example's CI workflow starts the lane")
}

// TestCUDAExampleGPUJobStepsRunForReal is the part of issue 38 that needs
// the workflow player to execute the GPU job's run: steps on the simulated
// pod and move artifact bytes through the simulated GitHub (issue 38, point
// 4): the build job's archive uploaded, downloaded by the GPU job, unpacked,
// its script run, results readable by the test. Today's player stands the
// caller's hosted jobs done and runs the GPU job's steps as names with a
// duration, so there is nothing to assert yet.
func TestCUDAExampleGPUJobStepsRunForReal(t *testing.T) {
	t.Skip("TODO(issue 38 point 4): needs the workflow player to run the GPU job's run: steps and move artifacts; " +
		"the example's test binary needs a real GPU, so the archive the player moves must be a stand-in built by the test")
}
