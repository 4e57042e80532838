package serverless

import (
	"context"
	"errors"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/budget"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/spend"
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
		w.lane.Budget = &budget.Guard{Limits: spend.Limits{DailyUSD: money.FromDollars(tc.daily)}, RunPod: billedToday{Client: rp, now: w.clock.Now, usd: 0.45},
			Repository: simRepo, Clock: w.clock}
		assert.Check(t, is.Equal(w.lane.attemptBound(), money.FromDollars(2.61)))

		_, err := w.setup()

		assert.Assert(t, w.lane.BudgetUsage != nil)
		assert.Check(t, is.Equal(w.lane.BudgetUsage.SpentToday, money.FromDollars(0.45)))
		if tc.wantErr != "" {
			assert.Check(t, errors.Is(err, spend.ErrOverBudget), "got %v", err)
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

// An H100 pool is priced from the catalog's Serverless price of its dearest
// card ($4.18/h), not at the A4000's $0.70: the ledger's reservations, the
// budget's worst case and the receipt (for the run's job reservation) use
// it, so with the default caps setup's $3.10 is refused before any create;
// a pool whose card has no Serverless price in the catalog is refused.
func TestSetupPricesThePoolFromTheCatalog(t *testing.T) {
	h100 := func(w *simWorld) {
		w.lane.Settings.GPUPool, w.lane.Settings.GPUType = "ADA_80_PRO", "NVIDIA H100 80GB HBM3"
	}
	t.Run("the default caps refuse its setup", func(t *testing.T) {
		w := newSimWorld(t, simConfig{})
		h100(w)
		_, err := w.setup()
		assert.Check(t, is.ErrorContains(err, "stage setup needs $3.10, above the per-stage cap of $3.00"))
		assert.Check(t, is.Equal(w.requests()["POST /v2/templates"], 0), "nothing is created")
	})
	t.Run("with room, every bound is at its price", func(t *testing.T) {
		w := newSimWorld(t, simConfig{})
		h100(w)
		w.lane.Ledger.Caps = capsInCents(100, 600, 2000)
		w.lane.Budget = &budget.Guard{Limits: spend.Limits{DailyUSD: 100 * money.Dollar}, RunPod: w.lane.Mgmt.(*runpod.Client), Repository: simRepo, Clock: w.clock}
		r, err := w.setup()
		assert.NilError(t, err)
		assert.Check(t, is.Equal(w.lane.Settings.PriceCeiling, money.PerHour(4.18)))
		assert.Check(t, is.Equal(w.lane.BudgetUsage.WorstCaseUSD, money.FromDollars(5.51)), "setup $3.10 + job $2.41")
		assert.Check(t, is.Equal(r.Asked.PricePerHour, money.PerHour(4.18)))
		l, err := ReadLedger(w.lane.Ledger.Path)
		assert.NilError(t, err)
		assert.Assert(t, is.Len(l.Reservations, 1))
		assert.Check(t, is.Equal(l.Reservations[0].Cents, money.WholeCents(310)))
		assert.Check(t, is.Contains(l.Reservations[0].Basis, "at $4.18/h"))
		assert.Check(t, is.Contains(Outcome{Settings: w.lane.Settings}.Summary(), "4.18"))
	})
	t.Run("no Serverless price for the card: refused", func(t *testing.T) {
		m := runpodsim.DefaultMarket()
		for i := range m.GPUTypes {
			if m.GPUTypes[i].Pool == "ADA_80_PRO" {
				m.GPUTypes[i].ServerlessPrice = 0
			}
		}
		w := newSimWorld(t, simConfig{market: &m})
		h100(w)
		_, err := w.setup()
		assert.Check(t, is.ErrorContains(err, "no Serverless price for NVIDIA H100 80GB HBM3 in pool ADA_80_PRO"))
		assert.Check(t, is.Equal(w.requests()["POST /v2/templates"], 0))
	})
	t.Run("the A4000's pool keeps the lane's floor", func(t *testing.T) {
		w := newSimWorld(t, simConfig{})
		_, err := w.setup()
		assert.NilError(t, err)
		assert.Check(t, is.Equal(w.lane.Settings.PriceCeiling, money.PerHour(0.70)), "the catalog's $0.58 is below the floor")
	})
}
