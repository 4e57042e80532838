package ownership

import (
	"testing"

	"gotest.tools/v3/assert"
)

func tags() Tags {
	return Tags{Repository: "org/gpu-project", Workflow: ".github/workflows/gpu.yml", RunID: 9001, Attempt: 2, Candidate: 3}
}

func TestRoundTrip(t *testing.T) {
	in := tags()
	assert.Equal(t, in.PodName(), "rgpu-9001-2-c3")
	got, err := FromPod(in.PodName(), in.Env())
	assert.NilError(t, err)
	assert.DeepEqual(t, got, in)
	assert.Check(t, got.SameAttempt("ORG/gpu-project", 9001, 2))
	assert.Check(t, !got.SameAttempt("org/gpu-project", 9001, 3))
}

func TestFromPodRejects(t *testing.T) {
	tests := []struct {
		name    string
		podName string
		mutate  func(map[string]string)
		wantErr string
	}{
		{name: "untagged", mutate: func(e map[string]string) { clear(e) }, wantErr: "not a runpod-gpu pod"},
		{name: "foreign marker", mutate: func(e map[string]string) { e[EnvOwner] = "other-tool:x" }, wantErr: "not a runpod-gpu pod"},
		{name: "malformed run id", mutate: func(e map[string]string) { e[EnvRunID] = "12x" }, wantErr: "is not a number"},
		{name: "zero attempt", mutate: func(e map[string]string) { e[EnvAttempt] = "0" }, wantErr: "run attempt 0"},
		{name: "bad repository", mutate: func(e map[string]string) { e[EnvRepository] = "no-slash" }, wantErr: `repository "no-slash"`},
		{name: "workflow outside .github", mutate: func(e map[string]string) { e[EnvOwner] = "runpod-gpu:scripts/x.yml" }, wantErr: "workflow"},
		{name: "name disagrees", podName: "rgpu-9001-1-c3", wantErr: "disagrees with its tags"},
		{name: "hand-made name", podName: "gpu-box", wantErr: "disagrees with its tags"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := tags().Env()
			if tc.mutate != nil {
				tc.mutate(env)
			}
			name := tc.podName
			if name == "" {
				name = tags().PodName()
			}
			_, err := FromPod(name, env)
			assert.ErrorContains(t, err, tc.wantErr)
		})
	}
}

func TestParsePodName(t *testing.T) {
	tests := []struct {
		name                       string
		wantRun                    int64
		wantAttempt, wantCandidate int
		wantOK                     bool
	}{
		{name: "rgpu-9001-2-c3", wantRun: 9001, wantAttempt: 2, wantCandidate: 3, wantOK: true},
		{name: "rgpu-9001-2-c12", wantRun: 9001, wantAttempt: 2, wantCandidate: 12, wantOK: true},
		{name: "rgpu-9223372036854775807-1-c1", wantRun: 1<<63 - 1, wantAttempt: 1, wantCandidate: 1, wantOK: true},
		{name: "rgpu-9223372036854775808-1-c1"},
		{name: "rgpu-9001-2-c0"},
		{name: "rgpu-9001-2-c03"},
		{name: "rgpu-9001-2-c-1"},
		{name: "rgpu-9001-2-c+5"},
		{name: "rgpu-9001-2-c"},
		{name: "rgpu-9001-2-c3x"},
		{name: "rgpu-9001-0-c3"},
		{name: "rgpu-09001-2-c3"},
		{name: "rgpu-9001-2-3-c4"},
		{name: "rgpu-9001-c3"},
		{name: "rgpu-hand-made"},
		{name: "RGPU-9001-2-c3"},
		{name: "gpu-box"},
		{name: ""},
	}
	for _, tc := range tests {
		run, attempt, candidate, ok := ParsePodName(tc.name)
		assert.Equal(t, ok, tc.wantOK, "%q", tc.name)
		assert.Equal(t, run, tc.wantRun, "%q", tc.name)
		assert.Equal(t, attempt, tc.wantAttempt, "%q", tc.name)
		assert.Equal(t, candidate, tc.wantCandidate, "%q", tc.name)
	}
	assert.Equal(t, PodNamePattern(9001, 2), "rgpu-9001-2-c<N>")
}

// FuzzParsePodName checks that the parser reads exactly the names PodName writes.
func FuzzParsePodName(f *testing.F) {
	for _, seed := range []string{"rgpu-1-1-c1", "rgpu-9001-2-c03", "rgpu-1-1-c+1", "rgpu--1-c1"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, name string) {
		run, attempt, candidate, ok := ParsePodName(name)
		if !ok {
			return
		}
		written := Tags{RunID: run, Attempt: attempt, Candidate: candidate}.PodName()
		if written != name {
			t.Fatalf("%q parsed to run %d attempt %d candidate %d, which PodName writes as %q", name, run, attempt, candidate, written)
		}
	})
}

func FuzzFromPod(f *testing.F) {
	f.Add("rgpu-1-1-c1", "org/r", "runpod-gpu:.github/workflows/a.yml", "1", "1", "1")
	f.Fuzz(func(t *testing.T, name, repo, owner, run, attempt, cand string) {
		env := map[string]string{EnvRepository: repo, EnvOwner: owner, EnvRunID: run, EnvAttempt: attempt, EnvCandidate: cand}
		got, err := FromPod(name, env)
		if err != nil {
			return
		}
		if got.PodName() != name || got.Validate() != nil {
			t.Fatalf("accepted %q with tags %+v", name, got)
		}
	})
}
