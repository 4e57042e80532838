package runpodsim_test

import (
	"context"
	"math"
	"net/http"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// billingClient is a RunPod client of s on its virtual clock.
func (s *sim) billingClient() *runpod.Client {
	policy := reqpolicy.New(reqpolicy.WithClock(s.clock), reqpolicy.WithSleeper(s.clock.Sleep), reqpolicy.WithJitter(func() float64 { return 0 }))
	return runpod.New(s.url, testKey, runpod.WithPolicy(policy))
}

// sumBilled adds what the records bill per id.
func sumBilled(records []runpod.BillingRecord) map[string]float64 {
	out := map[string]float64{}
	for _, r := range records {
		out[r.ID] += r.Total
	}
	return out
}

// billingDay is the simulation's first day.
var billingDay = time.Date(runpodsim.Epoch.Year(), runpodsim.Epoch.Month(), runpodsim.Epoch.Day(), 0, 0, 0, 0, time.UTC)

// The pod billing route answers from the per-second meter: a pod's records
// add up to its Bill, the run that crosses midnight is split between the two
// days, a stopped stretch bills nothing, and every answer is the contract's.
func TestPodBillingAddsUpToTheMeter(t *testing.T) {
	s := newSim(t, runpodsim.WithMarket(smallMarket(healthyHost("h1"), healthyHost("h2"))))
	day := s.mustCreate(podRequest("day", a40))
	night := s.mustCreate(podRequest("night", a40))
	s.advance(bootTime + 10*time.Minute + 500*time.Millisecond)
	assert.Equal(t, s.do(http.MethodDelete, "/v2/pods/"+day.ID, nil).status, http.StatusNoContent)
	s.advance(12 * time.Hour) // night runs past midnight (the epoch is noon)
	assert.Equal(t, s.do(http.MethodDelete, "/v2/pods/"+night.ID, nil).status, http.StatusNoContent)

	records, err := s.billingClient().PodBilling(context.Background(),
		runpod.BillingQuery{Start: billingDay, End: billingDay.AddDate(0, 0, 2)})
	assert.NilError(t, err)
	for _, p := range []pod{day, night} {
		bill, err := s.server.Bill(p.ID)
		assert.NilError(t, err)
		assert.Check(t, math.Abs(sumBilled(records)[p.ID]-bill.Dollars) < 1e-5, "%s: billed %v, meter %v", p.ID, sumBilled(records)[p.ID], bill.Dollars)
	}
	var nightDays []time.Time
	for _, r := range records {
		if r.ID == night.ID {
			nightDays = append(nightDays, r.Start)
		}
		assert.Check(t, is.Equal(r.End.Sub(r.Start), 24*time.Hour))
	}
	assert.Check(t, is.DeepEqual(nightDays, []time.Time{billingDay, billingDay.AddDate(0, 0, 1)}), "the run across midnight bills both days")

	// Hour buckets, one pod, and the contract's shape of every answer.
	s.do(http.MethodGet, "/v2/billing/pods?bucketSize=hour&startTime=2026-12-01T00:00:00Z&endTime=2026-12-03T00:00:00Z&podId="+night.ID, nil)
	s.do(http.MethodGet, "/v2/billing/pods?lastN=3", nil)
	s.do(http.MethodGet, "/v2/billing/pods", nil)
	hourly, err := s.billingClient().PodBilling(context.Background(),
		runpod.BillingQuery{Start: billingDay, End: billingDay.AddDate(0, 0, 2), Bucket: runpod.BucketHour, ID: night.ID})
	assert.NilError(t, err)
	assert.Check(t, is.Len(hourly, 13), "12 whole hours and the boot's part hour")
}

// A provider that bills started minutes charges each stretch a whole number
// of minutes: the drift against the per-second meter stays under a minute of
// the pod's price per stretch.
func TestPodBillingRoundsEachStretchToTheBillingUnit(t *testing.T) {
	s := newSim(t, runpodsim.WithMarket(smallMarket(healthyHost("h1"))), runpodsim.WithBillingRounding(time.Minute))
	p := s.mustCreate(podRequest("minutes", a40))
	s.advance(bootTime + 90*time.Second)
	assert.Equal(t, s.action(p.ID, "stop").status, http.StatusOK)
	s.advance(time.Hour)
	assert.Equal(t, s.action(p.ID, "start").status, http.StatusOK)
	s.advance(30*time.Second + 10*time.Second) // 30 s boot, then 10 s running
	assert.Equal(t, s.do(http.MethodDelete, "/v2/pods/"+p.ID, nil).status, http.StatusNoContent)

	records, err := s.billingClient().PodBilling(context.Background(), runpod.BillingQuery{Start: billingDay, End: billingDay.AddDate(0, 0, 1)})
	assert.NilError(t, err)
	bill, err := s.server.Bill(p.ID)
	assert.NilError(t, err)
	assert.Equal(t, bill.Seconds, int64(100), "the meter stays per second")
	assert.Check(t, math.Abs(sumBilled(records)[p.ID]-(120+60)*0.44/3600) < 1e-5, "90 s bills 2 minutes, 10 s one: got %v", sumBilled(records)[p.ID])
}

// With a billing delay the routes show charges only once they are that old:
// a pod deleted just now has its last minutes missing, and the whole bill
// once the delay has passed.
func TestPodBillingShowsChargesOnlyAfterTheDelay(t *testing.T) {
	s := newSim(t, runpodsim.WithMarket(smallMarket(healthyHost("h1"))), runpodsim.WithBillingDelay(30*time.Minute))
	p := s.mustCreate(podRequest("late", a40))
	s.advance(bootTime + time.Hour)
	assert.Equal(t, s.do(http.MethodDelete, "/v2/pods/"+p.ID, nil).status, http.StatusNoContent)
	q := runpod.BillingQuery{Start: billingDay, End: billingDay.AddDate(0, 0, 1)}
	now, err := s.billingClient().PodBilling(context.Background(), q)
	assert.NilError(t, err)
	assert.Check(t, math.Abs(sumBilled(now)[p.ID]-0.22) < 1e-5, "half an hour of the hour shows: %v", sumBilled(now)[p.ID])
	s.advance(30 * time.Minute)
	later, err := s.billingClient().PodBilling(context.Background(), q)
	assert.NilError(t, err)
	bill, err := s.server.Bill(p.ID)
	assert.NilError(t, err)
	assert.Check(t, math.Abs(sumBilled(later)[p.ID]-bill.Dollars) < 1e-5)

	young := s.mustCreate(podRequest("young", a40))
	s.advance(bootTime + 10*time.Minute)
	assert.Equal(t, s.do(http.MethodDelete, "/v2/pods/"+young.ID, nil).status, http.StatusNoContent)
	rows, err := s.billingClient().PodBilling(context.Background(), q)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(sumBilled(rows)[young.ID], 0.0), "a pod created and deleted within the delay shows nothing yet")
}

