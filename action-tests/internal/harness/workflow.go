package harness

import (
	"os"

	"github.com/org/runpod-gpu/pkg/workflowplay"
)

// The workflow player is product code (pkg/workflowplay, which runpod-gpu
// rehearse uses too); the lanes' tests use it through these names.
type (
	// Workflow is a parsed workflow file.
	Workflow = workflowplay.Workflow
	// WorkflowJob is one job of a workflow.
	WorkflowJob = workflowplay.WorkflowJob
	// Play plays a workflow; set Load to LoadWorkflow to play this repository's.
	Play = workflowplay.Play
	// JobRun is what became of a played job.
	JobRun = workflowplay.JobRun
	// Contexts are the expression contexts a job is played with.
	Contexts = workflowplay.Contexts
)

// ParseWorkflow reads a workflow's text.
func ParseWorkflow(text string) (*Workflow, error) { return workflowplay.ParseWorkflow(text) }

// Interpolate replaces each ${{ … }} in s by its value as a string.
func Interpolate(s string, ctx Contexts) (string, error) { return workflowplay.Interpolate(s, ctx) }

// LoadWorkflow reads this repository's workflow file (.github/workflows/<file>),
// the suite's reusable workflows as the tests play them (Play.Load).
func LoadWorkflow(file string) (*Workflow, error) {
	data, err := os.ReadFile(RepoRoot + "/.github/workflows/" + file)
	if err != nil {
		return nil, err
	}
	return workflowplay.ParseWorkflow(string(data))
}
