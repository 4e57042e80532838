package provision

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/lanetiers"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/plan"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/spend"
	"github.com/org/runpod-gpu/pkg/watchdog"
)

// twoTiers reviews an Ampere-like and an Ada-like tier and tests both together.
func twoTiers(c *config.Config) {
	c.GPUTiers = []config.GPUTier{{Name: "ampere", GPUIDs: []string{a4000, a5000}}, {Name: "ada", GPUIDs: []string{l4, a6000}}}
	c.MatrixTiers = []string{"ampere", "ada"}
	c.MaxPriceCandidates, c.MaxProvisionAttempts = 1, 3
}

func (s *scenario) runLane(t *testing.T, req LaneRequest) (LaneResult, error) {
	t.Helper()
	req.Request = s.req
	return RunLane(context.Background(), s.deps, req)
}

var laneWorstRE = regexp.MustCompile(`lane plan: worst-case spend \$([0-9.]+)(?: \+ \d+ unpriced candidate\(s\))? across 2 tier\(s\) \(ampere \$([0-9.]+)[^,]*, ada \$([0-9.]+)`)

// Two tiers tested together: one pod each, in turn, each from its own
// reviewed GPU ids, with its own candidate numbers (unique pod names and
// labels), and one worst case printed for both before the first create.
func TestRunLaneGivesEachTierItsOwnPod(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", l4))}, twoTiers)
	res, err := s.runLane(t, LaneRequest{})
	assert.NilError(t, err)

	assert.Assert(t, is.Len(res.Pods, 2))
	assert.Check(t, is.Equal(res.Pods[0].Tier, "ampere"))
	assert.Check(t, is.Equal(res.Pods[0].GPUType, a4000))
	assert.Check(t, is.Equal(res.Pods[1].Tier, "ada"))
	assert.Check(t, is.Equal(res.Pods[1].GPUType, l4))
	assert.Check(t, res.Pods[0].RunnerLabel != res.Pods[1].RunnerLabel)
	assert.Check(t, is.Equal(res.Pods[0].DataCenter, "US-TX-3"))
	names := map[string]bool{}
	for _, p := range s.cloud.RunPod.Pods() {
		assert.Check(t, !names[p.Name], "pod name %s used twice", p.Name)
		names[p.Name] = true
	}
	assert.Check(t, is.Len(s.livePods(t), 2), "both pods handed over")
	assert.Check(t, res.Record.NextCandidate > 3, "the second tier numbered after the first's plan: %d", res.Record.NextCandidate)

	m := laneWorstRE.FindStringSubmatch(s.obs.log())
	assert.Assert(t, m != nil, s.obs.log())
	total, a, b := parseUSD(t, m[1]), parseUSD(t, m[2]), parseUSD(t, m[3])
	assert.Check(t, a > 0 && b > 0)
	assert.Check(t, is.Equal(fmt.Sprintf("%.2f", a+b), fmt.Sprintf("%.2f", total)))
	assert.Check(t, is.Contains(s.obs.log(), "a host-fault re-run (once per tier) could add up to"))
	// Each accepted pod is committed at its worst case.
	cfg := s.req.Config
	want := spend.Candidate(money.PerHour(0.25), cfg.StartupTimeout(), cfg.Lifetime()) + spend.Candidate(money.PerHour(0.43), cfg.StartupTimeout(), cfg.Lifetime())
	assert.Check(t, is.Equal(res.Record.CommittedUSD, want))

	out := res.Outputs()
	assert.Check(t, is.Equal(out.PaidPath, "paid"))
	assert.Check(t, is.Equal(out.RunnerLabel, ""), "no single runner in a matrix: the GPU jobs take the pods")
	back, err := lanetiers.ParsePods(res.PodsOutput())
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(back, res.Pods))
	assert.Check(t, is.Contains(res.Summary(nil), "### ada"))
	assert.Check(t, is.Contains(res.Summary(nil), "Worst-case spend $"+m[1]), "the lane's worst case heads its summary")
}

func parseUSD(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	assert.NilError(t, err)
	return f
}

