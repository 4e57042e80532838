package market

import (
	"context"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestFleetLayouts(t *testing.T) {
	tests := []struct {
		layout Layout
		check  func(t *testing.T, f Fleet)
	}{
		{Uniform, func(t *testing.T, f Fleet) {
			// Evenly spread: every GPU type with five or more machines in a cloud has bad ones.
			for _, idx := range groups(f.Machines, func(m Machine) string { return m.Profile.GPUTypeID + "|" + m.Profile.Cloud }) {
				bad := 0
				for _, i := range idx {
					if f.Machines[i].Fault != FaultNone {
						bad++
					}
				}
				if len(idx) >= 5 {
					assert.Check(t, bad > 0, "%s: no bad machine among %d", f.Machines[idx[0]].Profile.GPUTypeID, len(idx))
				}
			}
		}},
		{Clustered, func(t *testing.T, f Fleet) {
			// One data center's rollout is bad on every machine, and one model is flaky.
			for _, idx := range groups(f.Machines, func(m Machine) string { return m.Profile.DataCenterID }) {
				all := true
				for _, i := range idx {
					all = all && f.Machines[i].Fault == FaultPTX
				}
				if all {
					return
				}
			}
			t.Error("no data center with a bad rollout on every machine")
		}},
	}
	for _, tc := range tests {
		t.Run(string(tc.layout), func(t *testing.T) {
			f, err := NewFleet(Scenario{Seed: 3, Layout: tc.layout})
			assert.NilError(t, err)
			assert.Check(t, f.BadShare() > 0.18 && f.BadShare() < 0.22, "bad share %.3f", f.BadShare())
			again, err := NewFleet(Scenario{Seed: 3, Layout: tc.layout})
			assert.NilError(t, err)
			assert.DeepEqual(t, again, f)
			tc.check(t, f)
		})
	}
}

func TestScenarioRejectsBadInput(t *testing.T) {
	for _, s := range []Scenario{{PRs: -1}, {BadShare: 1.5}, {Layout: "striped"}} {
		_, err := Run(context.Background(), s, Policies())
		assert.Check(t, err != nil, "%+v", s)
	}
	_, err := Run(context.Background(), Scenario{Layout: "striped"}, nil)
	assert.ErrorContains(t, err, `layout "striped": want "uniform" or "clustered"`)
}

// A small replay: deterministic by seed, every policy sees the same refs,
// and reputation wastes less on rejected hosts than the seed's policy.
func TestSmallReplay(t *testing.T) {
	s := Scenario{Seed: 1, PRs: 40, Layout: Clustered, WarmUp: 12 * time.Hour}
	rep, err := Run(context.Background(), s, Policies())
	assert.NilError(t, err)
	again, err := Run(context.Background(), s, Policies())
	assert.NilError(t, err)
	assert.Equal(t, again.Markdown(), rep.Markdown(), "same seed, same table")
	t.Log("\n" + rep.Markdown())

	assert.Assert(t, is.Len(rep.Results, 4))
	for _, r := range rep.Results {
		assert.Check(t, is.Equal(r.Refs, rep.Refs), r.Policy)
		assert.Check(t, r.Pods == r.Accepted+r.Rejected, "%s: %d pods, %d accepted, %d rejected", r.Policy, r.Pods, r.Accepted, r.Rejected)
	}
	seed, _ := rep.Result("seed")
	rp, _ := rep.Result("reputation")
	assert.Check(t, rp.WastePerAccepted() < seed.WastePerAccepted(), "reputation $%.4f, seed $%.4f", rp.WastePerAccepted(), seed.WastePerAccepted())
	assert.Check(t, rp.DollarsPerRef() <= seed.DollarsPerRef())
}

// The warm-up runs before Start from its own stream: the measured refs are
// the same with or without it, and none of its refs is counted.
func TestWarmUpLeavesTheMeasuredRefs(t *testing.T) {
	with, err := Scenario{Seed: 4, PRs: 50}.withDefaults()
	assert.NilError(t, err)
	without := with
	without.WarmUp = 0
	all := workload(with)
	var warm, measured []ref
	for _, r := range all {
		if r.Warm {
			warm = append(warm, r)
			assert.Check(t, r.At.Before(with.Start))
			continue
		}
		measured = append(measured, r)
	}
	assert.Check(t, len(warm) > 200, "72 hours of pull requests every quarter hour: %d refs", len(warm))
	assert.DeepEqual(t, measured, workload(without))
}
