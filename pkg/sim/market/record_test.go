package market

import (
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/money"
)

// attempt is a created pod's attempt record ended at, with verdict v.
func attempt(id string, at time.Time, v cost.HostVerdict) cost.Attempt {
	return cost.Attempt{PodID: id, GPU: "NVIDIA RTX A5000", Cloud: "SECURE", DataCenter: "EU-RO-1", Machine: "m-" + id,
		Host: v, At: at, Seconds: cost.KnownSeconds(90), Price: cost.KnownPrice(money.PerHour(0.27), "test"), Outcome: cost.OutcomeRejected}
}

// The simulated lane reads what the real one can: the record the daily cost
// history published at 06:30 UTC from the 7 full days before, not its own
// attempts of the same day; before the first record, an empty one (a cold
// start that still records machines).
func TestDailyRecord(t *testing.T) {
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC) // Monday
	e := newEvidence(start, false, false)
	ids := func(at time.Time) []string {
		var out []string
		for _, o := range e.record(at).Observations {
			out = append(out, o.Machine)
		}
		return out
	}
	e.add([]cost.Attempt{attempt("mon", start.Add(2*time.Hour), cost.HostFailed)})
	assert.Check(t, is.Len(ids(start.Add(3*time.Hour)), 0), "the same day: not yet")
	assert.Check(t, is.Len(ids(start.Add(30*time.Hour)), 0), "Tuesday before 06:30: the record of Monday 06:30 has nothing of Monday")
	e.add([]cost.Attempt{attempt("tue", start.Add(31*time.Hour), cost.HostWorked)})
	assert.DeepEqual(t, ids(start.Add(30*time.Hour+30*time.Minute)), []string{"m-mon"})
	assert.Check(t, is.DeepEqual(ids(start.Add(54*time.Hour)), []string{"m-mon"}), "Wednesday 06:00: still Tuesday's record")
	assert.DeepEqual(t, ids(start.Add(55*time.Hour)), []string{"m-mon", "m-tue"})
	assert.Check(t, is.DeepEqual(ids(start.Add(8*24*time.Hour+7*time.Hour)), []string{"m-tue"}), "on the next Tuesday, Monday's attempt is out of the 7 days")

	instant := newEvidence(start, true, false)
	instant.add([]cost.Attempt{attempt("now", start.Add(time.Hour), cost.HostFailed)})
	assert.Check(t, is.Len(instant.record(start.Add(time.Hour)).Observations, 1), "instant learning sees every attempt at once")

	old := newEvidence(start, true, true)
	old.add([]cost.Attempt{attempt("p", start.Add(time.Hour), cost.HostFailed)})
	assert.Check(t, is.Equal(old.record(start.Add(time.Hour)).Observations[0].Machine, ""), "records without machines: per data center only")
}

// An attempt is evidence as the cost history reads it: a created pod whose
// host showed a verdict, where the record names its data center.
func TestObservationFollowsTheHistory(t *testing.T) {
	at := time.Date(2026, 3, 2, 1, 0, 0, 0, time.UTC)
	o, ok := observation(attempt("p1", at, cost.HostFailed))
	assert.Assert(t, ok)
	assert.Check(t, is.Equal(o.Machine, "m-p1"))
	assert.Check(t, !o.OK)
	assert.Check(t, is.Equal(o.Seconds, int64(90)))
	for name, a := range map[string]cost.Attempt{
		"no pod":          {GPU: "g", DataCenter: "X", Host: cost.HostFailed, At: at},
		"no verdict":      attempt("p2", at, ""),
		"no data center":  func() cost.Attempt { a := attempt("p3", at, cost.HostWorked); a.DataCenter = ""; return a }(),
		"no time":         attempt("p4", time.Time{}, cost.HostWorked),
		"screened on bad": func() cost.Attempt { a := attempt("p5", at, ""); a.Reason = "placed on a machine held bad"; return a }(),
	} {
		_, ok := observation(a)
		assert.Check(t, !ok, name)
	}
}
