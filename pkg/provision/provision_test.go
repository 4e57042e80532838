package provision

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/plan"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/spend"
)

func TestFirstCandidateAccepted(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a5000))}, nil)
	res, err := s.run(t)
	assert.NilError(t, err)
	assert.Equal(t, res.Decision, DecisionPaid)
	assert.Assert(t, res.Accepted != nil)
	assert.Equal(t, res.Accepted.GPU, a4000)
	assert.Check(t, is.Regexp(`^runpod-gpu-7001-1-c1-[0-9a-f]{16}$`, res.Accepted.RunnerLabel))
	assert.Equal(t, res.Accepted.Price.PerHour, money.PerHour(0.25))
	assert.Equal(t, res.Image, cloud.RunnerImage+"@"+cloud.RunnerImageDigest)
	assert.DeepEqual(t, outcomes(res), []string{"live-1 RTX A4000 accepted"})
	live := s.livePods(t)
	assert.Assert(t, is.Len(live, 1))
	assert.Equal(t, live[0].ID, res.Accepted.PodID)
	assert.Equal(t, live[0].Name, "rgpu-7001-1-c1")
	// The pod was created from a digest-pinned image with the ownership tags.
	assert.Equal(t, live[0].Env[ownership.EnvRunID], "7001")
}

func TestProofFailureRejectedThenSecondAccepted(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, oldPTX), host("h2", a5000))}, nil)
	res, err := s.run(t)
	assert.NilError(t, err)
	assert.DeepEqual(t, outcomes(res), []string{"live-1 RTX A4000 rejected", "live-2 RTX A5000 accepted"})
	rej := res.Attempts[0]
	assert.Check(t, rej.Seconds.Known && rej.Seconds.N > 0, "rejected pod's paid seconds: %v", rej.Seconds)
	assert.Check(t, rej.Dollars().Known && rej.Dollars().USD > 0)
	assert.Check(t, is.Equal(rej.Reason, "the startup script exited with 1: the CUDA smoke proof failed on this host"))
	verdict, _ := s.cloud.Model.Verdict(rej.PodID)
	assert.Check(t, is.Contains(verdict, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"))
	// The rejected pod is gone and billed only for what it ran.
	assert.Assert(t, is.Len(s.livePods(t), 1))
	bill, err := s.cloud.RunPod.Bill(rej.PodID)
	assert.NilError(t, err)
	assert.Check(t, !bill.Accruing, "a rejected pod stops billing")
	assert.Check(t, is.Equal(bill.Seconds, rej.Seconds.N), "the reported paid seconds are the billed seconds")
	assert.Check(t, is.Regexp(`^runpod-gpu-7001-1-c2-[0-9a-f]{16}$`, res.Accepted.RunnerLabel), "each attempt has its own label")
}

func TestCapacityFailureMovesOnWithoutCounting(t *testing.T) {
	// L4 and A6000 have no host: they are planned as static candidates and the
	// create finds no capacity; the early stop (2) is not reached by them.
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, oldPTX), host("h2", a5000))}, func(c *config.Config) {
		c.GPUTiers = []config.GPUTier{{Name: "ampere", GPUIDs: []string{l4, a6000, a4000, a5000}}}
		c.MaxPriceCandidates = 1
	})
	res, err := s.run(t)
	assert.NilError(t, err)
	got := outcomes(res)
	assert.Check(t, is.Contains(strings.Join(got, "\n"), "RTX A4000 rejected"))
	assert.Check(t, is.Contains(strings.Join(got, "\n"), "L4 no-capacity"))
	assert.Check(t, is.Contains(strings.Join(got, "\n"), "RTX A5000 accepted"))
	for _, a := range res.Attempts {
		if a.Outcome == cost.OutcomeNoCapacity {
			assert.Check(t, a.PodID == "", "no pod for a capacity failure")
		}
	}
	// Only the accepted attempt's runner is still registered: the capacity
	// failures' and the rejected pod's registrations were removed at once.
	var names []string
	for _, rn := range s.cloud.GitHub.Runners() {
		names = append(names, rn.Name)
	}
	assert.DeepEqual(t, names, []string{res.Accepted.RunnerLabel})
}

