package serverless

import (
	"context"
	"errors"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/budget"
	"github.com/org/runpod-gpu/pkg/runpod"
)

// billedToday is the simulated RunPod with usd billed today for a pod of
// the pod lane (the simulated account's own pods and endpoints come on top).
type billedToday struct {
	*runpod.Client
	now func() time.Time
	usd float64
}

func (b billedToday) PodBilling(ctx context.Context, q runpod.BillingQuery) ([]runpod.BillingRecord, error) {
	records, err := b.Client.PodBilling(ctx, q)
	day := b.now().UTC().Truncate(24 * time.Hour)
	return append(records, runpod.BillingRecord{ID: "pod-lane-pod", Start: day, End: day.AddDate(0, 0, 1), Total: b.usd}), err
}

// The Serverless lane makes the pod lane's budget check before its first
// create: an attempt whose reservations ($1.36 setup + $1.25 job) would pass
// the daily budget creates nothing; one that fits goes on.
func TestSetupChecksTheSharedBudgetFirst(t *testing.T) {
	for _, tc := range []struct {
		daily   float64
		wantErr string
	}{
		{3.00, "daily budget $3.00: $0.45 spent (RunPod billing) + $0.00 in flight + this create's worst case $2.61 = $3.06 would pass it; serverless attempt rpg-sls-"},
		{3.10, ""},
	} {
		w := newSimWorld(t, simConfig{})
		rp := w.lane.Mgmt.(*runpod.Client)
		w.lane.Budget = &budget.Guard{Limits: budget.Limits{DailyUSD: tc.daily}, RunPod: billedToday{Client: rp, now: w.clock.Now, usd: 0.45},
			Repository: simRepo, Clock: w.clock}
		assert.Check(t, is.Equal(w.lane.WorstCaseUSD(), 2.61))

		_, err := w.setup()

		assert.Assert(t, w.lane.BudgetUsage != nil)
		assert.Check(t, is.Equal(w.lane.BudgetUsage.SpentToday, 0.45))
		if tc.wantErr != "" {
			assert.Check(t, errors.Is(err, budget.ErrOverBudget), "got %v", err)
			assert.Check(t, is.ErrorContains(err, tc.wantErr))
			assert.Check(t, is.Equal(w.requests()["POST /v2/templates"], 0), "nothing is created")
			assert.Check(t, is.Equal(w.requests()["POST /v2/serverless"], 0))
			if l, lerr := ReadLedger(w.lane.Ledger.Path); lerr == nil {
				assert.Check(t, is.Len(l.Reservations, 0), "no ledger reservation either")
			}
			continue
		}
		assert.NilError(t, err)
		assert.Check(t, is.Equal(w.requests()["POST /v2/serverless"], 1))
		o := Outcome{Settings: w.lane.Settings, Budget: w.lane.BudgetUsage}
		assert.Check(t, is.Contains(o.Summary(), "| Budget used | today $0.45 of $3.10 spent (RunPod billing)"))
	}
}

// The budget prices a live endpoint of the lane as the lane does: at its
// price ceiling, until its cleanup deadline (plus the reaper's margin).
func TestBudgetBoundsAnEndpointAsTheLaneDoes(t *testing.T) {
	s := DefaultSettings()
	assert.Check(t, is.Equal(budget.DefaultEndpointHourly, s.PriceCeiling))
	assert.Check(t, budget.EndpointBound >= s.CleanupDeadline, "an endpoint can live until its cleanup deadline")
}
