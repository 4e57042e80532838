package githubsim

import (
	"encoding/json"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	"gotest.tools/v3/golden"

	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

// scenario drives one server through a provision-like sequence in-process and returns every
// response body, so two servers can be compared byte for byte.
func scenario(t *testing.T, seed uint64) []string {
	clock := simclock.NewVirtual(start)
	s := New(WithClock(clock), WithSeed(seed), WithToken(appToken, Identity{AppID: gateAppID, AppSlug: gateAppSlug}))
	assert.NilError(t, s.AddRepo(Repo{Owner: "octo", Name: "gpu-lib"}))
	_, err := s.AddPullRequest(repoName, PullRequestSpec{HeadRef: "fast", HeadSHA: sha('a'), Labels: []string{"gpu"}})
	assert.NilError(t, err)
	runID, err := s.AddWorkflowRun(WorkflowRunSpec{
		Repo: repoName, WorkflowPath: gpuWorkflow, Event: "pull_request", HeadBranch: "fast", PullRequests: []int{1},
		Jobs: []JobSpec{{Name: "gpu-tests", Labels: []string{"rp-1-c1"}, Steps: []StepSpec{
			{Name: "Set up job", Duration: 20 * time.Second}, {Name: "Run GPU tests", Duration: 3 * time.Minute},
		}}},
	})
	assert.NilError(t, err)

	var bodies []string
	call := func(method, target string, body any) {
		_, out := serveDirect(t, s, method, target, appToken, body)
		bodies = append(bodies, string(out))
	}
	call("POST", "/repos/octo/gpu-lib/actions/runners/generate-jitconfig", map[string]any{"name": "rp-1-c1", "runner_group_id": 1, "labels": []string{"rp-1-c1"}})
	_, err = s.RunnerConnect(jitConfigFrom(t, bodies[0]))
	assert.NilError(t, err)
	clock.Advance(time.Minute)
	call("GET", "/repos/octo/gpu-lib/actions/runners?name=rp-1-c1", nil)
	call("POST", "/repos/octo/gpu-lib/check-runs", map[string]any{"name": "CI GPU gate", "head_sha": sha('a'), "status": "in_progress"})
	clock.Advance(5 * time.Minute)
	call("GET", "/repos/octo/gpu-lib/actions/runs/"+itoa(runID)+"/attempts/1/jobs", nil)
	call("GET", "/repos/octo/gpu-lib/actions/runs/"+itoa(runID), nil)
	call("GET", "/repos/octo/gpu-lib/pulls/1", nil)
	call("GET", "/repos/octo/gpu-lib/commits/"+sha('a')+"/check-runs?filter=all", nil)
	return bodies
}

func jitConfigFrom(t *testing.T, body string) string {
	t.Helper()
	var jit jitJSON
	assert.NilError(t, json.Unmarshal([]byte(body), &jit))
	return jit.EncodedJITConfig
}

func TestSameSeedSameBehaviour(t *testing.T) {
	first := scenario(t, 1)
	assert.DeepEqual(t, scenario(t, 1), first)
	other := scenario(t, 2)
	assert.Check(t, jitConfigFrom(t, other[0]) != jitConfigFrom(t, first[0]), "secrets come from the seed")
}

// TestResponseShapes pins the JSON of each endpoint family; regenerate with -update.
func TestResponseShapes(t *testing.T) {
	bodies := scenario(t, 1)
	names := []string{"jitconfig", "runners", "check-run", "jobs", "workflow-run", "pull", "check-runs"}
	for i, name := range names {
		t.Run(name, func(t *testing.T) {
			golden.Assert(t, indent(t, []byte(bodies[i])), name+".golden.json")
		})
	}
}