// max_run_spend_usd covers the tiers together: a ceiling one pod fits under
// and two do not refuses the second tier's create, naming the first tier's
// pod in the sum, and the lane goes on with the first tier's pod.
func TestRunLaneCeilingCoversEveryTier(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", l4))}, func(c *config.Config) {
		twoTiers(c)
		c.StartupTimeoutSeconds, c.LifetimeSeconds, c.SetupBudgetSeconds = 600, 3600, 900
		ceiling := 60 * money.Cent // an A4000 at most $0.29, an L4 $0.50: each fits, both do not
		c.MaxRunSpendUSD = &ceiling
	})
	res, err := s.runLane(t, LaneRequest{})
	assert.NilError(t, err, "a tier got its pod: the lane goes on")
	assert.Check(t, is.Len(res.Pods, 1))
	assert.Check(t, is.Len(s.cloud.RunPod.Pods(), 1), "no create that could pass the ceiling")
	ada, _ := res.Record.Tier("ada")
	assert.Check(t, is.Contains(ada.Error, "max_run_spend_usd $0.60"))
	assert.Check(t, is.Contains(ada.Error, "the lane's other pods at their worst case $0.2917"))
	assert.Check(t, ada.Pod == nil)
}

// A lane of one pod on no tier is that run's own: its outputs name the pod
// and its runner label, and its summary is the run's, with no tier headings.
func TestRunLaneOfOnePodIsThatRunsOwn(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000))}, onlyA4000)

	res, err := s.runLane(t, LaneRequest{})

	assert.NilError(t, err)
	assert.Assert(t, is.Len(res.Runs, 1))
	out := res.Outputs()
	assert.Check(t, is.DeepEqual(out, res.Runs[0].Result.Outputs()))
	assert.Check(t, out.RunnerLabel != "" && out.PodID != "", "the one pod is named: %+v", out)
	assert.Check(t, is.Equal(res.Summary(nil), res.Runs[0].Result.Summary(nil)))
	assert.Check(t, !strings.Contains(res.Summary(nil), "### "), "no tier headings")
}

// A tier that ends the lane (here the pull request closed: obsolete) ends it
// there: the lane reports the error and no later tier is provisioned.
func TestRunLaneEndsAtATierThatEndsIt(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", l4))}, twoTiers)
	assert.NilError(t, s.cloud.GitHub.UpdatePullRequest(cloud.Repository, s.pr, func(p *githubsim.PullRequestSpec) { p.State = "closed" }))

	res, err := s.runLane(t, LaneRequest{})

	assert.Check(t, errors.Is(err, ErrObsolete), "got %v", err)
	assert.Check(t, is.Len(res.Pods, 0))
	assert.Check(t, is.Len(s.cloud.RunPod.Pods(), 0))
	ampere, _ := res.Record.Tier("ampere")
	assert.Check(t, is.Contains(ampere.Error, "closed"))
	ada, _ := res.Record.Tier("ada")
	assert.Check(t, is.Equal(ada.Error, ""), "the second tier was never provisioned")
}

// A matrix tier that passed for the tested tree is not paid again: its own
// gate (the tier's check name and key) is reused, the other tier is paid.
func TestRunLaneReusesATierByItsTreeKey(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", l4))}, twoTiers)
	key := gatecheck.TreeKey{Tree: strings.Repeat("7", 40), Lane: strings.Repeat("1", 64)}
	s.req.Reuse.Key = &key
	ampere := key.ForTier("ampere")
	marker, err := gatecheck.FormatMarker(strings.Repeat("e", 40), gatecheck.KindPaid, &ampere) // another merge, the same tree
	assert.NilError(t, err)
	_, err = s.cloud.GitHub.AddCheckRun(cloud.Repository, githubsim.CheckRun{
		Name: gatecheck.TierCheckName("", "ampere"), HeadSHA: headSHA, ExternalID: marker, Status: "completed", Conclusion: "success",
		AppID: cloud.AppID, CompletedAt: s.clock.Now().Add(-time.Hour),
	})
	assert.NilError(t, err)
	res, err := s.runLane(t, LaneRequest{})
	assert.NilError(t, err)
	tier, _ := res.Record.Tier("ampere")
	assert.Check(t, is.Equal(tier.PaidPath, "reused"))
	assert.Check(t, tier.ReusedCheckURL != "")
	assert.Assert(t, is.Len(res.Pods, 1))
	assert.Check(t, is.Equal(res.Pods[0].Tier, "ada"))
	assert.Check(t, is.Len(s.cloud.RunPod.Pods(), 1), "the reused tier paid for nothing")
}

