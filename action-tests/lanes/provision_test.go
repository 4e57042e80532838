package lanes

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/golden"
	"gotest.tools/v3/poll"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// fastConfig is a consumer config with timings scaled down for real-time tests.
const fastConfig = `gpu_tiers:
  - name: ampere
    gpu_ids: ["NVIDIA RTX A4000", "NVIDIA RTX A5000", "NVIDIA L4"]
max_price_candidates: 2
max_provision_attempts: 3
startup_timeout_seconds: 20
startup_poll_seconds: 1
create_deadline_seconds: 10
`

func testHost(id, gpu string, healthy bool) runpodsim.HostProfile {
	h := runpodsim.HostProfile{ID: id, DataCenterID: "US-TX-3", GPUTypeID: gpu, DriverCUDA: "12.8", MaxPTXISA: "8.7", BootSeconds: 1, Healthy: true}
	if !healthy {
		h.MaxPTXISA = "8.5" // same SKU, a driver that refuses the full tier's PTX
	}
	return h
}

func testMarket(hosts ...runpodsim.HostProfile) *runpodsim.Market {
	return &runpodsim.Market{
		GPUTypes: []runpodsim.GPUType{
			{ID: harness.A4000, Name: "RTX A4000", MemoryGB: 16, SecurePrice: 0.25, CommunityPrice: 0.17},
			{ID: harness.A5000, Name: "RTX A5000", MemoryGB: 24, SecurePrice: 0.27, CommunityPrice: 0.16},
			{ID: harness.L4, Name: "L4", MemoryGB: 24, SecurePrice: 0.43, CommunityPrice: 0.28},
		},
		DataCenters: []runpodsim.DataCenter{{ID: "US-TX-3", Name: "US Texas 3", Region: "NORTH_AMERICA", CountryCode: "US",
			NetworkVolumeTypes: []string{"STANDARD"}, Compliance: []string{}}},
		Hosts: hosts,
	}
}

func (s *simulated) openPR(t *testing.T) int {
	t.Helper()
	pr, err := s.GitHub.AddPullRequest(cloud.Repository, githubsim.PullRequestSpec{Author: "alice", HeadSHA: harness.HeadSHA, HeadRef: "feature", MergeCommitSHA: harness.MergeSHA})
	assert.NilError(t, err)
	return pr
}

func (s *simulated) livePods(t *testing.T) []runpod.Pod {
	t.Helper()
	pods, err := runpod.New(s.RunPodURL, cloud.RunPodKey).ListPods(context.Background(), runpod.ListPodsQuery{})
	assert.NilError(t, err)
	var live []runpod.Pod
	for _, p := range pods {
		if p.Status != runpod.PodTerminated {
			live = append(live, p)
		}
	}
	return live
}

// assertNoSecrets scans everything a step left for the credentials of the run.
func assertNoSecrets(t *testing.T, s *simulated, res harness.StepResult) {
	t.Helper()
	secrets := []string{cloud.RunPodKey, cloud.GitHubToken}
	for _, p := range s.RunPod.Pods() { // every JIT config minted reached exactly one pod
		if jit := p.Env["RUNNER_JIT_CONFIG"]; jit != "" {
			secrets = append(secrets, jit)
		}
		for k, v := range p.Env {
			assert.Check(t, !strings.Contains(v, cloud.RunPodKey) && !strings.Contains(v, cloud.GitHubToken), "pod env %s carries a credential", k)
		}
	}
	stdout := harness.WithoutMasks(res.Stdout)
	for _, secret := range secrets {
		assert.Check(t, !strings.Contains(stdout, secret), "log leaks a secret")
		assert.Check(t, !strings.Contains(res.Summary, secret), "summary leaks a secret")
		for k, v := range res.Outputs {
			assert.Check(t, !strings.Contains(v, secret), "output %s leaks a secret", k)
		}
	}
}

// assertCreatesFollowContract checks what the run sent RunPod. The simulator
// validates every request body against the contract (+ deltas) and answers 422
// to anything else, so no 422 means every create body was valid.
func assertCreatesFollowContract(t *testing.T, s *simulated) {
	t.Helper()
	for _, p := range s.RunPod.Pods() {
		assert.Check(t, strings.HasPrefix(p.Image, cloud.RunnerImage+"@sha256:"), "image pinned by digest: %s", p.Image)
		assert.Check(t, p.Env["RUNNER_JIT_CONFIG"] != "", "the JIT config is the one credential on the pod")
	}
	for _, r := range s.RunPod.Requests() {
		assert.Check(t, r.Status != 422, "%s %s was answered 422: the client sent a body the contract refuses", r.Method, r.Path)
	}
}

