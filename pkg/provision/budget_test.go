package provision

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/budget"
	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/spend"
)

// spentElsewhere is the simulated RunPod with a charge of usd today for a pod
// of another tool on the same account (the simulated hosts end a container
// that registers no runner at once, so the charge is added to the bill the
// simulated RunPod serves for the lane's own pods).
type spentElsewhere struct {
	*runpod.Client
	now func() time.Time
	usd float64
}

func (s spentElsewhere) PodBilling(ctx context.Context, q runpod.BillingQuery) ([]runpod.BillingRecord, error) {
	records, err := s.Client.PodBilling(ctx, q)
	day := s.now().UTC().Truncate(24 * time.Hour)
	return append(records, runpod.BillingRecord{ID: "someone-elses-notebook", Start: day, End: day.AddDate(0, 0, 1), Total: s.usd, GPU: s.usd}), err
}

// The case: a daily budget of $0.50 with $0.45 spent refuses a
// create whose worst case is $0.10 ($0.25/h for 240 s of startup and 1,200 s
// of lifetime), naming both numbers; nothing is created. At $0.55 it fits.
func TestBudgetRefusesACreateWhoseWorstCasePassesIt(t *testing.T) {
	for _, tc := range []struct {
		daily   money.Amount
		wantErr string
	}{
		{50 * money.Cent, "daily budget $0.50: $0.45 spent (RunPod billing) + $0.00 in flight + this create's worst case $0.10 = $0.55 would pass it; " +
			"pod candidate live-1 (NVIDIA RTX A4000 at $0.25/h) was not created"},
		{55 * money.Cent, ""},
	} {
		s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a4000))}, func(c *config.Config) {
			onlyA4000(c)
			c.StartupTimeoutSeconds, c.LifetimeSeconds, c.SetupBudgetSeconds = 240, 1200, 600
		})
		billing := spentElsewhere{Client: s.deps.RunPod.(*runpod.Client), now: s.clock.Now, usd: 0.45}
		s.deps.Budget = &budget.Guard{Limits: spend.Limits{DailyUSD: tc.daily}, RunPod: billing,
			Repository: cloud.Repository, PodBound: 1440 * time.Second, Clock: s.clock, Logf: s.obs.Logf}
		creates := countRoute(s, "POST /v2/pods")

		res, err := s.run(t)

		if tc.wantErr != "" {
			assert.Check(t, errors.Is(err, spend.ErrOverBudget), "got %v", err)
			assert.Check(t, is.ErrorContains(err, tc.wantErr))
			assert.Check(t, is.Equal(countRoute(s, "POST /v2/pods"), creates), "nothing is created")
			assert.Check(t, is.Len(res.Attempts, 0))
		} else {
			assert.NilError(t, err)
			assert.Check(t, is.Equal(countRoute(s, "POST /v2/pods"), creates+1))
			// The re-check counts the new pod once, at its worst case, not
			// again among the lane's own pods.
			assert.Check(t, is.Contains(res.BudgetRecheck, "within the budget: kept"))
			assert.Check(t, is.Contains(res.BudgetRecheck, "$0.00 in flight (0 live pod(s) and endpoint(s))"))
		}
		assert.Assert(t, res.Budget != nil)
		assert.Check(t, is.Contains(res.Summary(err), "Budget used: today $0.45 of $0."))
	}
}

// RunPod's billing shows a pod's charges with a delay and a deleted pod is in
// no listing, so the budget counts the run's own pods at their bound: with
// the billing an hour late, a rejected pod that cost $0.02 and a next
// candidate whose worst case is $0.108 do not fit a daily $0.12, though
// billing and the pod list show neither. Billing is read once for the run.
func TestBudgetCountsTheRunsOwnPodsBillingDoesNotShowYet(t *testing.T) {
	slowFailing := func(h *runpodsim.HostProfile) { h.BootSeconds, h.MaxPTXISA = 300, "8.5" }
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, slowFailing), host("h2", a5000)),
		RunPodOptions: []runpodsim.Option{runpodsim.WithBillingDelay(time.Hour)}}, func(c *config.Config) {
		c.GPUTiers = []config.GPUTier{{Name: "ampere", GPUIDs: []string{a4000, a5000}}}
		c.MaxPriceCandidates, c.MaxProvisionAttempts = 2, 3
		c.StartupTimeoutSeconds, c.LifetimeSeconds, c.SetupBudgetSeconds = 400, 1040, 600
	})
	s.deps.Budget = &budget.Guard{Limits: spend.Limits{DailyUSD: 12 * money.Cent}, RunPod: s.deps.RunPod.(*runpod.Client),
		Repository: cloud.Repository, PodBound: 1440 * time.Second, Clock: s.clock, Logf: s.obs.Logf}

	res, err := s.run(t)

	assert.Check(t, errors.Is(err, spend.ErrOverBudget), "got %v", err)
	assert.Assert(t, is.Len(res.Attempts, 1), "the rejected candidate only: %v", outcomes(res))
	assert.Check(t, res.SpentBound > 2*money.Cent)
	assert.Check(t, is.ErrorContains(err, "pod candidate live-2 (NVIDIA RTX A5000 at $0.27/h) was not created"))
	assert.Check(t, is.Contains(strings.Join(res.Budget.InFlight, ","), "this lane's 1 pod(s)"))
	assert.Check(t, is.Equal(countRoute(s, "GET /v2/billing/pods"), 1), "billing read once for both checks")
	assert.Check(t, is.Equal(countRoute(s, "GET /v2/pods"), 3), "the pods listed at each check and at the re-check after the create")
}
