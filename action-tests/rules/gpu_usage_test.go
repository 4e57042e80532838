package rules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/history"
)

// TestGPUUsageStepsMatchTheHistory: the lane's GPU jobs sample exactly what
// the cost history parses (history.UsageQuery, without header or units) and
// print it into their log the way the history reads it (history.UsageLinePrefix
// and the pod id), from inside the test step, which is the jobs' last: no
// step uploads anything after the pull request's code ran. The cost model's
// description for your own GPU job says the same.
func TestGPUUsageStepsMatchTheHistory(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(metaRepoRoot, ".github", "workflows", "gpu-lane.yml"))
	assert.NilError(t, err)
	lane := string(data)
	for where, text := range map[string]string{"gpu-lane.yml": lane, docCostModel: docText(t, docCostModel)} {
		for _, want := range []string{"--query-gpu=" + history.UsageQuery, "--format=csv,noheader,nounits -l 1",
			"/" + history.UsageFileName, strings.TrimSpace(history.UsageLinePrefix)} {
			assert.Check(t, strings.Contains(text, want), "%s lacks %q", where, want)
		}
	}
	// Every GPU job of the lane (the first and the host-fault re-run) prints each pod's samples under its id.
	perPod := `print "` + history.UsageLinePrefix + `" pod " " $0`
	assert.Check(t, strings.Count(lane, perPod) == 2, "gpu-lane.yml: want both GPU jobs to print %q", perPod)
	assert.Check(t, strings.Count(lane, "POD_ID: ${{ matrix.pod.pod-id }}") == 2, "gpu-lane.yml: want both GPU jobs to name the pod")
	for _, gone := range []string{"Sample the GPU's memory and utilisation", "Keep the GPU usage", "nohup"} {
		assert.Check(t, !strings.Contains(lane, gone), "gpu-lane.yml: %q is gone: nothing of the lane outlives its step", gone)
	}
}