func TestTwoNeverOnlinePodsStopEarly(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, oldPTX), host("h2", a5000, oldPTX), host("h3", l4))}, nil)
	res, err := s.run(t)
	var re *RunError
	assert.Assert(t, errors.As(err, &re), "got %v", err)
	assert.Check(t, errors.Is(err, ErrStartupFailures))
	assert.Equal(t, re.Rejected, 2)
	assert.Check(t, re.Seconds > 0)
	assert.Check(t, re.Dollars.Known && re.Dollars.USD > 0)
	assert.Check(t, is.Contains(err.Error(), "2 pod(s) rejected"))
	assert.Check(t, is.Contains(err.Error(), "estimated"))
	assert.Check(t, res.Accepted == nil)
	assert.Check(t, is.Len(s.livePods(t), 0), "the third candidate (L4) is never created")
}

func TestAttemptsExhausted(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, oldPTX), host("h2", a5000, oldPTX))}, func(c *config.Config) {
		c.GPUTiers = []config.GPUTier{{Name: "ampere", GPUIDs: []string{a4000, a5000}}}
		c.MaxPriceCandidates, c.MaxProvisionAttempts, c.MaxConsecutiveStartupFailures = 1, 2, 0
	})
	_, err := s.run(t)
	assert.Check(t, errors.Is(err, ErrExhausted), "got %v", err)
	assert.Check(t, is.Contains(err.Error(), "all 2 candidates tried"))
	assert.Check(t, is.Len(s.livePods(t), 0))
}

func TestClosedPRCreatesNothing(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000))}, nil)
	assert.NilError(t, s.cloud.GitHub.UpdatePullRequest(cloud.Repository, s.pr, func(p *githubsim.PullRequestSpec) { p.State = "closed" }))
	_, err := s.run(t)
	assert.Check(t, errors.Is(err, ErrObsolete), "got %v", err)
	assert.Check(t, is.Len(s.obs.created, 0))
}

// missingPR answers the PR read 404 from its n-th read (from 1) on.
type missingPR struct {
	GitHub
	from  int
	reads int
}

func (m *missingPR) GetPullRequest(ctx context.Context, n int) (*github.PullRequest, error) {
	if m.reads++; m.reads >= m.from {
		return nil, fmt.Errorf("get pull request #%d: 404 Not Found: %w", n, ghapi.ErrNotFound)
	}
	return m.GitHub.GetPullRequest(ctx, n)
}

// A PR that answers 404 (no such number, or one the token cannot read) is
// never paid for: no pod is created, and a pod already booting for it is
// deleted, never accepted.
func TestPRNotFoundCreatesNoPod(t *testing.T) {
	t.Run("no such PR", func(t *testing.T) {
		s := newScenario(t, cloud.Options{Market: market(host("h1", a4000))}, nil)
		s.req.PRNumber = 999

		_, err := s.run(t)

		assert.Check(t, errors.Is(err, ErrObsolete), "got %v", err)
		assert.Check(t, is.ErrorContains(err, "PR #999 not found (404)"))
		assert.Check(t, is.Equal(countRoute(s, "POST /v2/pods"), 0))
	})
	t.Run("gone while the pod boots", func(t *testing.T) {
		s := newScenario(t, cloud.Options{Market: market(host("h1", a4000))}, onlyA4000)
		s.deps.GitHub = &missingPR{GitHub: s.deps.GitHub, from: 2}

		res, err := s.run(t)

		assert.Check(t, errors.Is(err, ErrObsolete), "got %v", err)
		assert.Check(t, res.Accepted == nil)
		assert.Check(t, is.Len(s.obs.created, 1))
		assert.Check(t, is.Len(s.livePods(t), 0), "the pod is deleted")
	})
}

func TestHeadMovedWhileWaitingDeletesThePod(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a5000))}, nil)
	s.obs.onCreate = func(string) {
		// The push lands while the first pod boots.
		_ = s.cloud.GitHub.UpdatePullRequest(cloud.Repository, s.pr, func(p *githubsim.PullRequestSpec) { p.HeadSHA = movedHead })
	}
	s.req.KeepFailedPods = true // obsolescence deletes even in debug mode
	res, err := s.run(t)
	assert.Check(t, errors.Is(err, ErrObsolete), "got %v", err)
	assert.Check(t, is.Len(s.obs.created, 1), "no further create")
	assert.Check(t, is.Len(s.livePods(t), 0))
	assert.Check(t, is.Len(res.RetainedPodIDs, 0))
}

