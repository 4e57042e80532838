package cleanup

import (
	"context"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/lanetiers"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// A lane of pods: every tier's pod and the pod lost to its host are deleted
// and reported each on its own — the lost one with its host's failure — and
// the gate gets a row per pod, each from its own GPU job, and one per tier
// without a pod.
func TestRunLaneReportsEveryPodAndAGateRowEach(t *testing.T) {
	failing := gpuJob(label(2), 10, 20, 1)
	failing.Steps[1].Conclusion = "failure"
	s := newScene(t, runpodsim.Faults{}, gpuJob(label(1), 10, 20, 1), failing)
	ampere := s.launch(t, s.tags(1), true)
	ada := s.launch(t, s.tags(2), true)
	lost := s.launch(t, s.tags(3), false)
	s.clock.Advance(4 * time.Minute)
	assert.NilError(t, s.rp.DeletePod(context.Background(), lost)) // the host took it
	started := virtualStart.Add(time.Minute).Format(time.RFC3339)

	req := s.request("")
	req.RunnerLabel = ""
	req.Lane = &lanetiers.Record{Tiers: []lanetiers.Tier{
		{Name: "ampere", PaidPath: "paid", Pod: &lanetiers.Pod{Tier: "ampere", PodID: ampere, RunnerLabel: label(1), GPUType: gpuID, PricePerHour: "0.25", StartedAt: started},
			Rejected: []cost.Attempt{{Number: 1, Candidate: "live-1", GPU: gpuID, PodID: "rejected1", Outcome: cost.OutcomeRejected,
				Price: cost.KnownPrice(money.PerHour(0.25), "v2 cost"), Seconds: cost.KnownSeconds(60)}}},
		{Name: "ada", PaidPath: "paid", Pod: &lanetiers.Pod{Tier: "ada", PodID: ada, RunnerLabel: label(2), GPUType: gpuID, PricePerHour: "0.25", StartedAt: started, Rerun: true},
			Lost: []lanetiers.HostFault{{Tier: "ada", PodID: lost, GPUType: gpuID, DataCenter: "US-TX-3", Kind: lanetiers.FaultVanished,
				Detail: "the pod is not found", RunnerLabel: label(3), PricePerHour: "0.25", StartedAt: started}}},
		{Name: "hopper", PaidPath: "reused", ReusedCheckURL: "https://github.com/o/r/runs/9"},
		{Name: "blackwell", Error: "provision attempts exhausted: all 2 candidates tried"},
	}}
	res, err := Run(context.Background(), s.deps(), req)
	assert.NilError(t, err)
	for _, id := range []string{ampere, ada, lost} {
		assert.Check(t, is.Equal(s.status(t, id), runpodsim.StatusTerminated))
	}
	assert.Check(t, is.Len(res.Reports(), 3))
	artifact := res.Artifact()
	assert.Check(t, is.Len(artifact.More, 2))
	var hosts []cost.HostVerdict
	for _, r := range res.Reports() {
		assert.NilError(t, r.Validate())
		hosts = append(hosts, r.Host)
	}
	assert.Check(t, is.DeepEqual(hosts, []cost.HostVerdict{"", cost.HostFailed, ""}), "the lost pod counts against its host")
	assert.Check(t, is.Len(res.Report.Rejected, 1), "the tier's rejected candidate is counted once, on its first pod")

	var got []string
	for _, r := range res.Rows {
		got = append(got, r.Tier+" "+r.Outcome)
	}
	assert.Check(t, is.DeepEqual(got, []string{"ampere passed", "ada host-fault", "ada failed", "hopper reused", "blackwell no-pod"}))
	assert.Check(t, res.Rows[0].PaidSeconds != nil && *res.Rows[0].PaidSeconds > 0)
	assert.Check(t, res.Rows[0].PricePerHour != nil && *res.Rows[0].PricePerHour == money.PerHour(0.25))
	assert.Check(t, is.Contains(res.Rows[1].Reason, "host fault: the pod vanished"))
	assert.Check(t, is.Equal(res.Rows[1].DataCenter, "US-TX-3"))
	assert.Check(t, res.Rows[2].Rerun)
	assert.Check(t, is.Contains(res.Rows[4].Reason, "exhausted"))

	out := res.Outputs()
	rows, err := lanetiers.ParseResults(out.TierResults)
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(rows, res.Rows))
	assert.Check(t, out.CostUSD != "unknown" && out.PaidSeconds != "unknown", "%+v", out)
	assert.Check(t, is.Contains(res.Summary(nil), "### Pod 3 of 3"))
	assert.Check(t, !strings.Contains(strings.Join(s.log.all, "\n"), "never published"), "no tracked pod is mistaken for an untracked one")
}