func TestProvisionFirstCandidateAccepted(t *testing.T) {
	t.Parallel()
	s := startCloud(t, testMarket(testHost("h1", harness.A4000, true), testHost("h2", harness.A5000, true)), runpodsim.Faults{}, fastConfig)
	res := harness.RunStep(t, s.ProvisionStep(s.openPR(t)))
	assert.Equal(t, res.ExitCode, 0, res.Stdout)
	assert.Equal(t, res.Outputs["paid-path"], "paid")
	assert.Equal(t, res.Outputs["gpu-type"], harness.A4000)
	assert.Check(t, is.Regexp(`^runpod-gpu-9100-1-c1-[0-9a-f]{16}$`, res.Outputs["runner-label"]))
	assert.Equal(t, res.Outputs["price-per-hour"], "0.25")
	live := s.livePods(t)
	assert.Assert(t, is.Len(live, 1))
	assert.Equal(t, res.Outputs["pod-id"], live[0].ID)
	assertNoSecrets(t, s, res)
	assertCreatesFollowContract(t, s)
}

func TestProvisionProofFailureThenAccepted(t *testing.T) {
	t.Parallel()
	s := startCloud(t, testMarket(testHost("h1", harness.A4000, false), testHost("h2", harness.A5000, true)), runpodsim.Faults{}, fastConfig)
	res := harness.RunStep(t, s.ProvisionStep(s.openPR(t)))
	assert.Equal(t, res.ExitCode, 0, res.Stdout)
	assert.Equal(t, res.Outputs["gpu-type"], harness.A5000)
	assert.Equal(t, res.Outputs["attempts"], "2")
	assert.Check(t, res.Outputs["rejected-cost-usd"] != "0.0000", "the rejected candidate's cost is reported")
	assert.Check(t, is.Contains(res.Summary, "| rejected | pod EXITED while starting"))
	assert.Check(t, is.Contains(res.Stdout, `runpod-gpu::attempt {`), "structured attempt lines for the cost history")
	assert.Check(t, is.Len(s.livePods(t), 1))
	assertNoSecrets(t, s, res)
	golden.Assert(t, normalize(res.Summary, s), "provision-two-candidates-summary.golden")
	golden.Assert(t, normalize(logLines(res.Stdout), s), "provision-two-candidates-log.golden")
}

func TestProvisionEarlyStopStatesTheCost(t *testing.T) {
	t.Parallel()
	s := startCloud(t, testMarket(testHost("h1", harness.A4000, false), testHost("h2", harness.A5000, false), testHost("h3", harness.L4, true)), runpodsim.Faults{}, fastConfig)
	res := harness.RunStep(t, s.ProvisionStep(s.openPR(t)))
	assert.Equal(t, res.ExitCode, 1)
	assert.Check(t, is.Contains(res.Stdout, "too many consecutive startup failures"))
	assert.Check(t, is.Contains(res.Stdout, "2 pod(s) rejected"))
	assert.Check(t, is.Contains(res.Stdout, "estimated"))
	assert.Check(t, is.Len(s.livePods(t), 0))
	assertNoSecrets(t, s, res)
}

func TestProvisionClosedPRCreatesNothing(t *testing.T) {
	t.Parallel()
	s := startCloud(t, testMarket(testHost("h1", harness.A4000, true)), runpodsim.Faults{}, fastConfig)
	pr := s.openPR(t)
	assert.NilError(t, s.GitHub.UpdatePullRequest(cloud.Repository, pr, func(p *githubsim.PullRequestSpec) { p.State = "closed" }))
	res := harness.RunStep(t, s.ProvisionStep(pr))
	assert.Equal(t, res.ExitCode, 1)
	assert.Check(t, is.Contains(res.Stdout, "pull request is obsolete"))
	assert.Check(t, is.Len(s.RunPod.Pods(), 0))
	assertNoSecrets(t, s, res)
}

func TestProvisionLostCreateIsOnePod(t *testing.T) {
	t.Parallel()
	s := startCloud(t, testMarket(testHost("h1", harness.A4000, true)),
		runpodsim.Faults{LostCreates: []runpodsim.LostCreateFault{{When: runpodsim.Trigger{Nth: []int{1}}, DropConnection: true}}}, fastConfig)
	res := harness.RunStep(t, s.ProvisionStep(s.openPR(t)))
	assert.Equal(t, res.ExitCode, 0, res.Stdout)
	assert.Check(t, is.Len(s.RunPod.Pods(), 1), "exactly one pod, found by name")
	assert.Check(t, is.Contains(res.Stdout, "reconciled: pod rgpu-9100-1-c1 exists"))
	assertNoSecrets(t, s, res)
	assertCreatesFollowContract(t, s)
}

