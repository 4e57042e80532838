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
		assert.Check(t, is.Equal(*cfg.MaxRunSpendUSD, 2*money.Dollar+50*money.Cent))
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
		{name: "build image without a build command", change: func(o *Options) { o.BuildImage = "nvidia/cuda:12.6.3-devel-ubuntu22.04" },
			wantErr: `build image "nvidia/cuda:12.6.3-devel-ubuntu22.04" without a build command`},
		{name: "blank build command", change: func(o *Options) { o.BuildCommand = " " }, wantErr: "build command is blank"},
		{name: "build image at latest", change: func(o *Options) { o.BuildCommand, o.BuildImage = "make archive", "nvidia/cuda:latest" },
			wantErr: "not latest or none"},
		{name: "build image untagged", change: func(o *Options) { o.BuildCommand, o.BuildImage = "make archive", "nvidia/cuda" },
			wantErr: "want an exact tag"},
		{name: "build image not a reference", change: func(o *Options) { o.BuildCommand, o.BuildImage = "make archive", "nvidia/cuda:12.6\nx: y" },
			wantErr: "want a container image reference"},
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

// With a build command, Render writes the lane in four parts around the
// repository's own GPU job: the hosted build in the pinned image, the
// archive downloaded with one bounded retry, the test command last; it
// lints and grants what each part needs.
func TestRenderOwnJobLane(t *testing.T) {
	for _, runnerApp := range []bool{false, true} {
		o := renderOptions()
		o.RunnerApp, o.BuildCommand, o.TestCommand = runnerApp, "make archive", "./gpu-tests/run.sh"
		o.BuildImage = "nvidia/cuda:12.6.3-devel-ubuntu22.04@sha256:" + strings.Repeat("ab", 32)
		files, err := Render(o)
		assert.NilError(t, err)
		findings, err := Lint(files)
		assert.NilError(t, err)
		assert.Check(t, is.Len(findings, 0))
		lane := files[0].Text
		assert.Check(t, is.Len(PermissionProblems(lane, SuiteNeedsOf), 0))
		var doc struct {
			Jobs map[string]struct {
				Uses      string `yaml:"uses"`
				Container string `yaml:"container"`
				Steps     []struct {
					Name string `yaml:"name"`
					Run  string `yaml:"run"`
				} `yaml:"steps"`
			} `yaml:"jobs"`
		}
		assert.NilError(t, yaml.Unmarshal([]byte(lane), &doc))
		for _, part := range []string{"authorize", "provision", "watchdog", "finish"} {
			assert.Check(t, is.Equal(doc.Jobs[part].Uses, "my-org/runpod-gpu/.github/workflows/gpu-lane-"+part+".yml@v1"))
		}
		assert.Check(t, is.Equal(doc.Jobs["build"].Container, o.BuildImage))
		assert.Check(t, is.Equal(doc.Jobs["build"].Steps[1].Run, "make archive"))
		gpu := doc.Jobs["gpu"].Steps
		assert.Assert(t, is.Len(gpu, 4))
		assert.Check(t, is.Equal(gpu[2].Run, "tar -xzf "+TestArchive))
		assert.Check(t, is.Equal(gpu[3].Name, "Run GPU tests"))
		assert.Check(t, is.Equal(gpu[3].Run, "./gpu-tests/run.sh"))
		assert.Check(t, strings.Contains(lane, "RUNPOD_GPU_RUNNER_APP_PRIVATE_KEY") == runnerApp)
		assert.Check(t, strings.Contains(lane, "runner-app-id: ${{ vars.RUNPOD_GPU_RUNNER_APP_ID }}") == runnerApp)
	}
}