func TestLostCreateAnswerFindsThePodByName(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a5000)),
		Faults: runpodsim.Faults{LostCreates: []runpodsim.LostCreateFault{{When: runpodsim.Trigger{Nth: []int{1}}, Status: 502}}}}, nil)
	res, err := s.run(t)
	assert.NilError(t, err)
	assert.Check(t, is.Contains(s.obs.log(), "reconciled: pod rgpu-7001-1-c1 exists"))
	assert.Check(t, is.Len(s.livePods(t), 1), "exactly one pod")
	assert.Equal(t, countRoute(s, "POST /v2/pods"), 1, "never a second POST")
	assert.Equal(t, res.Accepted.GPU, a4000)
}

func TestUnconfirmedDeletionStopsCreation(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, oldPTX), host("h2", a5000)),
		Faults: runpodsim.Faults{DeleteFailures: runpodsim.DeleteFault{FailFirst: 100, Status: 503}}}, nil)
	res, err := s.run(t)
	assert.Check(t, errors.Is(err, ErrUnconfirmedDeletion), "got %v", err)
	assert.Check(t, is.Len(s.obs.created, 1), "never leak two")
	// The pod may bill until the cleanup job deletes it: the lane's committed
	// spend counts it at a candidate's worst case.
	assert.Assert(t, is.Len(res.Attempts, 1))
	worst := spend.Candidate(res.Attempts[0].Price.PerHour, s.req.Config.StartupTimeout(), s.req.Config.Lifetime())
	assert.Check(t, worst > 0 && res.SpentBound >= worst, "SpentBound %s, want at least the worst case %s", res.SpentBound, worst)
	assert.Check(t, is.Equal(countRoute(s, "DELETE /v2/pods/{id}"), 5), "at most 5 DELETEs, all of them tried")
}

func TestKeepFailedPodsRetainsRejectedPods(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, oldPTX), host("h2", a5000))}, nil)
	s.req.KeepFailedPods = true
	res, err := s.run(t)
	assert.NilError(t, err)
	assert.Assert(t, res.Accepted != nil)
	assert.DeepEqual(t, res.RetainedPodIDs, []string{res.Attempts[0].PodID})
	kept, err := ownership.ParseRetentionName(res.RetentionArtifact)
	assert.NilError(t, err, "the reaper reads the name provision writes")
	assert.Check(t, kept.Retains(7001, 1, res.Attempts[0].PodID))
	assert.Check(t, is.Len(s.livePods(t), 2))
}

func TestCancellationDeletesEveryCreatedPod(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a5000))}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	s.obs.onCreate = func(string) { cancel() } // SIGTERM arrives while the pod boots
	_, err := Run(ctx, s.deps, s.req)
	assert.Check(t, is.ErrorContains(err, "provisioning cancelled"))
	assert.Check(t, is.Len(s.obs.created, 1))
	assert.Check(t, is.Len(s.livePods(t), 0))
}

func TestReusableGateSkipsThePaidPath(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000))}, nil)
	ext, _ := gatecheck.FormatExternalID(mergeSHA, gatecheck.KindPaid)
	_, err := s.cloud.GitHub.AddCheckRun(cloud.Repository, githubsim.CheckRun{
		Name: gatecheck.DefaultCheckName, HeadSHA: headSHA, ExternalID: ext, Status: "completed", Conclusion: "success",
		AppID: cloud.AppID, CompletedAt: s.clock.Now().Add(-time.Hour),
	})
	assert.NilError(t, err)
	res, err := s.run(t)
	assert.NilError(t, err)
	assert.Equal(t, res.Decision, DecisionReused)
	assert.Check(t, strings.HasPrefix(res.ReusedCheckURL, "https://github.com/"+cloud.Repository))
	assert.Check(t, is.Len(s.obs.created, 0))
}

// A reviewed GPU id the catalog does not know (a typo) must not silently
// shrink the allowlist: it is tried as a static candidate and the job summary
// warns about it.
func TestUnknownGPUIDIsWarnedInTheSummary(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000))}, func(c *config.Config) {
		c.GPUTiers = []config.GPUTier{{Name: "ampere", GPUIDs: []string{a4000}}, {Name: "typo", GPUIDs: []string{"NVIDIA RTX A4O00"}}}
		c.MaxPriceCandidates = 1
	})
	res, err := s.run(t)
	assert.NilError(t, err)
	summary := res.Summary(err)
	assert.Check(t, is.Contains(summary, `> [!WARNING]`))
	assert.Check(t, is.Contains(summary, `GPU id "NVIDIA RTX A4O00" in gpu_tiers is not in the RunPod catalog (a typo?)`))
	assert.Check(t, is.Contains(res.Plan.Table(), "NVIDIA RTX A4O00"), "still planned as a static candidate")
}

