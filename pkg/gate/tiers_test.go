package gate

import (
	"context"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/lanetiers"
	"github.com/org/runpod-gpu/pkg/money"
)

func row(tier, outcome, gpu, dc string, paid int64) lanetiers.Result {
	price := money.PerHour(1.5)
	return lanetiers.Result{Tier: tier, Outcome: outcome, GPUType: gpu, DataCenter: dc, PodID: "pod-" + tier + "-" + outcome,
		PricePerHour: &price, PaidSeconds: &paid, Reason: "the GPU job " + outcome}
}

// The gate over several pods passes only when every tier the lane tests
// passed, names each tier that did not, says what became of a pod lost to
// its host, and never passes against GitHub's own results of the GPU jobs.
func TestResolveTiers(t *testing.T) {
	ampere := row("ampere", "passed", "NVIDIA A100", "US-TX-3", 300)
	hopper := row("hopper", "passed", "NVIDIA H100", "EU-RO-1", 200)
	lost := lanetiers.Result{Tier: "", Outcome: lanetiers.OutcomeHostFault, GPUType: "NVIDIA RTX A4000", DataCenter: "US-TX-3", PodID: "lostpod", Reason: "host fault: the pod lost its runtime (RUNNING without a runtime)"}
	rerun := row("", "passed", "NVIDIA RTX A5000", "EU-RO-1", 100)
	rerun.Rerun = true
	tests := []struct {
		name       string
		tiers      TierRequest
		gpu        JobResult
		wantKind   gatecheck.Kind
		wantReason []string
	}{
		{name: "two tiers passed", tiers: TierRequest{Expected: []string{"ampere", "hopper"}, Rows: []lanetiers.Result{ampere, hopper}},
			gpu: JobSuccess, wantKind: gatecheck.KindPaid, wantReason: []string{"every tier passed (2 tested now, 0 reused)"}},
		{name: "one tier failed: named", tiers: TierRequest{Expected: []string{"ampere", "hopper"}, Rows: []lanetiers.Result{ampere, row("hopper", "failed", "NVIDIA H100", "EU-RO-1", 200)}},
			gpu: JobFailure, wantKind: gatecheck.KindFailed, wantReason: []string{"tier hopper failed: the GPU job failed"}},
		{name: "a tier without a result fails closed", tiers: TierRequest{Expected: []string{"ampere", "hopper"}, Rows: []lanetiers.Result{ampere}},
			gpu: JobSuccess, wantKind: gatecheck.KindFailed, wantReason: []string{"tier hopper: no result"}},
		{name: "rows that pass against a failed matrix fail", tiers: TierRequest{Expected: []string{"ampere", "hopper"}, Rows: []lanetiers.Result{ampere, hopper}},
			gpu: JobFailure, wantKind: gatecheck.KindFailed, wantReason: []string{`the GPU jobs' result is "failure", not success`}},
		{name: "a reused tier and a paid one", tiers: TierRequest{Expected: []string{"ampere", "hopper"},
			Rows: []lanetiers.Result{{Tier: "ampere", Outcome: lanetiers.OutcomeReused, ReusedCheckURL: "https://github.com/o/r/runs/4"}, hopper}},
			gpu: JobSuccess, wantKind: gatecheck.KindPaid, wantReason: []string{"1 tested now, 1 reused"}},
		{name: "every tier reused", tiers: TierRequest{Expected: []string{"ampere"}, Rows: []lanetiers.Result{{Tier: "ampere", Outcome: lanetiers.OutcomeReused, ReusedCheckURL: "u"}}},
			gpu: JobSkipped, wantKind: gatecheck.KindReused},
		{name: "host fault, re-run passed", tiers: TierRequest{Expected: []string{""}, Rows: []lanetiers.Result{lost, rerun}, RerunJobResult: JobSuccess},
			gpu: JobFailure, wantKind: gatecheck.KindPaid,
			wantReason: []string{"the GPU: host fault, re-run on NVIDIA RTX A5000 in EU-RO-1: passed (lost: pod lostpod on NVIDIA RTX A4000 in US-TX-3, host fault: the pod lost its runtime"}},
		{name: "host fault, re-run failed", tiers: TierRequest{Expected: []string{""}, Rows: []lanetiers.Result{lost, func() lanetiers.Result { r := rerun; r.Outcome = "failed"; return r }()}, RerunJobResult: JobFailure},
			gpu: JobFailure, wantKind: gatecheck.KindFailed, wantReason: []string{"the GPU failed", "host fault, re-run on NVIDIA RTX A5000 in EU-RO-1: failed"}},
		{name: "host fault, re-run rows passing but the re-run job not", tiers: TierRequest{Expected: []string{""}, Rows: []lanetiers.Result{lost, rerun}, RerunJobResult: JobFailure},
			gpu: JobFailure, wantKind: gatecheck.KindFailed, wantReason: []string{`the re-run GPU jobs' result is "failure"`}},
		{name: "host fault, no re-run", tiers: TierRequest{Expected: []string{""}, Rows: []lanetiers.Result{lost, {Tier: "", Outcome: lanetiers.OutcomeNoPod, Reason: "no re-run: max_run_spend_usd $1.00"}}},
			gpu: JobFailure, wantKind: gatecheck.KindFailed, wantReason: []string{"the GPU: host fault, no re-run: max_run_spend_usd $1.00 (lost: pod lostpod"}},
		// Rows without the tiers the lane tests (no provision record): nothing
		// says a tier passed, so the gate fails, never "reused" by 0 == 0.
		{name: "a host fault row and no expected tiers", tiers: TierRequest{Rows: []lanetiers.Result{{Outcome: lanetiers.OutcomeHostFault, PodID: "lostpod"}}},
			gpu: JobFailure, wantKind: gatecheck.KindFailed, wantReason: []string{"provision's record of the tiers the lane tests is missing"}},
		{name: "passing rows and no expected tiers", tiers: TierRequest{Rows: []lanetiers.Result{lost, rerun}, RerunJobResult: JobSuccess},
			gpu: JobSuccess, wantKind: gatecheck.KindFailed, wantReason: []string{"provision's record of the tiers the lane tests is missing"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := ConcludeRequest{Decision: OutcomeRun, GPUJobResult: tc.gpu, Tiers: tc.tiers}
			assert.Assert(t, tc.tiers.tiered())
			kind, reason, err := req.ResolveKind()
			assert.NilError(t, err)
			assert.Check(t, is.Equal(kind, tc.wantKind), reason)
			for _, w := range tc.wantReason {
				assert.Check(t, is.Contains(reason, w))
			}
		})
	}
	assert.Check(t, !TierRequest{Expected: []string{""}, Rows: []lanetiers.Result{row("", "passed", "G", "D", 1)}}.tiered(),
		"a lane of one pod without a host fault keeps the plain gate")
}

