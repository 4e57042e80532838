package budget

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/spend"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/wire"
)

// Two lanes race for the budget's last dollar: both passed Check before the
// other's pod existed; after their creates each re-checks, counting only the
// pods created before its own, so the older pod is kept and the younger one
// refused (to be deleted at once), whichever lane lists first. Pods of the
// same instant count against each other: both are refused, never both kept.
func TestRecheckKeepsTheOlderPodOfARace(t *testing.T) {
	tags := func(run int64) ownership.Tags {
		return ownership.Tags{Repository: "org/app", Workflow: ".github/workflows/gpu.yml", RunID: run, Attempt: 1, Candidate: 1}
	}
	pod := func(id string, run int64, at time.Time) runpod.Pod {
		tg := tags(run)
		return runpod.Pod{ID: id, Name: tg.PodName(), Env: tg.Env(), Status: runpod.PodRunning, Cost: 0.50, CreatedAt: wire.KnownTime(at)}
	}
	older, younger := pod("pod-a", 1, now.Add(-2*time.Second)), pod("pod-b", 2, now.Add(-time.Second))
	sameA, sameB := pod("pod-a", 1, now), pod("pod-b", 2, now)
	create := spend.Create{Lane: spend.LanePod, What: "candidate c1", WorstCaseUSD: usd(0.50)} // $0.50/h for its 1 h bound
	tests := []struct {
		name    string
		live    []runpod.Pod
		pod     runpod.Pod
		wantErr string
	}{
		{name: "the older pod is kept", live: []runpod.Pod{older, younger}, pod: older},
		{name: "the younger pod is refused", live: []runpod.Pod{older, younger}, pod: younger,
			wantErr: "daily budget $1.00: $0.40 spent (RunPod billing) + $0.50 in flight (pods created before this one) + this pod's worst case $0.50 = $1.40 passes it; " +
				"another lane's pod took the budget first: pod candidate c1 (pod pod-b) is deleted at once"},
		{name: "a lone pod is kept", live: []runpod.Pod{younger}, pod: younger},
		{name: "equal creation times count both ways: one is refused", live: []runpod.Pod{sameB, sameA}, pod: sameA, wantErr: "(pod pod-a) is deleted at once"},
		{name: "equal creation times count both ways: so is the other", live: []runpod.Pod{sameA, sameB}, pod: sameB, wantErr: "(pod pod-b) is deleted at once"},
		{name: "an own pod that is not listed yet is no older than now", live: []runpod.Pod{older}, pod: runpod.Pod{ID: "pod-c"}, wantErr: "(pod pod-c) is deleted at once"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rp := &fakeRunPod{pods: []runpod.BillingRecord{charge("old", 0, 0.40)}, live: tc.live}
			u, err := guard(rp, spend.Limits{DailyUSD: usd(1.00)}).Recheck(context.Background(), create, tc.pod)
			if tc.wantErr == "" {
				assert.NilError(t, err)
				assert.Check(t, is.Equal(u.SpentToday, usd(0.40)))
				return
			}
			var refused *spend.RefusedError
			assert.Assert(t, errors.As(err, &refused), "got %v", err)
			assert.Check(t, is.ErrorContains(err, tc.wantErr))
			assert.Check(t, is.Equal(refused.Created, tc.pod.ID))
		})
	}
}

// A re-check that cannot list what is in flight refuses the pod too.
func TestRecheckRefusesWhenTheListingFails(t *testing.T) {
	rp := &fakeRunPod{listErr: errors.New("503")}
	_, err := guard(rp, spend.Limits{DailyUSD: usd(1.00)}).Recheck(context.Background(), spend.Create{Lane: spend.LanePod, What: "c1", WorstCaseUSD: usd(0.1)}, runpod.Pod{ID: "p1"})
	assert.Check(t, is.ErrorContains(err, "the re-check after the create of pod p1 could not read what is in flight (503)"))
	assert.Check(t, !errors.Is(err, spend.ErrOverBudget))
}

// The bound printed for each refused pod: its price for the re-check's reads
// and its deletion, by the second.
func TestOvershootBound(t *testing.T) {
	assert.Check(t, is.Equal(RecheckWindow, CheckBudget+180*time.Second+10*time.Second), "delete budget %s", RecheckWindow-CheckBudget-10*time.Second)
	assert.Check(t, is.Equal(OvershootBound(money.PerHour(3.60)), usd(0.22)))
}
