package lanes

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// A lane whose configured image has no runner (a custom CUDA image without
// the GitHub Actions runner): its first pod passes the CUDA proof and its
// startup script exits 5. The provision step pays for that one pod only,
// deletes it as the failure shows in its log, names the cause and the image
// in the rejection and the error, and gives the host no bad mark.
func TestOwnJobImageWithoutRunnerCostsOnePodAndNamesTheCause(t *testing.T) {
	t.Parallel()
	const image = "ghcr.io/acme/cuda-tests@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	s := startCloud(t, testMarket(testHost("h1", harness.A4000, true), testHost("h2", harness.A5000, true)), runpodsim.Faults{},
		fastConfig+"image: \""+image+"\"\n")
	s.Model.ImagesWithoutRunner = []string{image}

	res := harness.RunStep(t, s.ProvisionStep(s.openPR(t)))

	assert.Equal(t, res.ExitCode, 1, res.Stdout)
	assert.Check(t, is.Len(s.RunPod.Pods(), 1), "one pod paid for the image")
	assert.Check(t, is.Len(s.livePods(t), 0), "and deleted")
	assert.Check(t, is.Contains(res.Summary, "| rejected | the startup script exited with 5: the image has no runner (run.sh) at the runner directory |"))
	assert.Check(t, is.Contains(res.Stdout, "image "+image+" passed the CUDA proof but has no runner at /home/runner/run.sh"))
	assert.Check(t, is.Contains(res.Stdout, "no further pod is paid for this image"))
	assert.Check(t, !strings.Contains(res.Stdout, "EXITED while starting"), "not a generic pod exit")
	for _, line := range strings.Split(res.Stdout, "\n") {
		if strings.HasPrefix(line, "runpod-gpu::attempt ") {
			assert.Check(t, !strings.Contains(line, `"host":`), "no host verdict for the image's fault: %s", line)
		}
	}
	assertNoSecrets(t, s, res)
}