// TestManualRunReadsNoPullRequest: a manual validation (no PR) reads no PR
// and looks for no reusable gate result, even with a tested ref — not even
// one refused locally, which would log a PR #0 or a paid-path decision — and
// a run that kept no pod names no retention artifact nor warns about one.
func TestManualRunReadsNoPullRequest(t *testing.T) {
	// The same run for a PR reads both: the patterns below do match them.
	pr := newScenario(t, cloud.Options{Market: market(host("h1", a4000))}, onlyA4000)
	_, err := pr.run(t)
	assert.NilError(t, err)
	assert.Assert(t, pr.cloud.GitHub.CountRequests("", "/repos/*/*/pulls/*") > 0)
	assert.Assert(t, pr.cloud.GitHub.CountRequests("", "/repos/*/*/commits/*/check-runs") > 0)

	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000))}, onlyA4000)
	s.req.PRNumber, s.req.ExpectedHeadSHA = 0, ""

	res, err := s.run(t)

	assert.NilError(t, err)
	assert.Assert(t, res.Accepted != nil)
	assert.Check(t, is.Equal(res.Decision, DecisionPaid))
	assert.Check(t, is.Equal(s.cloud.GitHub.CountRequests("", "/repos/*/*/pulls/*"), 0))
	assert.Check(t, is.Equal(s.cloud.GitHub.CountRequests("", "/repos/*/*/commits/*/check-runs"), 0))
	assert.Check(t, is.Equal(res.RetentionArtifact, ""))
	assert.Check(t, is.Equal(res.Outputs().RetentionArtifactName, ""))
	for _, never := range []string{"PR #0", "paid-path decision", "retention record"} {
		assert.Check(t, !strings.Contains(s.obs.log(), never), "%q in the log:\n%s", never, s.obs.log())
	}
}

// TestCeilingCountsEachPodFromTheCandidatesFirstPOST: what the ceiling
// counts as spent is, for each pod of a rejected candidate — the duplicate
// of a retried create included — its price from the candidate's first POST
// to its confirmed deletion: no pod left out, none counted at another rate.
func TestCeilingCountsEachPodFromTheCandidatesFirstPOST(t *testing.T) {
	ceiling := 30 * money.Cent // the A4000 fits ($0.2792); the A5000 after it never does ($0.3015)
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, oldPTX), host("h2", a4000, oldPTX), host("h3", a5000)),
		Faults: runpodsim.Faults{
			LostCreates:  []runpodsim.LostCreateFault{{When: runpodsim.Trigger{Nth: []int{1}}, Status: 502}},
			ListingDelay: 20 * time.Second,
		}}, ceilingAt(ceiling))

	_, err := s.run(t)

	assert.Assert(t, errors.Is(err, ErrStopped), "got %v", err)
	var counted float64
	msg := err.Error()
	i := strings.Index(msg, "(rejected pods $")
	assert.Assert(t, i >= 0, msg)
	_, scanErr := fmt.Sscanf(msg[i:], "(rejected pods $%f", &counted)
	assert.NilError(t, scanErr, msg)
	pods := s.cloud.RunPod.Pods()
	assert.Assert(t, is.Len(pods, 2), "the first create and its retry")
	firstPOST := pods[0].CreatedAt
	want := 0.0
	for _, p := range pods {
		assert.Assert(t, !p.TerminatedAt.IsZero(), "pod %s deleted", p.ID)
		want += max(p.HourlyPrice, 0.25) * p.TerminatedAt.Sub(firstPOST).Hours()
	}
	assert.Check(t, math.Abs(counted-want) <= 0.0002, "the ceiling counted $%.4f; each pod from the first POST to its deletion is $%.4f", counted, want)
}