// A matrix gate shows a row per tier and publishes each tier's own check,
// keyed by the tier, before the gate: what a later lane reuses a tier by.
func TestConcludePublishesTheTierChecksAndTheRows(t *testing.T) {
	key := &gatecheck.TreeKey{Tree: strings.Repeat("7", 40), Lane: strings.Repeat("1", 64)}
	f := &fakePublisher{}
	rows := []lanetiers.Result{row("ampere", "passed", "NVIDIA A100", "US-TX-3", 300), row("hopper", "failed", "NVIDIA H100", "EU-RO-1", 200)}
	c, err := Conclude(context.Background(), f, ConcludeRequest{Decision: OutcomeRun, GPUJobResult: JobFailure, Image: "i@sha256:1", LaneImage: "i@sha256:1",
		Tiers:    TierRequest{Expected: []string{"ampere", "hopper"}, Rows: rows},
		Evidence: gatecheck.Evidence{HeadSHA: head, TestedRef: merge, Key: key}})
	assert.NilError(t, err)
	assert.Check(t, is.Equal(c.Kind, gatecheck.KindFailed))
	assert.Assert(t, is.Len(f.created, 3))
	assert.Check(t, is.Equal(f.created[0].Name, "CI GPU gate (ampere)"))
	ampere := key.ForTier("ampere")
	assert.Check(t, is.Equal(f.created[0].ExternalID, "runpod-gpu-gate:v2:"+merge+":paid:"+ampere.String()))
	assert.Check(t, is.Equal(f.created[0].Conclusion, "success"))
	assert.Check(t, is.Equal(f.created[1].Name, "CI GPU gate (hopper)"))
	assert.Check(t, is.Equal(f.created[1].Conclusion, "failure"))
	gate := f.created[2]
	assert.Check(t, is.Equal(gate.Name, "CI GPU gate"))
	assert.Check(t, is.Equal(gate.Conclusion, "failure"))
	assert.Check(t, is.Contains(gate.Summary, "| ampere | NVIDIA A100 | US-TX-3 | 1.50 | 300 | passed: the GPU job passed |"))
	assert.Check(t, is.Contains(gate.Summary, "| hopper | NVIDIA H100 | EU-RO-1 | 1.50 | 200 | failed: the GPU job failed |"))
	assert.Check(t, is.Contains(gate.Summary, "Reason: tier hopper failed"))
	assert.Check(t, is.Len(c.TierChecks, 2))
	assert.Check(t, is.Contains(c.Summary(), "tier ampere: paid"))
}
