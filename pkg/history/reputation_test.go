package history

import (
	"fmt"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/reputation"
	"github.com/org/runpod-gpu/pkg/wire"
)

// repPod is a pod of GPU "A" in dc, ended at, with the host verdict v.
func repPod(id, dc string, v cost.HostVerdict, at time.Time) Pod {
	return Pod{ID: id, GPU: "A", Cloud: "SECURE", DataCenter: dc, Driver: "12.8", Host: v, At: at,
		Outcome: cost.OutcomeRejected, Seconds: cost.KnownSeconds(120), Price: price(0.5)}
}

func repAttempt(run int64, created time.Time, pods ...Pod) Attempt {
	return Attempt{RunID: run, Attempt: 1, CreatedAt: created, Pods: pods}
}

// The cost history's attempts become the reputation record the lane reads:
// recent evidence weighs more than old, a pair that failed twice in a row
// lately is quarantined, and evidence that says nothing about a pair (no data
// center, no host verdict, a duplicate) is left out.
func TestReportReputation(t *testing.T) {
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	old, recent := now.Add(-10*24*time.Hour), now.Add(-time.Hour)
	worked, failed := cost.HostWorked, cost.HostFailed
	type want struct {
		dc          string
		failAbove   float64 // the estimate is above this…
		failBelow   float64 // …and below this
		quarantined bool
	}
	tests := []struct {
		name      string
		attempts  []Attempt
		wantStats ReputationStats
		want      []want
	}{
		{
			name: "recent failures outweigh old successes, and recent successes old failures",
			attempts: []Attempt{
				repAttempt(1, old, repPod("a1", "DC-BAD", worked, old), repPod("b1", "DC-GOOD", failed, old)),
				repAttempt(2, old, repPod("a2", "DC-BAD", worked, old.Add(time.Minute)), repPod("b2", "DC-GOOD", failed, old.Add(time.Minute))),
				repAttempt(3, old, repPod("a3", "DC-BAD", worked, old.Add(2*time.Minute))),
				repAttempt(4, recent, repPod("a4", "DC-BAD", failed, recent), repPod("b4", "DC-GOOD", worked, recent)),
				repAttempt(5, recent, repPod("a5", "DC-BAD", failed, recent.Add(time.Minute)), repPod("b5", "DC-GOOD", worked, recent.Add(time.Minute))),
			},
			wantStats: ReputationStats{Observations: 9},
			want: []want{
				{dc: "DC-BAD", failAbove: reputation.DefaultParams.Avoid, failBelow: 1, quarantined: true},
				{dc: "DC-GOOD", failAbove: 0, failBelow: reputation.DefaultParams.Avoid},
			},
		},
		{
			name: "no data center (an older record) is no evidence: a cold start",
			attempts: []Attempt{
				repAttempt(1, recent, repPod("a1", "", failed, recent), repPod("a2", "", failed, recent)),
			},
			wantStats: ReputationStats{NoDataCenter: 2},
		},
		{
			name: "a rejection that says nothing about the host, and a duplicate, are left out",
			attempts: []Attempt{
				repAttempt(1, recent, repPod("a1", "DC-X", "", recent), repPod("a2", "DC-X", failed, recent)),
				repAttempt(2, recent, func() Pod { p := repPod("a2", "DC-X", failed, recent); p.DuplicateOf = "run 1 attempt 1"; return p }()),
			},
			wantStats: ReputationStats{Observations: 1, NoVerdict: 1},
			want:      []want{{dc: "DC-X", failAbove: reputation.DefaultParams.PriorFailure, failBelow: 1}},
		},
		{
			// Dated at the run's creation, the accepted pod would sort before
			// the run's own two rejections and leave them as two failures in
			// a row: a quarantine of the pair that just worked.
			name: "an undated accepted pod comes after its run's rejected pods",
			attempts: []Attempt{
				repAttempt(2, recent, repPod("a1", "DC-X", failed, recent.Add(5*time.Minute)), repPod("a2", "DC-X", failed, recent.Add(10*time.Minute)),
					func() Pod { p := repPod("a3", "DC-X", worked, time.Time{}); p.Outcome = cost.OutcomeAccepted; return p }()),
			},
			wantStats: ReputationStats{Observations: 3},
			want:      []want{{dc: "DC-X", failAbove: 0, failBelow: 1, quarantined: false}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := summarize(tc.attempts, nil)
			rec, stats := r.Reputation()
			assert.DeepEqual(t, stats, tc.wantStats)
			assert.Check(t, is.Len(rec.Observations, tc.wantStats.Observations))

			// The record round-trips through the file provision reads.
			data, err := rec.Marshal()
			assert.NilError(t, err)
			parsed, err := reputation.Parse(data)
			assert.NilError(t, err)
			e := reputation.New(parsed, now, reputation.DefaultParams)
			assert.Equal(t, e.Empty(), len(tc.want) == 0, "a record without evidence is a cold start")
			for _, w := range tc.want {
				est := e.Estimate(reputation.Pair{GPU: "A", Cloud: "SECURE", DataCenter: w.dc})
				assert.Check(t, est.Failure > w.failAbove && est.Failure < w.failBelow,
					"%s: failure %.3f, want in (%.3f, %.3f)", w.dc, est.Failure, w.failAbove, w.failBelow)
				assert.Check(t, is.Equal(!est.QuarantinedUntil.IsZero(), w.quarantined), "%s quarantined until %v", w.dc, est.QuarantinedUntil)
			}
		})
	}
}