// TestKeptPodsRetentionRecordLogsNoWarning: a kept pod's retention name is
// written without a warning; the warning is for a name that cannot be made.
func TestKeptPodsRetentionRecordLogsNoWarning(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, oldPTX), host("h2", a5000))}, nil)
	s.req.KeepFailedPods = true

	res, err := s.run(t)

	assert.NilError(t, err)
	assert.Assert(t, is.Len(res.RetainedPodIDs, 1))
	want, nerr := ownership.FormatRetentionName(7001, 1, res.RetainedPodIDs)
	assert.NilError(t, nerr)
	assert.Check(t, is.Equal(res.RetentionArtifact, want))
	assert.Check(t, !strings.Contains(s.obs.log(), "retention record"), s.obs.log())
}

// TestCancelledAfterAcceptanceIsAnError: SIGTERM arriving once the pod was
// accepted, before Run returns, fails the run as cancelled, with the
// cancellation as its cause; no GPU job of a cancelled run will use the pod,
// so Run deletes it like every other pod it created (its documented
// contract) and no longer reports it as accepted in the outputs.
func TestCancelledAfterAcceptanceIsAnError(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000))}, onlyA4000)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.deps.Observer = cancelOnAccept{Observer: s.deps.Observer, cancel: cancel}

	res, err := Run(ctx, s.deps, s.req)

	assert.Check(t, is.Error(err, "provisioning cancelled: context canceled"))
	assert.Check(t, errors.Is(err, context.Canceled))
	assert.Assert(t, is.Len(s.obs.created, 1))
	assert.Check(t, is.Len(aliveInSim(s), 0), "the accepted pod of a cancelled run is deleted")
	assert.Check(t, is.Contains(s.obs.log(), "cancelled: pod "+s.obs.created[0]+" deleted at "))
	assert.Check(t, !strings.Contains(s.obs.log(), "cancelled: pod "+s.obs.created[0]+": "), "no deletion error logged")
	assert.Check(t, res.Accepted == nil)
	assert.Check(t, is.Equal(res.Outputs().PodID, ""), "no output names a deleted pod as accepted")
	assert.Check(t, is.Contains(res.Summary(err), "**Failed**: provisioning cancelled"))
}

// cancelOnAccept cancels the run the moment an attempt is accepted.
type cancelOnAccept struct {
	Observer
	cancel context.CancelFunc
}

func (o cancelOnAccept) AttemptDone(a cost.Attempt) {
	o.Observer.AttemptDone(a)
	if a.Outcome == cost.OutcomeAccepted {
		o.cancel()
	}
}

// TestCeilingBoundaries: max_run_spend_usd is a bound a run may reach but
// never pass — before a create (catalog price) and while a pod runs (the
// price RunPod bills) — counting what rejected pods already cost.
func TestCeilingBoundaries(t *testing.T) {
	const price = 0.5
	cfg := config.Default()
	one := spend.Candidate(money.PerHour(price), cfg.StartupTimeout(), cfg.Lifetime())
	c := plan.Candidate{N: 1, Name: "live-1", GPUID: a4000, PriceKnown: true, PricePerHour: money.PerHour(price)}

	for _, tc := range []struct {
		name    string
		ceiling money.Amount
		spent   money.Amount
		wantErr string
	}{
		{name: "exactly at the ceiling", ceiling: one},
		{name: "rejected pods count toward it", ceiling: one + 25*money.Cent, spent: 25 * money.Cent},
		{name: "a cent past it", ceiling: one - money.Cent, wantErr: "creating candidate live-1 (NVIDIA RTX A4000 at $0.50/h) could bring the run to $"},
		{name: "past it only with what rejected pods cost", ceiling: one + 20*money.Cent, spent: 25 * money.Cent,
			wantErr: "(rejected pods $0.2500 + startup_timeout_seconds 420 + lifetime_seconds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := unitRun(t, ceilingAt(tc.ceiling))
			r.res.SpentBound = tc.spent
			err := r.checkSpend(c)
			if tc.wantErr == "" {
				assert.NilError(t, err)
				return
			}
			assert.Check(t, errors.Is(err, ErrStopped))
			assert.Check(t, is.ErrorContains(err, tc.wantErr))
		})
	}

	t.Run("a billed price above the catalog's", func(t *testing.T) {
		billed := func(usd float64) cost.Price { return cost.KnownPrice(money.PerHour(usd), "v2 cost while running") }
		atBilled := spend.Candidate(money.PerHour(0.75), cfg.StartupTimeout(), cfg.Lifetime())
		for _, tc := range []struct {
			name    string
			ceiling money.Amount
			spent   money.Amount
			price   cost.Price
			want    string // "" : not over
		}{
			{name: "the catalog price, over the ceiling, was checked before the create", ceiling: one / 2, price: billed(price)},
			{name: "unknown billed price", ceiling: one / 2, price: cost.Price{}},
			{name: "billed higher, exactly at the ceiling", ceiling: atBilled, price: billed(0.75)},
			{name: "billed higher, rejected pods count", ceiling: atBilled + 10*money.Cent, spent: 20 * money.Cent, price: billed(0.75),
				want: "RunPod bills this pod at $0.7500/h (catalog $0.50/h), which could bring the run to $"},
			{name: "billed higher, past the ceiling", ceiling: atBilled - money.Cent, price: billed(0.75),
				want: "(rejected pods $0.0000 + startup_timeout_seconds 420 + lifetime_seconds"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r, _ := unitRun(t, ceilingAt(tc.ceiling))
				r.res.SpentBound = tc.spent
				got := r.refusedRunning(c, tc.price)
				if tc.want == "" {
					assert.Check(t, is.Equal(got, ""))
					return
				}
				assert.Check(t, is.Contains(got, tc.want))
			})
		}
	})
}