// A host-fault re-run provisions the lost pod's tier once more, away from
// the data center its GPU type was lost in (though that type is still in
// stock there), within the ceiling with every earlier pod, numbering after
// the first provisioning's candidates; the lost fault keeps what its pod was
// handed over with.
func TestRunLaneRerunAvoidsTheLostHost(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h1b", a4000), host("h2", a5000))}, func(c *config.Config) {
		c.GPUTiers = []config.GPUTier{{Name: "ampere", GPUIDs: []string{a4000, a5000}}}
		c.MaxPriceCandidates, c.MaxProvisionAttempts = 2, 3
	})
	first, err := s.runLane(t, LaneRequest{})
	assert.NilError(t, err)
	assert.Assert(t, is.Len(first.Pods, 1))
	lost := first.Pods[0]
	assert.Check(t, is.Equal(lost.GPUType, a4000))
	fault := lanetiers.HostFault{Tier: "", PodID: lost.PodID, GPUType: lost.GPUType, DataCenter: lost.DataCenter, Kind: lanetiers.FaultRuntimeLost, Detail: "runtime null"}

	again, err := s.runLane(t, LaneRequest{Previous: &first.Record, HostFaults: []lanetiers.HostFault{fault}})
	assert.NilError(t, err)
	assert.Assert(t, is.Len(again.Pods, 1))
	pod := again.Pods[0]
	assert.Check(t, is.Equal(pod.GPUType, a5000), "not the lost GPU type in its data center")
	assert.Check(t, pod.Rerun)
	tier, _ := again.Record.Tier("")
	assert.Assert(t, is.Len(tier.Lost, 1))
	assert.Check(t, is.DeepEqual(tier.Lost[0], fault.Lose(lost)), "the lost fault carries its pod's label, price and start")
	assert.Check(t, tier.Lost[0].RunnerLabel != "" && tier.Lost[0].StartedAt != "")
	assert.Check(t, is.Equal(tier.Pod.PodID, pod.PodID))
	assert.Check(t, again.Record.CommittedUSD > first.Record.CommittedUSD)
	_, _, n, ok := ownership.ParsePodName(s.cloud.RunPod.Pods()[1].Name)
	assert.Check(t, ok && n > first.Record.NextCandidate-1, "candidate %d numbered after the first provisioning's", n)

	// A re-run's pod lost again is not re-run a second time.
	fault2 := lanetiers.HostFault{Tier: "", PodID: pod.PodID, GPUType: pod.GPUType, DataCenter: pod.DataCenter, Kind: lanetiers.FaultVanished, Detail: "gone", Rerun: true}
	third, err := s.runLane(t, LaneRequest{Previous: &again.Record, HostFaults: []lanetiers.HostFault{fault2}})
	assert.NilError(t, err)
	assert.Check(t, is.Len(third.Pods, 0))
	assert.Check(t, is.Contains(third.NoRerun[""], "a lane re-runs a tier once"))
	assert.Check(t, !strings.Contains(third.Summary(nil), "Worst-case spend"), "nothing provisioned, no worst case: %s", third.Summary(nil))
	assert.Check(t, is.Len(s.cloud.RunPod.Pods(), 2))
	tier, _ = third.Record.Tier("")
	assert.Check(t, is.Len(tier.Lost, 2), "the second lost pod is on the record, for cleanup and the gate")
}

// The re-run counts the lane's earlier pods against the ceiling: with room
// for one pod's worst case only, the lost pod's commitment leaves none.
func TestRunLaneRerunStaysWithinTheCeiling(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a5000))}, func(c *config.Config) {
		c.GPUTiers = []config.GPUTier{{Name: "ampere", GPUIDs: []string{a4000, a5000}}}
		c.MaxPriceCandidates, c.MaxProvisionAttempts = 2, 3
		ceiling := 40 * money.Cent
		c.MaxRunSpendUSD = &ceiling
	})
	first, err := s.runLane(t, LaneRequest{})
	assert.NilError(t, err)
	lost := first.Pods[0]
	fault := lanetiers.HostFault{PodID: lost.PodID, GPUType: lost.GPUType, DataCenter: lost.DataCenter, Kind: lanetiers.FaultExited, Detail: "EXITED"}
	again, err := s.runLane(t, LaneRequest{Previous: &first.Record, HostFaults: []lanetiers.HostFault{fault}})
	assert.ErrorContains(t, err, "max_run_spend_usd $0.40")
	assert.Check(t, is.Len(again.Pods, 0))
	assert.Check(t, is.Len(s.cloud.RunPod.Pods(), 1), "no re-run pod past the ceiling")
	tier, _ := again.Record.Tier("")
	assert.Check(t, is.Contains(tier.Error, "the lane's other pods at their worst case"))
}