// A pod lost to its host while its GPU job ran counts against that host: the
// cost artifact reports it (host failed) beside the tier's re-run, and the
// reputation record takes one failure for the lost pod's pair and one
// success for the re-run's.
func TestLostPodCountsAgainstItsHost(t *testing.T) {
	at := time.Date(2026, 11, 20, 11, 0, 0, 0, time.UTC)
	window := cost.Window{Start: wire.KnownTime(at.Add(-10 * time.Minute)), End: wire.KnownTime(at)}
	lost := cost.Report{PodID: "lost", GPU: "A", Cloud: "SECURE", DataCenter: "DC-LOST", Price: price(0.5), Window: window, Host: cost.HostFailed}
	rerun := cost.Report{PodID: "rerun", GPU: "A", Cloud: "SECURE", DataCenter: "DC-OTHER", Price: price(0.5), Window: window}
	art := cost.Artifact{Report: rerun, More: []cost.Report{lost}}
	var pods []Pod
	for _, r := range art.Reports() {
		pods = append(pods, reportPods(r, SourceArtifact)...)
	}
	assert.Assert(t, is.Len(pods, 2))
	assert.Check(t, is.Equal(pods[0].Host, cost.HostWorked))
	assert.Check(t, is.Equal(pods[1].Host, cost.HostFailed))

	r := summarize([]Attempt{repAttempt(1, at, pods...)}, nil)
	rec, stats := r.Reputation()
	assert.Check(t, is.Equal(stats.Observations, 2))
	byDC := map[string]bool{}
	for _, o := range rec.Observations {
		byDC[o.DataCenter] = o.OK
	}
	assert.Check(t, is.DeepEqual(byDC, map[string]bool{"DC-LOST": false, "DC-OTHER": true}))
}

// The machine provision's attempt line names reaches the record: a cleanup
// report of the accepted pod takes it from the attempt line of the same pod,
// and the estimator holds a machine whose pods failed bad while its good
// neighbours in the same data center keep their place.
func TestReportReputationCarriesTheMachine(t *testing.T) {
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	report := Pod{ID: "p9", GPU: "A", Source: SourceArtifact, Host: cost.HostWorked}
	line := Pod{ID: "p9", GPU: "A", Source: SourceAttemptLine, Machine: "m-good-1", DataCenter: "DC-X"}
	assert.Check(t, is.Equal(fillIdentity(report, line).Machine, "m-good-1"))

	on := func(id, machine string, v cost.HostVerdict, at time.Time) Pod {
		p := repPod(id, "DC-X", v, at)
		p.Machine = machine
		return p
	}
	var pods []Pod
	for i := range 6 {
		at := now.Add(time.Duration(i-10) * time.Hour)
		pods = append(pods, on(fmt.Sprintf("g%d", i), fmt.Sprintf("m-good-%d", i%2), cost.HostWorked, at),
			on(fmt.Sprintf("b%d", i), "m-bad", cost.HostFailed, at.Add(time.Minute)))
	}
	rec, stats := summarize([]Attempt{repAttempt(1, now.Add(-11*time.Hour), pods...)}, nil).Reputation()
	assert.Check(t, is.Equal(stats.Observations, 12))
	data, err := rec.Marshal()
	assert.NilError(t, err)
	parsed, err := reputation.Parse(data)
	assert.NilError(t, err)
	e := reputation.New(parsed, now, reputation.DefaultParams)
	bad, why := e.BadMachine("m-bad")
	assert.Check(t, bad, "m-bad failed all 6 of its pods")
	assert.Check(t, is.Contains(why, "failed 6 of its last 6 pods"))
	good, _ := e.BadMachine("m-good-0")
	assert.Check(t, !good)
	est := e.Estimate(reputation.Pair{GPU: "A", Cloud: "SECURE", DataCenter: "DC-X"})
	assert.Check(t, est.Failure < reputation.DefaultParams.Avoid, "the pair is judged by its other machines: %.3f", est.Failure)
	assert.Check(t, is.Equal(fmt.Sprintf("%.2f", est.Screened), "0.50"), "half its placements landed on the held machine")
}