// The watchdog's host fault of a pod with no re-run (the lane's record still
// names it as the tier's pod) makes its row a host fault and its report a
// failed host.
func TestRunHostFaultWithoutARerun(t *testing.T) {
	s := newScene(t, runpodsim.Faults{}, githubsim.JobSpec{Name: "GPU tests", Labels: []string{label(1)}, Steps: []githubsim.StepSpec{{Name: "Run GPU tests", Duration: time.Hour}}})
	id := s.launch(t, s.tags(1), true)
	s.clock.Advance(2 * time.Minute)
	req := s.request("")
	req.Lane = &lanetiers.Record{Tiers: []lanetiers.Tier{{PaidPath: "paid", Pod: &lanetiers.Pod{PodID: id, RunnerLabel: label(1), GPUType: gpuID}}}}
	req.HostFaults = []lanetiers.HostFault{{PodID: id, GPUType: gpuID, DataCenter: "US-TX-3", Kind: lanetiers.FaultRuntimeLost, Detail: "RUNNING without a runtime"}}
	res, err := Run(context.Background(), s.deps(), req)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(res.Report.Host, cost.HostFailed))
	assert.Assert(t, is.Len(res.Rows, 1))
	assert.Check(t, is.Equal(res.Rows[0].Outcome, lanetiers.OutcomeHostFault))
	assert.Check(t, is.Contains(res.Rows[0].Reason, "lost its runtime"))
}

// A GPU job that succeeded is never a host fault, whatever the watchdog saw
// after it: its row passed and the loss is only noted. Only a loss RunPod
// shows (the pod vanished or lost its runtime) counts against the host; a
// stopped container or an offline runner, which the tests' own code can
// cause, gets the host-fault row (and the re-run) but no failed host.
func TestRunHostFaultVerdicts(t *testing.T) {
	running := githubsim.JobSpec{Name: "GPU tests", Labels: []string{label(1)}, Steps: []githubsim.StepSpec{{Name: "Run GPU tests", Duration: time.Hour}}}
	tests := []struct {
		name        string
		job         githubsim.JobSpec
		kind        string
		wantOutcome string
		wantHost    cost.HostVerdict
		wantNote    string
	}{
		{name: "vanished mid-job", job: running, kind: lanetiers.FaultVanished, wantOutcome: lanetiers.OutcomeHostFault, wantHost: cost.HostFailed, wantNote: "counted against the host"},
		{name: "runtime lost mid-job", job: running, kind: lanetiers.FaultRuntimeLost, wantOutcome: lanetiers.OutcomeHostFault, wantHost: cost.HostFailed, wantNote: "counted against the host"},
		{name: "runner offline mid-job", job: running, kind: lanetiers.FaultRunnerOffline, wantOutcome: lanetiers.OutcomeHostFault, wantNote: "not counted against the host"},
		{name: "container stopped mid-job", job: running, kind: lanetiers.FaultExited, wantOutcome: lanetiers.OutcomeHostFault, wantNote: "not counted against the host"},
		{name: "a fault after the job succeeded", job: gpuJob(label(1), 10, 20, 1), kind: lanetiers.FaultExited, wantOutcome: lanetiers.OutcomePassed, wantNote: "noted only"},
		{name: "vanished after the job succeeded", job: gpuJob(label(1), 10, 20, 1), kind: lanetiers.FaultVanished, wantOutcome: lanetiers.OutcomePassed, wantNote: "noted only"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newScene(t, runpodsim.Faults{}, tc.job)
			id := s.launch(t, s.tags(1), true)
			s.clock.Advance(2 * time.Minute)
			req := s.request("")
			req.Lane = &lanetiers.Record{Tiers: []lanetiers.Tier{{PaidPath: "paid", Pod: &lanetiers.Pod{PodID: id, RunnerLabel: label(1), GPUType: gpuID}}}}
			req.HostFaults = []lanetiers.HostFault{{PodID: id, GPUType: gpuID, DataCenter: "US-TX-3", Kind: tc.kind, Detail: "seen twice"}}
			res, err := Run(context.Background(), s.deps(), req)
			assert.NilError(t, err)
			assert.Assert(t, is.Len(res.Rows, 1))
			assert.Check(t, is.Equal(res.Rows[0].Outcome, tc.wantOutcome), res.Rows[0].Reason)
			assert.Check(t, is.Equal(res.Report.Host, tc.wantHost))
			assert.Check(t, is.Contains(strings.Join(res.Report.Notes, " "), tc.wantNote))
		})
	}
}
