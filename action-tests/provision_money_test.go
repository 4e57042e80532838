package actiontests

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// Provision's money bounds (the spend ceiling, tracked creates, the reviewed
// GPU), through the real provision binary.

func TestProvisionSpendCeilingCountsTheLifetime(t *testing.T) {
	t.Parallel()
	// $0.25/h × (20 s startup + 3600 s lifetime) = $0.2514 > $0.10; the old
	// check saw only the startup budget ($0.0014) and created the pod.
	s := startCloud(t, testMarket(testHost("h1", a4000, true)), runpodsim.Faults{}, fastConfig+"max_run_spend_usd: 0.10\n")

	res := runStep(t, s.provisionStep(s.openPR(t)))

	assert.Equal(t, res.exitCode, 1, res.stdout)
	assert.Check(t, is.Contains(res.stdout, "max_run_spend_usd $0.10: creating candidate live-1 (NVIDIA RTX A4000 at $0.25/h) could bring the run to $0.2514"))
	assert.Check(t, is.Contains(res.stdout, "worst-case spend $"), "the worst case is printed before any create")
	assert.Check(t, is.Len(s.RunPod.Pods(), 0), "no pod was created")
}

func TestProvisionRetryAfterPastTheStartupBudgetEndsTheCandidate(t *testing.T) {
	t.Parallel()
	s := startCloud(t, testMarket(testHost("h1", a4000, true), testHost("h2", a5000, true)), runpodsim.Faults{
		RateLimits: []runpodsim.RateLimitFault{{Match: runpodsim.Match{Route: "GET /v2/pods/{id}"}, When: runpodsim.Trigger{Nth: []int{2}}, RetryAfter: 1000 * time.Second}},
	}, fastConfig)
	start := time.Now()

	res := runStep(t, s.provisionStep(s.openPR(t)))

	assert.Equal(t, res.exitCode, 1, res.stdout)
	assert.Check(t, res.outputs["runner-label"] == "", "nothing was accepted")
	assert.Check(t, is.Contains(res.stdout, "does not fit the rest of startup_timeout_seconds 20"))
	assert.Check(t, time.Since(start) < 60*time.Second, "the step ended within its budgets: %s", time.Since(start))
	assert.Check(t, is.Len(s.livePods(t), 0), "the rejected pod was deleted at once")
}

func TestProvisionRefusesAHeadThatIsNotAFullSHA(t *testing.T) {
	t.Parallel()
	s := startCloud(t, testMarket(testHost("h1", a4000, true)), runpodsim.Faults{}, fastConfig)
	tests := []struct{ head, wantErr string }{
		{head: "abc1234", wantErr: `input expected-head-sha = "abc1234": want a full commit SHA (40 lower-case hex digits, or 64 in a SHA-256 repository)`},
		{head: "", wantErr: "input expected-head-sha: a full commit SHA (40 lower-case hex digits, or 64 in a SHA-256 repository) (the input is required)"},
	}
	pr := s.openPR(t)
	for _, tc := range tests {
		step := s.provisionStep(pr)
		step.inputs["expected-head-sha"] = tc.head

		res := runStep(t, step)

		assert.Equal(t, res.exitCode, 1, res.stdout)
		assert.Check(t, is.Contains(res.stdout, tc.wantErr))
	}
	assert.Equal(t, len(s.RunPod.Requests()), 0, "refused before any RunPod call")
}

func TestProvisionCreateAnswerWithoutIDIsReconciledByName(t *testing.T) {
	t.Parallel()
	s := startCloud(t, testMarket(testHost("h1", a4000, true), testHost("h2", a5000, true)), runpodsim.Faults{
		Rewrites: []runpodsim.RewriteFault{{Match: runpodsim.Match{Route: "POST /v2/pods"}, When: runpodsim.Trigger{Nth: []int{1}},
			Body: func(int, []byte) []byte { return []byte(`{}`) }}},
	}, fastConfig)

	res := runStep(t, s.provisionStep(s.openPR(t)))

	assert.Equal(t, res.exitCode, 0, res.stdout)
	live := s.livePods(t)
	assert.Assert(t, is.Len(live, 1))
	assert.Equal(t, res.outputs["pod-id"], live[0].ID, "the pod that exists is the one published")
	assert.Equal(t, res.outputs["gpu-type"], a4000)
}

func TestProvisionRejectsAPodWithAnotherGPU(t *testing.T) {
	t.Parallel()
	const h100 = "NVIDIA H100 80GB HBM3"
	s := startCloud(t, testMarket(testHost("h1", a4000, true), testHost("h2", a5000, true)), runpodsim.Faults{
		Rewrites: []runpodsim.RewriteFault{{Match: runpodsim.Match{Route: "GET /v2/pods/{id}"}, When: runpodsim.Trigger{Every: 1},
			Body: func(status int, body []byte) []byte {
				var pod map[string]any
				if status != http.StatusOK || json.Unmarshal(body, &pod) != nil || pod["name"] != "rgpu-9100-1-c1" {
					return body
				}
				pod["gpu"] = map[string]any{"id": h100, "count": 1}
				out, _ := json.Marshal(pod)
				return out
			}}},
	}, fastConfig)

	res := runStep(t, s.provisionStep(s.openPR(t)))

	assert.Equal(t, res.exitCode, 0, res.stdout)
	assert.Equal(t, res.outputs["gpu-type"], a5000, "the H100 was never accepted as an A4000")
	assert.Check(t, is.Contains(res.stdout, "RunPod gave "+h100+" x1 for a request of "+a4000+" x1"))
	assert.Check(t, is.Len(s.livePods(t), 1))
}

func TestProvisionLabelAddedAfterAuthorizeCreatesNothing(t *testing.T) {
	t.Parallel()
	s := startCloud(t, testMarket(testHost("h1", a4000, true)), runpodsim.Faults{}, fastConfig)
	pr := s.openPR(t)
	assert.NilError(t, s.GitHub.UpdatePullRequest(cloud.Repository, pr, func(p *githubsim.PullRequestSpec) {
		p.Labels = append(p.Labels, gatecheck.LocalLabel)
	}))

	res := runStep(t, s.provisionStep(pr))

	assert.Equal(t, res.exitCode, 0, res.stdout)
	assert.Equal(t, res.outputs["paid-path"], "skipped")
	assert.Equal(t, res.outputs["runner-label"], "")
	assert.Check(t, is.Len(s.RunPod.Pods(), 0))
}
