package rules

// The cost history prices the pods the reaper deleted from the reaper's
// decision record: reap.yml must keep it under the name the history looks
// for (ownership.ReapRecordPrefix<run>-<attempt>), as the file the action writes.

import (
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/reap"
)

func TestReaperKeepsItsRecordWhereTheHistoryReadsIt(t *testing.T) {
	wf := metaParseWorkflow(t, "reap.yml", metaWorkflowFiles(t)["reap.yml"])
	found := false
	for _, step := range wf.Jobs["reap"].Steps {
		if step.With["record-path"] != "" {
			assert.Check(t, is.Equal(step.With["record-path"], reap.DefaultRecordPath))
		}
		if name := step.With["name"]; name != "" && step.With["path"] == reap.DefaultRecordPath {
			found = true
			assert.Check(t, is.Equal(name, ownership.ReapRecordPrefix+"${{ github.run_id }}-${{ github.run_attempt }}"))
		}
	}
	assert.Check(t, found, "reap.yml uploads no artifact of %s", reap.DefaultRecordPath)
}
