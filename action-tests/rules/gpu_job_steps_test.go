package rules

import (
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	"gotest.tools/v3/assert"
)

// postStepActionRE names the actions whose action.yml has a post step, which
// the runner runs after every main step, the tests included.
var postStepActionRE = regexp.MustCompile(`^actions/(checkout|cache|setup-[a-z]+)@`)

// backgroundRE finds what keeps a process alive past its step.
var backgroundRE = regexp.MustCompile(`\b(nohup|setsid|disown)\b`)

// gpuJobStepProblems checks the jobs of one workflow that run on a pod's
// runner: their tests are their last step, no action before them has a post
// step (it would run after the tests with the run's runtime token in its
// environment), and no run step leaves a process behind on purpose.
func gpuJobStepProblems(where string, wf metaWorkflow) []string {
	var problems []string
	for id, job := range wf.Jobs {
		if on, _ := job.RunsOn.(string); !strings.Contains(on, "runner-label") || len(job.Steps) == 0 {
			continue
		}
		if last := job.Steps[len(job.Steps)-1]; last.Name != "Run GPU tests" {
			problems = append(problems, where+": job "+id+": the last step is "+last.Name+", not the tests: a step after the pull request's code holds the runtime token")
		}
		for _, st := range job.Steps {
			if postStepActionRE.MatchString(st.Uses) {
				problems = append(problems, where+": job "+id+": step "+st.Name+" uses "+st.Uses+", whose post step runs after the tests")
			}
			if backgroundRE.MatchString(st.Run) {
				problems = append(problems, where+": job "+id+": step "+st.Name+" leaves a process behind ("+backgroundRE.FindString(st.Run)+")")
			}
		}
	}
	return problems
}

// TestGPUJobsEndWithTheirTests holds every GPU job of the workflows and of the
// documentation's callers to it: nothing of the lane, and no step with the
// runtime token, follows the pull request's code on the pod.
func TestGPUJobsEndWithTheirTests(t *testing.T) {
	var problems []string
	gpuJobs := 0
	for name, text := range metaWorkflowFiles(t) {
		wf := metaParseWorkflow(t, name, text)
		gpuJobs += countGPUJobs(wf)
		problems = append(problems, gpuJobStepProblems(name, wf)...)
	}
	for _, b := range readmeYAMLBlocks(t) {
		var wf metaWorkflow
		if yaml.Unmarshal([]byte(b.text), &wf) != nil {
			continue // a fragment, not a workflow
		}
		gpuJobs += countGPUJobs(wf)
		problems = append(problems, gpuJobStepProblems(b.page+" "+b.heading, wf)...)
	}
	assert.Assert(t, gpuJobs >= 4, "found only %d GPU jobs", gpuJobs)
	assert.Assert(t, len(problems) == 0, "%s", strings.Join(problems, "\n"))
}

func countGPUJobs(wf metaWorkflow) int {
	n := 0
	for _, job := range wf.Jobs {
		if on, _ := job.RunsOn.(string); strings.Contains(on, "runner-label") {
			n++
		}
	}
	return n
}

// The check finds each planted mistake.
func TestGPUJobStepProblemsDetectsMistakes(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{name: "an upload after the tests", want: "the last step is Keep",
			yaml: "jobs: {gpu: {runs-on: '${{ x.runner-label }}', steps: [{name: Run GPU tests, run: make}, {name: Keep, uses: actions/upload-artifact@v4}]}}"},
		{name: "checkout's post step", want: "whose post step runs after the tests",
			yaml: "jobs: {gpu: {runs-on: '${{ x.runner-label }}', steps: [{name: Out, uses: actions/checkout@v4}, {name: Run GPU tests, run: make}]}}"},
		{name: "a sampler left running", want: "leaves a process behind (nohup)",
			yaml: "jobs: {gpu: {runs-on: '${{ x.runner-label }}', steps: [{name: Sample, run: nohup nvidia-smi -l 1 &}, {name: Run GPU tests, run: make}]}}"},
		{name: "a hosted job is not checked",
			yaml: "jobs: {build: {runs-on: ubuntu-latest, steps: [{name: Out, uses: actions/checkout@v4}, {name: Up, uses: actions/upload-artifact@v4}]}}"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var wf metaWorkflow
			assert.NilError(t, yaml.Unmarshal([]byte(tc.yaml), &wf))
			got := strings.Join(gpuJobStepProblems("x.yml", wf), "\n")
			if tc.want == "" {
				assert.Equal(t, got, "")
				return
			}
			assert.Assert(t, strings.Contains(got, tc.want), "got %q", got)
		})
	}
}