// TestValidateSHAs: only a PR run needs the head it authorized; every SHA
// given must be a full commit SHA.
func TestValidateSHAs(t *testing.T) {
	for _, tc := range []struct {
		name    string
		req     Request
		wantErr string
	}{
		{name: "manual run without a head", req: Request{PRNumber: 0}},
		{name: "PR 1 without a head", req: Request{PRNumber: 1},
			wantErr: "expected head SHA: empty for PR #1; want authorize's pinned head-sha output"},
		{name: "PR without a tested ref", req: Request{PRNumber: 1, ExpectedHeadSHA: headSHA},
			wantErr: "tested ref: empty for PR #1; want authorize's tested-ref output"},
		{name: "PR with its head and tested ref", req: Request{PRNumber: 1, ExpectedHeadSHA: headSHA, TestedRef: mergeSHA}},
		{name: "short tested ref", req: Request{TestedRef: "abc123"}, wantErr: `tested ref: got "abc123"; want a full commit SHA`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.req.validateSHAs()
			if tc.wantErr == "" {
				assert.NilError(t, err)
				return
			}
			assert.Check(t, is.ErrorContains(err, tc.wantErr))
		})
	}
}

// TestRunErrorCountsOnlyRejectedPods: a failed run's error names what its
// rejected pods cost — their number, known seconds and dollars, and how many
// have an unknown cost — and nothing of failed or accepted attempts.
func TestRunErrorCountsOnlyRejectedPods(t *testing.T) {
	price := cost.KnownPrice(money.PerHour(3.6), "catalog list price") // $0.001 a second
	res := Result{Attempts: []cost.Attempt{
		{Number: 1, Outcome: cost.OutcomeRejected, Price: price, Seconds: cost.KnownSeconds(100)},
		{Number: 2, Outcome: cost.OutcomeFailed, Price: price, Seconds: cost.KnownSeconds(1000)},
		{Number: 3, Outcome: cost.OutcomeRejected, Price: price, Seconds: cost.KnownSeconds(50)},
		{Number: 4, Outcome: cost.OutcomeNoCapacity},
		{Number: 5, Outcome: cost.OutcomeAccepted, Price: price, Seconds: cost.KnownSeconds(40)},
	}}
	r, _ := unitRun(t, nil)
	r.res = res

	err := r.fail(ErrExhausted, "all tried")

	var re *RunError
	assert.Assert(t, errors.As(err, &re))
	assert.Check(t, is.Equal(re.Rejected, 2))
	assert.Check(t, is.Equal(re.Seconds, int64(150)))
	assert.Check(t, is.Equal(re.Unknown, 0))
	assert.Check(t, is.Error(err, "provision attempts exhausted: all tried; 2 pod(s) rejected, 150 paid second(s), "+cost.KnownMoney(money.FromDollars(0.15)).String()+" estimated"))

	// A rejected pod that never started has an unknown cost.
	r.res.Attempts = append(r.res.Attempts, cost.Attempt{Number: 6, Outcome: cost.OutcomeRejected, Price: price})
	err = r.fail(ErrExhausted, "all tried")
	assert.Check(t, is.ErrorContains(err, "3 pod(s) rejected, 150 paid second(s), "+cost.KnownMoney(money.FromDollars(0.15)).String()+" estimated (+1 with unknown cost)"))
	known, unknown := r.res.RejectedCost()
	assert.Check(t, is.Equal(known.String(), "$0.1500"))
	assert.Check(t, is.Equal(unknown, 1))
}

