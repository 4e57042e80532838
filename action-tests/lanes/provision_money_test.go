package lanes

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
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
	s := startCloud(t, testMarket(testHost("h1", harness.A4000, true)), runpodsim.Faults{}, fastConfig+"max_run_spend_usd: 0.10\n")

	res := harness.RunStep(t, s.ProvisionStep(s.openPR(t)))

	assert.Equal(t, res.ExitCode, 1, res.Stdout)
	assert.Check(t, is.Contains(res.Stdout, "max_run_spend_usd $0.10: creating candidate live-1 (NVIDIA RTX A4000 at $0.25/h) could bring the run to $0.2514"))
	assert.Check(t, is.Contains(res.Stdout, "worst-case spend $"), "the worst case is printed before any create")
	assert.Check(t, is.Len(s.RunPod.Pods(), 0), "no pod was created")
}

func TestProvisionRetryAfterPastTheStartupBudgetEndsTheCandidate(t *testing.T) {
	t.Parallel()
	s := startCloud(t, testMarket(testHost("h1", harness.A4000, true), testHost("h2", harness.A5000, true)), runpodsim.Faults{
		RateLimits: []runpodsim.RateLimitFault{{Match: runpodsim.Match{Route: "GET /v2/pods/{id}"}, When: runpodsim.Trigger{Nth: []int{1}}, RetryAfter: 1000 * time.Second}}, // the watch's first pod read
	}, fastConfig)
	start := time.Now()

	res := harness.RunStep(t, s.ProvisionStep(s.openPR(t)))

	assert.Equal(t, res.ExitCode, 1, res.Stdout)
	assert.Check(t, res.Outputs["runner-label"] == "", "nothing was accepted")
	assert.Check(t, is.Contains(res.Stdout, "does not fit the rest of startup_timeout_seconds 20"))
	assert.Check(t, time.Since(start) < 60*time.Second, "the step ended within its budgets: %s", time.Since(start))
	assert.Check(t, is.Len(s.livePods(t), 0), "the rejected pod was deleted at once")
}

func TestProvisionRefusesAHeadThatIsNotAFullSHA(t *testing.T) {
	t.Parallel()
	s := startCloud(t, testMarket(testHost("h1", harness.A4000, true)), runpodsim.Faults{}, fastConfig)
	tests := []struct{ head, wantErr string }{
		{head: "abc1234", wantErr: `input expected-head-sha = "abc1234": want a full commit SHA (40 lower-case hex digits, or 64 in a SHA-256 repository)`},
		{head: "", wantErr: "input expected-head-sha: a full commit SHA (40 lower-case hex digits, or 64 in a SHA-256 repository) (the input is required)"},
	}
	pr := s.openPR(t)
	for _, tc := range tests {
		step := s.ProvisionStep(pr)
		step.Inputs["expected-head-sha"] = tc.head

		res := harness.RunStep(t, step)

		assert.Equal(t, res.ExitCode, 1, res.Stdout)
		assert.Check(t, is.Contains(res.Stdout, tc.wantErr))
	}
	assert.Equal(t, len(s.RunPod.Requests()), 0, "refused before any RunPod call")
}

func TestProvisionCreateAnswerWithoutIDIsReconciledByName(t *testing.T) {
	t.Parallel()
	s := startCloud(t, testMarket(testHost("h1", harness.A4000, true), testHost("h2", harness.A5000, true)), runpodsim.Faults{
		Rewrites: []runpodsim.RewriteFault{{Match: runpodsim.Match{Route: "POST /v2/pods"}, When: runpodsim.Trigger{Nth: []int{1}},
			Body: func(int, []byte) []byte { return []byte(`{}`) }}},
	}, fastConfig)

	res := harness.RunStep(t, s.ProvisionStep(s.openPR(t)))

	assert.Equal(t, res.ExitCode, 0, res.Stdout)
	live := s.livePods(t)
	assert.Assert(t, is.Len(live, 1))
	assert.Equal(t, res.Outputs["pod-id"], live[0].ID, "the pod that exists is the one published")
	assert.Equal(t, res.Outputs["gpu-type"], harness.A4000)
}