// The avoiding ranker pins a candidate of the lost GPU type to its other
// stocked data centers and drops it when there is none; other types stay.
func TestAvoidingPinsOrDrops(t *testing.T) {
	in := testPlanInput()
	lost := []lanetiers.HostFault{{GPUType: a4000, DataCenter: "US-TX-3"}, {GPUType: l4, DataCenter: "US-TX-3"}}
	cands := []plan.Candidate{{GPUID: a4000, Cloud: "SECURE"}, {GPUID: l4, Cloud: "SECURE"}, {GPUID: a5000, Cloud: "SECURE"}}
	got := avoiding(nil, lost)(in, cands)
	assert.Assert(t, is.Len(got, 2))
	assert.Check(t, is.Equal(got[0].GPUID, a4000))
	assert.Check(t, is.DeepEqual(got[0].DataCenterIDs, []string{"EU-RO-1"}))
	assert.Check(t, is.Equal(got[1].GPUID, a5000), "the L4 had stock only where it was lost")
	assert.Check(t, got[1].DataCenterIDs == nil)
}

func testPlanInput() plan.Input {
	stock := func(ids ...string) []plan.DataCenterStock {
		var out []plan.DataCenterStock
		for _, id := range ids {
			out = append(out, plan.DataCenterStock{ID: id, Availability: "HIGH"})
		}
		return out
	}
	return plan.Input{Offers: []plan.Offer{
		{GPUID: a4000, Cloud: "SECURE", PricePerHour: money.PerHour(0.25), DataCenters: append(stock("US-TX-3", "EU-RO-1"), plan.DataCenterStock{ID: "CA-MTL-1", Availability: "NONE"})},
		{GPUID: l4, Cloud: "SECURE", PricePerHour: money.PerHour(0.43), DataCenters: stock("US-TX-3")},
	}}
}

// A matrix lane provisions its tiers one after another in one job, and the
// GPU jobs start only when that job ends. With four tiers of 300 s boots the
// first tier's pod is older than its setup budget when it is handed over;
// the watchdog's rule (watchdog.SetupDeadline) adds what it waited for the
// later tiers, so it is left as long for its tests as the last tier's pod.
func TestRunLaneLeavesTheFirstTierItsSetupBudget(t *testing.T) {
	slow := func(h *runpodsim.HostProfile) { h.BootSeconds = 300 }
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, slow), host("h2", a5000, slow), host("h3", l4, slow), host("h4", a6000, slow))},
		func(c *config.Config) {
			c.GPUTiers = []config.GPUTier{{Name: "t1", GPUIDs: []string{a4000}}, {Name: "t2", GPUIDs: []string{a5000}},
				{Name: "t3", GPUIDs: []string{l4}}, {Name: "t4", GPUIDs: []string{a6000}}}
			c.MatrixTiers = []string{"t1", "t2", "t3", "t4"}
			c.MaxPriceCandidates, c.MaxProvisionAttempts = 1, 5
		})
	res, err := s.runLane(t, LaneRequest{})
	assert.NilError(t, err)
	assert.Assert(t, is.Len(res.Pods, 4))
	handed := s.clock.Now()
	started := map[string]time.Time{}
	for _, p := range s.cloud.RunPod.Pods() {
		started[p.ID] = p.StartedAt
	}
	budget := s.req.Config.SetupBudget()
	first, last := res.Pods[0], res.Pods[3]
	assert.Check(t, handed.Sub(started[first.PodID]) > budget, "the scenario: tier t1's pod is %s old at the hand-over", handed.Sub(started[first.PodID]))

	left := func(p lanetiers.Pod) time.Duration {
		return watchdog.SetupDeadline(started[p.PodID], budget, p).Sub(handed)
	}
	assert.Check(t, left(first) > 0, "tier t1's pod is past its setup deadline at the hand-over (%s)", left(first))
	assert.Check(t, left(first) >= left(last)-2*time.Second, "tier t1 left %s, the last tier %s", left(first), left(last))
	assert.Check(t, left(last) < budget, "the last tier's setup still counts its own boot")
	for _, p := range res.Pods {
		assert.Check(t, is.Equal(p.HandedOverAt, handed.UTC().Format(time.RFC3339)))
		tier, _ := res.Record.Tier(p.Tier)
		assert.Check(t, is.Equal(tier.Pod.HandedOverAt, p.HandedOverAt), "the record's pods carry the hand-over too")
	}
}