// The ceiling counts the accepted pod's lifetime bound.
func TestSpendCeilingCountsTheStartupBudgetAndTheLifetime(t *testing.T) {
	tests := []struct {
		name         string
		ceiling      float64
		hosts        []runpodsim.HostProfile
		wantAttempts []string
		wantErr      string
	}{
		{
			// $0.25/h × (420 s + 3600 s) = $0.2792: the old check saw only $0.0292.
			name: "first candidate could pass the ceiling", ceiling: 0.10, hosts: []runpodsim.HostProfile{host("h1", a4000)},
			wantErr: "max_run_spend_usd $0.10: creating candidate live-1 (NVIDIA RTX A4000 at $0.25/h) could bring the run to $0.2792 " +
				"(rejected pods $0.0000 + startup_timeout_seconds 420 + lifetime_seconds 3600 at its price); no pod was created for it",
		},
		{
			name: "first candidate fits", ceiling: 0.28, hosts: []runpodsim.HostProfile{host("h1", a4000)},
			wantAttempts: []string{"live-1 RTX A4000 accepted"},
		},
		{
			// The rejected A4000 cost a little; the A5000's $0.3015 on top passes $0.30.
			name: "what rejected pods cost counts", ceiling: 0.30, hosts: []runpodsim.HostProfile{host("h1", a4000, oldPTX), host("h2", a5000)},
			wantAttempts: []string{"live-1 RTX A4000 rejected"},
			wantErr:      "creating candidate live-2 (NVIDIA RTX A5000 at $0.27/h) could bring the run to $0.30",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newScenario(t, cloud.Options{Market: market(tc.hosts...)}, func(c *config.Config) { c.MaxRunSpendUSD = new(money.FromDollars(tc.ceiling)) })

			res, err := s.run(t)

			assert.DeepEqual(t, outcomes(res), tc.wantAttempts)
			if tc.wantErr == "" {
				assert.NilError(t, err)
				return
			}
			assert.Check(t, errors.Is(err, ErrStopped), "got %v", err)
			assert.ErrorContains(t, err, tc.wantErr)
			assert.Check(t, is.Len(s.livePods(t), 0))
		})
	}
}

// The label is re-read right before each create.
func TestLocalValidationLabelStopsSpending(t *testing.T) {
	label := func(p *githubsim.PullRequestSpec) { p.Labels = append(p.Labels, gatecheck.LocalLabel) }
	t.Run("added after authorize: nothing is created", func(t *testing.T) {
		s := newScenario(t, cloud.Options{Market: market(host("h1", a4000))}, nil)
		assert.NilError(t, s.cloud.GitHub.UpdatePullRequest(cloud.Repository, s.pr, label))

		res, err := s.run(t)

		assert.NilError(t, err)
		assert.Equal(t, res.Decision, DecisionSkipped)
		assert.Equal(t, res.Outputs().PaidPath, "skipped")
		assert.Check(t, is.Len(s.obs.created, 0))
		assert.Equal(t, countRoute(s, "POST /v2/pods"), 0)
		assert.Check(t, is.Contains(res.Summary(err), "**Skipped**"))
	})
	t.Run("added while the pod boots: it is deleted and no other is created", func(t *testing.T) {
		s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a5000))}, nil)
		s.obs.onCreate = func(string) { _ = s.cloud.GitHub.UpdatePullRequest(cloud.Repository, s.pr, label) }

		res, err := s.run(t)

		assert.NilError(t, err)
		assert.Equal(t, res.Decision, DecisionSkipped)
		assert.Check(t, res.Accepted == nil)
		assert.Check(t, is.Len(s.obs.created, 1))
		assert.Check(t, is.Len(s.livePods(t), 0))
	})
}

