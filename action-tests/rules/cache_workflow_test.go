package rules

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

// The GPU job runs the PR's code in the default branch's context
// (workflow_run), so its runtime token can write Actions caches that
// default-branch workflows restore. Workflows that publish, and the lane's own
// jobs, restore no cache.
func TestMetaTrustedWorkflowsRestoreNoCache(t *testing.T) {
	files := metaWorkflowFiles(t)
	for _, name := range []string{"release.yml", "gpu-lane.yml", "ci.yml"} {
		text, ok := files[name]
		assert.Assert(t, ok, "no workflow %s", name)
		for _, problem := range cacheRestores(metaParseWorkflow(t, name, text)) {
			t.Errorf("%s: %s", name, problem)
		}
	}
}

// cacheRestores lists the steps of wf that restore an Actions cache: actions/cache
// (or its restore half), and actions/setup-* without `cache: false`.
func cacheRestores(wf metaWorkflow) []string {
	var problems []string
	for id, job := range wf.Jobs {
		for _, st := range job.Steps {
			action, _, _ := strings.Cut(st.Uses, "@")
			switch {
			case action == "actions/cache" || action == "actions/cache/restore":
				problems = append(problems, "job "+id+" restores a cache with "+st.Uses)
			case strings.HasPrefix(action, "actions/setup-") && st.With["cache"] != "false":
				problems = append(problems, "job "+id+" uses "+action+" without `cache: false` (setup actions restore a cache by default)")
			}
		}
	}
	return problems
}

func TestMetaCacheRestoreCheckDetectsMistakes(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want int
	}{
		{name: "setup-go caches by default", yaml: "jobs: {b: {steps: [{uses: actions/setup-go@v5, with: {go-version: '1.26'}}]}}", want: 1},
		{name: "setup-go without cache", yaml: "jobs: {b: {steps: [{uses: actions/setup-go@v5, with: {cache: false}}]}}", want: 0},
		{name: "actions/cache", yaml: "jobs: {b: {steps: [{uses: actions/cache@v4, with: {path: x, key: k}}]}}", want: 1},
		{name: "restore half", yaml: "jobs: {b: {steps: [{uses: actions/cache/restore@v4}]}}", want: 1},
		{name: "other actions", yaml: "jobs: {b: {steps: [{uses: actions/checkout@v4}, {run: make}]}}", want: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, len(cacheRestores(metaParseWorkflow(t, "planted.yml", tc.yaml))), tc.want)
		})
	}
}
