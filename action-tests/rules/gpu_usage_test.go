package rules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/history"
)

// TestGPUUsageStepsMatchTheHistory: the lane's GPU job samples exactly what
// the cost history parses (history.UsageQuery, without header or units) and
// uploads it under the name and file the history downloads (in gpu-lane.yml,
// one per pod: its GPU jobs are a matrix); the cost model's step for your own
// GPU job says the same.
func TestGPUUsageStepsMatchTheHistory(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(metaRepoRoot, ".github", "workflows", "gpu-lane.yml"))
	assert.NilError(t, err)
	lane := string(data)
	for where, text := range map[string]string{"gpu-lane.yml": lane, docCostModel: docText(t, docCostModel)} {
		for _, want := range []string{"--query-gpu=" + history.UsageQuery, "--format=csv,noheader,nounits -l 1",
			history.UsageArtifactPrefix + "${{ github.run_id }}-${{ github.run_attempt }}"} {
			assert.Check(t, strings.Contains(text, want), "%s lacks %q", where, want)
		}
		assert.Check(t, strings.Count(text, "/"+history.UsageFileName) >= 2, "%s: the samples are written to and uploaded from %s", where, history.UsageFileName)
	}
	// Every GPU job of the lane (the first and the host-fault re-run) samples, each pod under its own name.
	perPod := history.UsageArtifactPrefix + "${{ github.run_id }}-${{ github.run_attempt }}-${{ matrix.pod.pod-id }}"
	assert.Check(t, strings.Count(lane, perPod) == 2, "gpu-lane.yml: want both GPU jobs to upload %q", perPod)
	for _, name := range []string{"Sample the GPU's memory and utilisation", "Keep the GPU usage"} {
		assert.Check(t, strings.Count(lane, "- name: "+name) == 2, "gpu-lane.yml: want the step %q in both GPU jobs", name)
	}
}