func TestProvisionReusedGateCreatesNothing(t *testing.T) {
	t.Parallel()
	s := startCloud(t, testMarket(testHost("h1", harness.A4000, true)), runpodsim.Faults{}, fastConfig)
	pr := s.openPR(t)
	ext, err := gatecheck.FormatExternalID(harness.MergeSHA, gatecheck.KindPaid)
	assert.NilError(t, err)
	_, err = s.GitHub.AddCheckRun(cloud.Repository, githubsim.CheckRun{Name: gatecheck.DefaultCheckName, HeadSHA: harness.HeadSHA, ExternalID: ext,
		Status: "completed", Conclusion: "success", AppID: cloud.AppID, CompletedAt: time.Now().Add(-time.Hour)})
	assert.NilError(t, err)
	res := harness.RunStep(t, s.ProvisionStep(pr))
	assert.Equal(t, res.ExitCode, 0, res.Stdout)
	assert.Equal(t, res.Outputs["paid-path"], "reused")
	assert.Check(t, strings.HasPrefix(res.Outputs["reused-check-url"], "https://github.com/"))
	assert.Check(t, is.Len(s.RunPod.Pods(), 0))
	assertNoSecrets(t, s, res)
}

func TestProvisionSIGTERMDeletesEveryCreatedPod(t *testing.T) {
	t.Parallel()
	slow := testHost("h1", harness.A4000, true)
	slow.BootSeconds = 30 // still booting when the signal comes
	s := startCloud(t, testMarket(slow), runpodsim.Faults{}, fastConfig)
	st := s.ProvisionStep(s.openPR(t))
	st.Started = func(p *os.Process) {
		go func() {
			poll.WaitOn(t, func(poll.LogT) poll.Result {
				if len(s.RunPod.Pods()) > 0 {
					return poll.Success()
				}
				return poll.Continue("no pod yet")
			}, poll.WithTimeout(30*time.Second), poll.WithDelay(50*time.Millisecond))
			_ = p.Signal(syscall.SIGTERM)
		}()
	}
	res := harness.RunStep(t, st)
	assert.Check(t, res.ExitCode != 0, "a cancelled provision fails")
	assert.Check(t, is.Contains(res.Stdout, "provisioning cancelled"))
	assert.Check(t, is.Len(s.RunPod.Pods(), 1))
	assert.Check(t, is.Len(s.livePods(t), 0), "every created pod deleted before exit")
	assertNoSecrets(t, s, res)
}

func TestProvisionBadConfigNamesTheLine(t *testing.T) {
	t.Parallel()
	s := startCloud(t, testMarket(testHost("h1", harness.A4000, true)), runpodsim.Faults{}, fastConfig+"bogus_key: 1\n")
	res := harness.RunStep(t, s.ProvisionStep(s.openPR(t)))
	assert.Equal(t, res.ExitCode, 1)
	assert.Check(t, is.Contains(res.Stdout, "::error col=1,file=.github/runpod-gpu.yml,line=9,title=runpod-gpu config::(unknown key): want a known key"))
	assert.Check(t, is.Contains(res.Stdout, "Error: config: .github/runpod-gpu.yml:9: (unknown key)"), "the error names the file as the repository does")
	assert.Check(t, is.Len(s.RunPod.Requests(), 0), "no API call before the config is valid")
	assertNoSecrets(t, s, res)
}

func TestProvisionCapacityFailureMovesOn(t *testing.T) {
	t.Parallel()
	// The L4 has no machine: planned as a static candidate, its create finds no capacity.
	cfg := strings.Replace(fastConfig, `["NVIDIA RTX A4000", "NVIDIA RTX A5000", "NVIDIA L4"]`, `["NVIDIA L4", "NVIDIA RTX A4000", "NVIDIA RTX A5000"]`, 1)
	cfg = strings.Replace(cfg, "max_price_candidates: 2", "max_price_candidates: 0", 1)
	s := startCloud(t, testMarket(testHost("h1", harness.A4000, false), testHost("h2", harness.A5000, true)), runpodsim.Faults{}, cfg)
	res := harness.RunStep(t, s.ProvisionStep(s.openPR(t)))
	assert.Equal(t, res.ExitCode, 0, res.Stdout)
	assert.Check(t, is.Contains(res.Summary, "| NVIDIA L4 | - | unknown | no-capacity |"), "no pod for the capacity failure")
	assert.Equal(t, res.Outputs["gpu-type"], harness.A5000, "the early stop (2) was not reached: capacity does not count")
	assert.Equal(t, len(s.RunPod.Pods()), 2)
	assertNoSecrets(t, s, res)
}