// The default lane of one pod prints the lane's worst case too, with what
// the host-fault re-run (always in gpu-lane.yml) could add, and the ceiling
// covers the first pod and the re-run together.
func TestRunLaneOfOnePodNamesTheRerunInItsWorstCase(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000))}, func(c *config.Config) {
		onlyA4000(c)
		ceiling := 5 * money.Dollar
		c.MaxRunSpendUSD = &ceiling
	})
	res, err := s.runLane(t, LaneRequest{})
	assert.NilError(t, err)
	assert.Assert(t, is.Len(res.Pods, 1))
	m := regexp.MustCompile(`lane plan: worst-case spend \$([0-9.]+) across 1 tier\(s\) \(any reviewed tier [^)]*\); a host-fault re-run \(once per tier\) could add up to \$([0-9.]+); max_run_spend_usd \$5\.00 covers all of it`).
		FindStringSubmatch(s.obs.log())
	assert.Assert(t, m != nil, s.obs.log())
	assert.Check(t, is.Equal(m[1], m[2]), "the re-run could add the pod's whole worst case again")
	assert.Check(t, parseUSD(t, m[1]) >= res.Runs[0].Result.WorstCase.Amount.Dollars()-0.005)
}

// jobsOf is the scenario's GitHub with this attempt's jobs as given.
type jobsOf struct {
	GitHub
	jobs []*github.WorkflowJob
	err  error
}

func (j jobsOf) ListAttemptJobs(context.Context, int64, int) ([]*github.WorkflowJob, error) {
	return j.jobs, j.err
}

// A passed GPU job is never paid for again: a host fault the watchdog
// confirmed after the job succeeded (its JIT runner exits its container as
// the job ends) re-runs nothing; the fault is only noted. A job that did
// not pass, or jobs that cannot be read, re-run as before.
func TestRunLaneRerunsNothingForAJobThatPassed(t *testing.T) {
	for _, tc := range []struct {
		name       string
		conclusion string
		err        error
		wantRerun  bool
	}{
		{name: "the job passed", conclusion: "success"},
		{name: "the job failed", conclusion: "failure", wantRerun: true},
		{name: "the jobs cannot be read", conclusion: "success", err: errors.New("502"), wantRerun: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a5000))}, func(c *config.Config) {
				c.GPUTiers = []config.GPUTier{{Name: "ampere", GPUIDs: []string{a4000, a5000}}}
				c.MaxPriceCandidates, c.MaxProvisionAttempts = 2, 3
			})
			first, err := s.runLane(t, LaneRequest{})
			assert.NilError(t, err)
			lost := first.Pods[0]
			fault := lanetiers.HostFault{PodID: lost.PodID, GPUType: lost.GPUType, DataCenter: lost.DataCenter, Kind: lanetiers.FaultExited,
				Detail: "EXITED", RunnerLabel: lost.RunnerLabel}
			s.deps.GitHub = jobsOf{GitHub: s.deps.GitHub, err: tc.err, jobs: []*github.WorkflowJob{{Name: github.String("GPU tests"),
				RunnerName: github.String(lost.RunnerLabel), Status: github.String("completed"), Conclusion: github.String(tc.conclusion)}}}

			again, err := s.runLane(t, LaneRequest{Previous: &first.Record, HostFaults: []lanetiers.HostFault{fault}})
			assert.NilError(t, err)
			if tc.wantRerun {
				assert.Check(t, is.Len(again.Pods, 1))
				assert.Check(t, is.Len(s.cloud.RunPod.Pods(), 2))
				return
			}
			assert.Check(t, is.Len(again.Pods, 0))
			assert.Check(t, is.Len(s.cloud.RunPod.Pods(), 1), "nothing paid again")
			assert.Check(t, is.Contains(again.NoRerun[""], "concluded success: the host fault seen after it is only noted"))
		})
	}
}
