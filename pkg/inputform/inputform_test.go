package inputform

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestCheck(t *testing.T) {
	sha := strings.Repeat("a", 40)
	tests := []struct {
		kind, value string
		wantErr     string // "" when valid
	}{
		{kind: SHA, value: sha},
		{kind: SHA, value: sha + "\n::warning::x", wantErr: `"` + sha + `\n::warning::x": want a full commit SHA`},
		{kind: SHA, value: "../x", wantErr: `"../x": want a full commit SHA`},
		{kind: Label, value: "gpu-approved"},
		{kind: Label, value: "needs GPU 🚀"},
		{kind: Label, value: "gpu\napproved", wantErr: "want a GitHub label name: 1 to 50 characters"},
		{kind: Label, value: strings.Repeat("l", 51), wantErr: "want a GitHub label name"},
		{kind: Label, value: "  ", wantErr: "want a GitHub label name"},
		{kind: Ref, value: "org/app/.github/workflows/runpod-gpu.yml@refs/heads/main"},
		{kind: Ref, value: "refs/heads/main\n::stop-commands::x", wantErr: "want a ref"},
		{kind: Ref, value: "refs/heads/../../x", wantErr: "want a ref"},
		{kind: Ref, value: "refs/heads/a b", wantErr: "want a ref"},
		{kind: Branch, value: "main"},
		{kind: Branch, value: "release/v1.2"},
		{kind: Branch, value: "main;id", wantErr: `"main;id": want a branch name`},
		{kind: Branch, value: "$(id)", wantErr: "want a branch name"},
		{kind: Branch, value: "../x", wantErr: "want a branch name"},
		{kind: Branch, value: "-x", wantErr: "want a branch name"},
		{kind: Branch, value: "a..b", wantErr: "want a branch name"},
		{kind: Branch, value: "x.lock", wantErr: "want a branch name"},
		{kind: Branch, value: "x/", wantErr: "want a branch name"},
		{kind: Artifact, value: "runpod-gpu-serverless-ledger"},
		{kind: Artifact, value: "../x", wantErr: `"../x": want an artifact name`},
		{kind: Artifact, value: "a..b", wantErr: "want an artifact name"},
		{kind: Artifact, value: "a:b", wantErr: "want an artifact name"},
		{kind: Price, value: "0.25"},
		{kind: Price, value: "0"},
		{kind: Price, value: "1e308", wantErr: `"1e308": want a positive number of USD per hour up to 1000`},
		{kind: Price, value: "-1", wantErr: "want a positive number"},
		{kind: Price, value: "NaN", wantErr: "want a positive number"},
		{kind: Name, value: "CI GPU gate"},
		{kind: Name, value: "CI / GPU tests (ampere)"},
		{kind: Name, value: "GPU tests\n::warning::x", wantErr: "want a name of 1 to 100 characters on one line"},
		{kind: Name, value: "GPU <b>tests</b>", wantErr: "want a name"},
		{kind: Name, value: "tab\there", wantErr: "want a name"},
		{kind: Name, value: "esc\x1b[2J", wantErr: "want a name"},
		{kind: RunnerName, value: "runpod-gpu-9100-1-c1-0123456789abcdef"},
		{kind: RunnerName, value: "", wantErr: "want a runner label"},
		{kind: PodID, value: "xedezhzb9la3ye"},
		{kind: PodID, value: "<img src=x>", wantErr: "want a RunPod pod id"},
		{kind: GPUType, value: "NVIDIA GeForce RTX 4090"},
		{kind: GPUType, value: "[x](https://e.example)", wantErr: "want an exact RunPod GPU id"},
		{kind: Tier, value: "ampere"},
		{kind: Tier, value: "ampere\nx", wantErr: "want a tier name of 1-32 lower-case letters"},
		{kind: Image, value: "runpod/pytorch:2.4.0-py3.11-cuda12.4.1-devel-ubuntu22.04"},
		{kind: Image, value: "ghcr.io/org/runner:v1@sha256:" + strings.Repeat("c", 64)},
		{kind: Image, value: "$(id)", wantErr: "want an image reference"},
		{kind: Image, value: "http://evil.example/x", wantErr: "want an image reference"},
		{kind: Image, value: "runpod/pytorch\nid", wantErr: "want an image reference"},
		{kind: "no-such-kind", value: "anything"},
	}
	for _, tc := range tests {
		t.Run(tc.kind+" "+tc.value, func(t *testing.T) {
			err := Check(tc.kind, tc.value)
			if tc.wantErr == "" {
				assert.NilError(t, err)
				return
			}
			assert.Check(t, is.ErrorContains(err, tc.wantErr))
		})
	}
}

// FuzzOneLineKinds: no value a line kind accepts holds a control character
// (a newline would start a workflow command in a log; an escape sequence
// would repaint a terminal) or markup angle brackets.
func FuzzOneLineKinds(f *testing.F) {
	for _, seed := range []string{"CI GPU gate", "gpu\napproved", "main;id", "../x", "\x1b[31m", "<b>", "refs/heads/main", "0.25"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for kind := range Forms {
			if Check(kind, s) != nil {
				continue
			}
			if strings.ContainsAny(s, "\n\r\x1b\x00<>") {
				t.Errorf("%s accepts %q", kind, s)
			}
		}
	})
}