func TestProvisionRejectsAPodWithAnotherGPU(t *testing.T) {
	t.Parallel()
	const h100 = "NVIDIA H100 80GB HBM3"
	s := startCloud(t, testMarket(testHost("h1", harness.A4000, true), testHost("h2", harness.A5000, true)), runpodsim.Faults{
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

	res := harness.RunStep(t, s.ProvisionStep(s.openPR(t)))

	assert.Equal(t, res.ExitCode, 0, res.Stdout)
	assert.Equal(t, res.Outputs["gpu-type"], harness.A5000, "the H100 was never accepted as an A4000")
	assert.Check(t, is.Contains(res.Stdout, "RunPod gave "+h100+" x1 for a request of "+harness.A4000+" x1"))
	assert.Check(t, is.Len(s.livePods(t), 1))
}

func TestProvisionLabelAddedAfterAuthorizeCreatesNothing(t *testing.T) {
	t.Parallel()
	s := startCloud(t, testMarket(testHost("h1", harness.A4000, true)), runpodsim.Faults{}, fastConfig)
	pr := s.openPR(t)
	assert.NilError(t, s.GitHub.UpdatePullRequest(cloud.Repository, pr, func(p *githubsim.PullRequestSpec) {
		p.Labels = append(p.Labels, gatecheck.LocalLabel)
	}))

	res := harness.RunStep(t, s.ProvisionStep(pr))

	assert.Equal(t, res.ExitCode, 0, res.Stdout)
	assert.Equal(t, res.Outputs["paid-path"], "skipped")
	assert.Equal(t, res.Outputs["runner-label"], "")
	assert.Check(t, is.Len(s.RunPod.Pods(), 0))
}

// TestProvisionCreate429WaitsItsRetryAfter: a 429 on create created nothing;
// the same candidate is sent once more, not before the answer's Retry-After,
// and the run does not move on to a pricier GPU because of it.
func TestProvisionCreate429WaitsItsRetryAfter(t *testing.T) {
	t.Parallel()
	const retryAfter = 2 * time.Second
	s := startCloud(t, testMarket(testHost("h1", harness.A4000, true), testHost("h2", harness.A5000, true)), runpodsim.Faults{
		RateLimits: []runpodsim.RateLimitFault{{Match: runpodsim.Match{Route: createRoute}, When: runpodsim.Trigger{Nth: []int{1}}, RetryAfter: retryAfter}},
	}, fastConfig)
	res := harness.RunStep(t, s.ProvisionStep(s.openPR(t)))
	assert.Equal(t, res.ExitCode, 0, res.Stdout)
	assert.Check(t, is.Equal(res.Outputs["gpu-type"], harness.A4000), "the rate-limited candidate is the one that starts")
	creates := requestsOn(s, createRoute)
	assert.Assert(t, is.Len(creates, 2), "one 429, one retry")
	assert.Check(t, is.Equal(creates[0].Status, http.StatusTooManyRequests))
	assert.Check(t, creates[1].At.Sub(creates[0].At) >= retryAfter, "retried %s after the 429, before its Retry-After %s",
		creates[1].At.Sub(creates[0].At), retryAfter)
	assert.Check(t, is.Len(s.RunPod.Pods(), 1), "exactly one pod")
	assertNoSecrets(t, s, res)
}

// TestProvisionInsufficientBalanceStopsTheRun: a 402 (balance too low) on
// create stops the run at once; a pricier candidate cannot do better, so no
// further create is sent.
func TestProvisionInsufficientBalanceStopsTheRun(t *testing.T) {
	t.Parallel()
	// $0.20 is less than one hour of any candidate: every create would be 402.
	s := startCloudWith(t, cloud.Options{Market: testMarket(testHost("h1", harness.A4000, true), testHost("h2", harness.A5000, true), testHost("h3", harness.L4, true)), Balance: 0.20}, fastConfig)
	res := harness.RunStep(t, s.ProvisionStep(s.openPR(t)))
	assert.Check(t, is.Equal(res.ExitCode, 1), res.Stdout)
	assert.Check(t, is.Contains(strings.ToLower(res.Stdout), "balance"), "the error says why")
	creates := requestsOn(s, createRoute)
	assert.Assert(t, is.Len(creates, 1), "no further candidate after a 402")
	assert.Check(t, is.Equal(creates[0].Status, http.StatusPaymentRequired))
	assert.Check(t, is.Len(s.RunPod.Pods(), 0))
	assertNoSecrets(t, s, res)
}
