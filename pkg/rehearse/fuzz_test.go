package rehearse

import (
	"testing"
)

// A workflow file is outside data: whatever it holds, reading it and
// checking its wiring returns mistakes or an error, never a panic.
func FuzzCheckWiring(f *testing.F) {
	suite, err := embeddedSuite()
	if err != nil {
		f.Fatal(err)
	}
	f.Add("on: {workflow_run: {workflows: [CI]}}\njobs: {gpu: {uses: org/runpod-gpu/.github/workflows/gpu-lane.yml@v1, secrets: inherit}}\n")
	f.Add("on: push\njobs: {a: {uses: org/runpod-gpu/.github/workflows/gpu-lane-authorize.yml@v1, with: {gpu-job-name: [1]}}, b: {runs-on: '${{ x.runner-label }}', steps: [{}]}}\n")
	f.Add("permissions: write-all\njobs: {a: {uses: x/runpod-gpu/.github/workflows/gpu-lane.yml@v1, permissions: {checks: bogus}}}\n")
	f.Fuzz(func(t *testing.T, text string) {
		wf, err := parseWorkflowFile(".github/workflows/x.yml", text)
		if err != nil {
			return
		}
		_ = checkWiring(wf, []*workflowFile{wf}, suite)
	})
}