// A PR run needs the pinned head; every SHA is a full SHA.
func TestCommitSHAsAreValidatedBeforeAnyCall(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*Request)
		wantErr string
	}{
		{name: "PR without its head", mutate: func(r *Request) { r.ExpectedHeadSHA = "" },
			wantErr: "expected head SHA: empty for PR #1; want authorize's pinned head-sha output (a full commit SHA)"},
		{name: "short head", mutate: func(r *Request) { r.ExpectedHeadSHA = "abc1234" },
			wantErr: `expected head SHA: got "abc1234"; want a full commit SHA (40 lower-case hex digits`},
		{name: "tested ref as a branch", mutate: func(r *Request) { r.TestedRef = "refs/heads/main" },
			wantErr: `tested ref: got "refs/heads/main"; want a full commit SHA`},
		{name: "PR without a tested ref", mutate: func(r *Request) { r.TestedRef = "" },
			wantErr: "tested ref: empty for PR #1; want authorize's tested-ref output (a full commit SHA)"},
		{name: "tested ref with a trailing newline", mutate: func(r *Request) { r.TestedRef = mergeSHA + "\n" },
			wantErr: "tested ref: got "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newScenario(t, cloud.Options{Market: market(host("h1", a4000))}, nil)
			tc.mutate(&s.req)

			_, err := s.run(t)

			assert.ErrorContains(t, err, tc.wantErr)
			assert.Equal(t, len(s.cloud.RunPod.Requests()), 0, "no RunPod call")
		})
	}
}

// unreadablePR answers every PR read with a 200 that has no state: through the
// real GitHub client, as GitHub's edge might send it.
type unreadablePR struct {
	GitHub
	pulls *ghapi.Client
}

func (u unreadablePR) GetPullRequest(ctx context.Context, n int) (*github.PullRequest, error) {
	return u.pulls.GetPullRequest(ctx, n)
}

// An unreadable PR answer is unknown, never obsolete.
func TestPRAnswerWithoutStateIsUnknownNotObsolete(t *testing.T) {
	tests := []struct {
		name, answer string
		wantLog      string
	}{
		{name: "no state", answer: `{}`, wantLog: "state unknown"},
		// An open PR whose answer names no head is not "head moved to ''".
		{name: "open without a head", answer: `{"state":"open","number":1}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(tc.answer))
			}))
			defer stub.Close()
			s := newScenario(t, cloud.Options{Market: market(host("h1", a4000))}, nil)
			pulls, err := ghapi.New(context.Background(), ghapi.Options{BaseURL: stub.URL, Token: "t", Owner: cloud.Owner, Repo: cloud.RepoName,
				Policy: reqpolicy.New(reqpolicy.WithClock(s.clock), reqpolicy.WithSleeper(s.clock.Sleep))})
			assert.NilError(t, err)
			s.deps.GitHub = unreadablePR{GitHub: s.deps.GitHub, pulls: pulls}

			res, err := s.run(t)

			assert.NilError(t, err)
			assert.Assert(t, res.Accepted != nil, "an unusable PR answer never stops the run")
			if tc.wantLog != "" {
				assert.Check(t, is.Contains(s.obs.log(), tc.wantLog))
			}
		})
	}
}

// What the ceiling counts as spent bounds what RunPod billed for every pod
// of the run, the duplicate of a retried create included.
func TestCeilingCountsADuplicatePodsSpend(t *testing.T) {
	ceiling := 0.30 // the A4000 fits ($0.2792); the A5000 after it never does ($0.3015)
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, oldPTX), host("h2", a4000, oldPTX), host("h3", a5000)),
		Faults: runpodsim.Faults{
			LostCreates:  []runpodsim.LostCreateFault{{When: runpodsim.Trigger{Nth: []int{1}}, Status: 502}},
			ListingDelay: 20 * time.Second,
		}}, func(c *config.Config) { c.MaxRunSpendUSD = new(money.FromDollars(ceiling)) })

	_, err := s.run(t)

	assert.Assert(t, errors.Is(err, ErrStopped), "got %v", err)
	var counted float64
	_, scanErr := fmt.Sscanf(err.Error()[strings.Index(err.Error(), "(rejected pods $"):], "(rejected pods $%f", &counted)
	assert.NilError(t, scanErr, err.Error())
	billed := 0.0
	pods := s.cloud.RunPod.Pods()
	assert.Assert(t, is.Len(pods, 2), "the first create and its retry")
	for _, p := range pods {
		b, berr := s.cloud.RunPod.Bill(p.ID)
		assert.NilError(t, berr)
		billed += b.Dollars
	}
	assert.Check(t, counted >= billed-0.00005, "the ceiling counted $%.4f of $%.4f billed", counted, billed)
}

func ceilingAt(a money.Amount) func(*config.Config) {
	return func(c *config.Config) { c.MaxRunSpendUSD = &a }
}
