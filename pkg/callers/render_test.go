package callers

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/money"
)

func renderOptions() Options {
	return Options{
		Suite: "my-org/runpod-gpu@v1", Workflows: []string{"CI", "Tests: GPU"}, TestCommand: "make test-gpu",
		Tiers:     []config.GPUTier{{Name: "ada", GPUIDs: []string{"NVIDIA GeForce RTX 4090", "NVIDIA L40S"}}},
		MinVRAMGB: 16, MaxRunSpendUSD: 2*money.Dollar + 50*money.Cent,
	}
}

// Render writes the four callers and the configuration; each caller lints
// and grants what the suite's workflow needs, the configuration loads.
func TestRenderWritesCallersThatLintAndGrant(t *testing.T) {
	for _, runnerApp := range []bool{false, true} {
		o := renderOptions()
		o.RunnerApp = runnerApp
		files, err := Render(o)
		assert.NilError(t, err)
		var paths []string
		for _, f := range files {
			paths = append(paths, f.Path)
		}
		assert.Check(t, is.DeepEqual(paths, []string{LanePath, ReapPath, CostsPath, RelayPath, ConfigPath}))
		findings, err := Lint(files)
		assert.NilError(t, err)
		assert.Check(t, is.Len(findings, 0))
		for _, f := range files[:4] {
			assert.Check(t, is.Len(PermissionProblems(f.Text, SuiteNeedsOf), 0), f.Path)
			assert.Check(t, is.Contains(f.Text, "uses: my-org/runpod-gpu/.github/workflows/"), f.Path)
		}
		lane := files[0].Text
		var doc struct {
			On struct {
				WorkflowRun struct {
					Workflows []string `yaml:"workflows"`
				} `yaml:"workflow_run"`
				MergeGroup *struct {
					Types []string `yaml:"types"`
				} `yaml:"merge_group"`
			} `yaml:"on"`
		}
		assert.NilError(t, yaml.Unmarshal([]byte(lane), &doc))
		assert.Check(t, is.DeepEqual(doc.On.WorkflowRun.Workflows, []string{"CI", "Tests: GPU"}))
		// A repository with a merge queue gets the gate on each group's head.
		assert.Assert(t, doc.On.MergeGroup != nil, lane)
		assert.Check(t, is.DeepEqual(doc.On.MergeGroup.Types, []string{"checks_requested"}))
		assert.Check(t, is.Contains(lane, "github.event.merge_group.head_sha"))
		assert.Check(t, strings.Contains(lane, "RUNPOD_GPU_RUNNER_APP_PRIVATE_KEY") == runnerApp)
		// The cost history reconciles with RunPod's billing only with the key.
		assert.Check(t, is.Contains(files[2].Text, "secrets: {RUNPOD_API_KEY: \"${{ secrets.RUNPOD_API_KEY }}\"}"))
		cfg, err := config.Parse([]byte(files[4].Text), ConfigPath)
		assert.NilError(t, err)
		assert.Check(t, is.Equal(*cfg.MaxRunSpendUSD, 2.5))
		assert.Check(t, is.Equal(cfg.MinVRAMGB, 16))
	}
}

func TestRenderRefuses(t *testing.T) {
	tests := []struct {
		name    string
		change  func(*Options)
		wantErr string
	}{
		{name: "suite without a ref", change: func(o *Options) { o.Suite = "my-org/runpod-gpu" }, wantErr: "want OWNER/runpod-gpu@REF"},
		{name: "another repository", change: func(o *Options) { o.Suite = "my-org/other@v1" }, wantErr: "want OWNER/runpod-gpu@REF"},
		{name: "no CI workflow", change: func(o *Options) { o.Workflows = nil }, wantErr: "no CI workflow name"},
		{name: "no test command", change: func(o *Options) { o.TestCommand = " " }, wantErr: "no test command"},
		{name: "no tier", change: func(o *Options) { o.Tiers = nil }, wantErr: "no GPU tier"},
		{name: "bad tier", change: func(o *Options) { o.Tiers = []config.GPUTier{{Name: "x"}} }, wantErr: "gpu_ids"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := renderOptions()
			tc.change(&o)
			_, err := Render(o)
			assert.ErrorContains(t, err, tc.wantErr)
		})
	}
}