// A running pod bills up to now; asking again later bills more.
func TestPodBillingCountsARunningPodSoFar(t *testing.T) {
	s := newSim(t, runpodsim.WithMarket(smallMarket(healthyHost("h1"))))
	p := s.mustCreate(podRequest("live", a40))
	s.advance(bootTime + time.Hour)
	q := runpod.BillingQuery{Start: billingDay, End: billingDay.AddDate(0, 0, 1)}
	first, err := s.billingClient().PodBilling(context.Background(), q)
	assert.NilError(t, err)
	assert.Check(t, math.Abs(sumBilled(first)[p.ID]-0.44) < 1e-5)
	s.advance(time.Hour)
	second, err := s.billingClient().PodBilling(context.Background(), q)
	assert.NilError(t, err)
	assert.Check(t, math.Abs(sumBilled(second)[p.ID]-0.88) < 1e-5)
}

func TestBillingRefusesQueriesTheAPIRefuses(t *testing.T) {
	s := newSim(t)
	for _, target := range []string{
		"/v2/billing/pods?bucketSize=fortnight",
		"/v2/billing/pods?startTime=yesterday",
		"/v2/billing/pods?lastN=0",
		"/v2/billing/serverless?lastN=2&startTime=2026-12-01T00:00:00Z",
		"/v2/billing/pods?startTime=2026-12-02T00:00:00Z&endTime=2026-12-01T00:00:00Z",
	} {
		r := s.do(http.MethodGet, target, nil)
		assert.Check(t, is.Equal(r.status, http.StatusBadRequest), target)
	}
}

// Serverless billing is per endpoint: each worker's life, cold start and
// idle timeout included, as ServerlessBill meters it.
func TestServerlessBillingIsPerEndpoint(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		unit time.Duration
		want float64 // seconds billed
	}{
		{time.Second, 15}, // 10 s cold start, an instant job, 5 s idle
		{time.Minute, 60},
	} {
		s := newSlsSim(t, runpodsim.ServerlessConfig{Worker: runpodsim.JobWorkerFunc(func(ctx context.Context, j runpodsim.WorkerJob) runpodsim.WorkerResult {
			return runpodsim.WorkerResult{Output: []byte(`{"ok":true}`)}
		}), ColdStart: 10 * time.Second, PricePerHour: 0.36}, runpodsim.WithBillingRounding(tc.unit))
		tpl, err := s.client.CreateTemplate(ctx, templateReq("t"))
		assert.NilError(t, err)
		ep, err := s.client.CreateEndpoint(ctx, endpointReq("e", tpl.ID))
		assert.NilError(t, err)
		_, err = s.jobs.Run(ctx, ep.ID, map[string]bool{}, runpod.JobPolicy{TTL: 1200000})
		assert.NilError(t, err)
		s.advance(10 * time.Second)
		s.server.WaitServerlessWorkers()
		s.advance(time.Minute) // the idle timeout stops the worker
		assert.NilError(t, s.client.DeleteEndpoint(ctx, ep.ID))
		s.do(http.MethodGet, "/v2/billing/serverless?startTime=2026-12-01T00:00:00Z&endTime=2026-12-02T00:00:00Z", nil)
		records, err := s.client.ServerlessBilling(ctx, runpod.BillingQuery{Start: billingDay, End: billingDay.AddDate(0, 0, 1)})
		assert.NilError(t, err)
		assert.Assert(t, is.Len(records, 1))
		assert.Check(t, is.Equal(records[0].ID, ep.ID))
		assert.Check(t, math.Abs(records[0].Total-tc.want*0.36/3600) < 1e-5, "unit %s: billed %v", tc.unit, records[0].Total)
		if tc.unit == time.Second {
			assert.Check(t, math.Abs(records[0].Total-s.server.ServerlessBill().Dollars) < 1e-4, "the route and the meter agree")
		}
	}
}