func TestProvisionAttemptsExhausted(t *testing.T) {
	t.Parallel()
	cfg := fastConfig + "max_consecutive_startup_failures: 0\n"
	s := startCloud(t, testMarket(testHost("h1", harness.A4000, false), testHost("h2", harness.A5000, false), testHost("h3", harness.L4, false)), runpodsim.Faults{}, cfg)
	res := harness.RunStep(t, s.ProvisionStep(s.openPR(t)))
	assert.Equal(t, res.ExitCode, 1)
	assert.Check(t, is.Contains(res.Stdout, "provision attempts exhausted: all 3 candidates tried"))
	assert.Check(t, is.Contains(res.Stdout, "3 pod(s) rejected"))
	assert.Check(t, is.Len(s.livePods(t), 0))
	assertNoSecrets(t, s, res)
}

func TestProvisionHeadMovedWhileWaiting(t *testing.T) {
	t.Parallel()
	slow := testHost("h1", harness.A4000, true)
	slow.BootSeconds = 4
	s := startCloud(t, testMarket(slow, testHost("h2", harness.A5000, true)), runpodsim.Faults{}, fastConfig)
	pr := s.openPR(t)
	st := s.ProvisionStep(pr)
	st.Inputs["keep-failed-pods"] = "true" // obsolescence deletes even in debug mode
	st.Started = func(*os.Process) {
		go func() {
			poll.WaitOn(t, func(poll.LogT) poll.Result {
				if len(s.RunPod.Pods()) > 0 {
					return poll.Success()
				}
				return poll.Continue("no pod yet")
			}, poll.WithTimeout(30*time.Second), poll.WithDelay(50*time.Millisecond))
			_ = s.GitHub.UpdatePullRequest(cloud.Repository, pr, func(p *githubsim.PullRequestSpec) { p.HeadSHA = strings.Repeat("d", 40) })
		}()
	}
	res := harness.RunStep(t, st)
	assert.Equal(t, res.ExitCode, 1)
	assert.Check(t, is.Contains(res.Stdout, "head moved"))
	assert.Check(t, is.Len(s.RunPod.Pods(), 1), "no further create")
	assert.Check(t, is.Len(s.livePods(t), 0), "that pod deleted")
	assert.Equal(t, res.Outputs["retained-pod-ids"], "")
	assertNoSecrets(t, s, res)
}

func TestProvisionUnconfirmedDeletionStopsCreation(t *testing.T) {
	t.Parallel()
	s := startCloud(t, testMarket(testHost("h1", harness.A4000, false), testHost("h2", harness.A5000, true)),
		runpodsim.Faults{DeleteFailures: runpodsim.DeleteFault{FailFirst: 100, Status: 403}}, fastConfig)
	res := harness.RunStep(t, s.ProvisionStep(s.openPR(t)))
	assert.Equal(t, res.ExitCode, 1)
	assert.Check(t, is.Contains(res.Stdout, "deletion is unconfirmed"))
	assert.Check(t, is.Len(s.RunPod.Pods(), 1), "never leak two")
	assert.Check(t, res.Outputs["pod-id"] != "", "the pod id stays published for cleanup")
	assertNoSecrets(t, s, res)
}

func TestProvisionKeepFailedPods(t *testing.T) {
	t.Parallel()
	s := startCloud(t, testMarket(testHost("h1", harness.A4000, false), testHost("h2", harness.A5000, true)), runpodsim.Faults{}, fastConfig)
	st := s.ProvisionStep(s.openPR(t))
	st.Inputs["keep-failed-pods"] = "true"
	res := harness.RunStep(t, st)
	assert.Equal(t, res.ExitCode, 0, res.Stdout)
	assert.Equal(t, res.Outputs["gpu-type"], harness.A5000, "the accepted pod is still produced")
	live := s.livePods(t)
	assert.Assert(t, is.Len(live, 2))
	assert.Check(t, res.Outputs["retained-pod-ids"] != "" && res.Outputs["retained-pod-ids"] != res.Outputs["pod-id"])
	assert.Check(t, is.Contains(res.Summary, "Kept for inspection (still billing)"))
	assertNoSecrets(t, s, res)
}

// createRoute is the simulated RunPod's route that creates a pod.
const createRoute = "POST /v2/pods"

// requestsOn returns the requests the simulated RunPod answered on a route, in order.
func requestsOn(s *simulated, route string) []runpodsim.RequestRecord {
	var out []runpodsim.RequestRecord
	for _, r := range s.RunPod.Requests() {
		if r.Route == route {
			out = append(out, r)
		}
	}
	return out
}
