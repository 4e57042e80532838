package budget

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/spend"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/clock"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/wire"
)

var now = time.Date(2026, 10, 14, 15, 0, 0, 0, time.UTC)

// fakeRunPod answers billing and listings from fixed values.
type fakeRunPod struct {
	pods, endpoints []runpod.BillingRecord
	live            []runpod.Pod
	liveEndpoints   []runpod.Endpoint
	billingErr      error
	listErr         error
	asked           []runpod.BillingQuery
}

func (f *fakeRunPod) PodBilling(_ context.Context, q runpod.BillingQuery) ([]runpod.BillingRecord, error) {
	f.asked = append(f.asked, q)
	return f.pods, f.billingErr
}

func (f *fakeRunPod) ServerlessBilling(_ context.Context, q runpod.BillingQuery) ([]runpod.BillingRecord, error) {
	f.asked = append(f.asked, q)
	return f.endpoints, f.billingErr
}

func (f *fakeRunPod) ListPods(context.Context, runpod.ListPodsQuery) ([]runpod.Pod, error) {
	return f.live, f.listErr
}

func (f *fakeRunPod) ListEndpoints(context.Context) ([]runpod.Endpoint, error) {
	return f.liveEndpoints, f.listErr
}

// charge is a day bucket's charge for id, days before now's day.
func charge(id string, daysAgo int, usd float64) runpod.BillingRecord {
	start := now.Truncate(24*time.Hour).AddDate(0, 0, -daysAgo)
	return runpod.BillingRecord{ID: id, Start: start, End: start.AddDate(0, 0, 1), Total: usd}
}

func guard(rp *fakeRunPod, limits spend.Limits) *Guard {
	return &Guard{Limits: limits, RunPod: rp, Repository: "org/app", PodBound: time.Hour, Clock: clock.Func(func() time.Time { return now })}
}

// The case: a daily budget of $0.50 with $0.45 spent refuses a
// create whose worst case is $0.10, naming both numbers.
func TestCheckRefusesACreateThatWouldPassTheDailyBudget(t *testing.T) {
	rp := &fakeRunPod{pods: []runpod.BillingRecord{charge("old", 3, 4.00), charge("p1", 0, 0.30)},
		endpoints: []runpod.BillingRecord{charge("ep1", 0, 0.15)}}
	u, err := guard(rp, spend.Limits{DailyUSD: usd(0.50)}).Check(context.Background(), spend.Create{Lane: spend.LanePod, What: "candidate live-1", WorstCaseUSD: usd(0.10)})
	var refused *spend.RefusedError
	assert.Assert(t, errors.As(err, &refused), "got %v", err)
	assert.Check(t, errors.Is(err, spend.ErrOverBudget))
	assert.Check(t, is.Equal(err.Error(), "daily budget $0.50: $0.45 spent (RunPod billing) + $0.00 in flight + this create's worst case $0.10 = $0.55 would pass it; pod candidate live-1 was not created"))
	assert.Check(t, is.Equal(u.SpentToday, usd(0.45)))
	assert.Check(t, is.Equal(u.SpentMonth, usd(4.45)))
	assert.Check(t, is.DeepEqual(rp.asked[0], runpod.BillingQuery{Start: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC),
		End: time.Date(2026, 10, 15, 0, 0, 0, 0, time.UTC), Bucket: runpod.BucketDay}), "this month's days, UTC")

	_, err = guard(rp, spend.Limits{DailyUSD: usd(0.50)}).Check(context.Background(), spend.Create{Lane: spend.LanePod, What: "candidate live-2", WorstCaseUSD: usd(0.05)})
	assert.NilError(t, err, "a worst case that fits exactly is made")
	_, err = guard(rp, spend.Limits{MonthlyUSD: usd(4.50)}).Check(context.Background(), spend.Create{Lane: spend.LaneServerless, What: "rpg-sls-x", WorstCaseUSD: usd(0.10)})
	assert.Check(t, is.ErrorContains(err, "monthly budget $4.50: $4.45 spent (RunPod billing) + $0.00 in flight + this create's worst case $0.10 = $4.55 would pass it; serverless rpg-sls-x was not created"))
}

// A live pod of the suite counts at its price for its whole bound (its own
// repository's startup and lifetime, another's the reaper's), less what
// billing already shows for it; a pod of another tool and an ended one do not.
func TestCheckCountsWhatIsInFlight(t *testing.T) {
	ours := ownership.Tags{Repository: "org/app", Workflow: ".github/workflows/gpu.yml", RunID: 7, Attempt: 1, Candidate: 1}
	theirs := ownership.Tags{Repository: "org/other", Workflow: ".github/workflows/gpu.yml", RunID: 8, Attempt: 1, Candidate: 1}
	live := func(id string, tags ownership.Tags, price float64, status runpod.PodStatus) runpod.Pod {
		return runpod.Pod{ID: id, Name: tags.PodName(), Env: tags.Env(), Status: status, Cost: wire.Float(price), CreatedAt: wire.KnownTime(now.Add(-10 * time.Minute))}
	}
	rp := &fakeRunPod{
		pods: []runpod.BillingRecord{charge("mine", 0, 0.05)},
		live: []runpod.Pod{
			live("mine", ours, 0.40, runpod.PodRunning),                           // 0.40 × 1 h − 0.05 billed = 0.35
			live("yours", theirs, 0.40, runpod.PodRunning),                        // 0.40 × 2.25 h = 0.90
			live("gone", ours, 0.40, runpod.PodExited),                            // no longer billing its GPU
			{ID: "hand", Name: "my-notebook", Cost: 3, Status: runpod.PodRunning}, // not the suite's
		},
		liveEndpoints: []runpod.Endpoint{{ID: "ep", Name: ownership.ServerlessNamePrefix + "org-app-9-1-abcdef01", Workers: runpod.EndpointWorkers{Max: 1}},
			{ID: "ep-other", Name: "someone-elses"}},
	}
	u, err := guard(rp, spend.Limits{DailyUSD: usd(10)}).Check(context.Background(), spend.Create{Lane: spend.LanePod, What: "c", WorstCaseUSD: usd(1)})
	assert.NilError(t, err)
	endpoint := 0.70 * EndpointBound.Hours()
	assert.Check(t, is.DeepEqual(u.InFlight, []string{"endpoint ep", "pod mine", "pod yours"}))
	assert.Check(t, abs(u.InFlightUSD.Dollars()-(0.35+0.90+endpoint)) < 1e-6, "in flight %v", u.InFlightUSD)
	assert.Check(t, is.Contains(u.String(), "today $0.05 of $10.00 spent (RunPod billing), $1.89 in flight (3 live pod(s) and endpoint(s))"))

	_, err = guard(rp, spend.Limits{DailyUSD: usd(2)}).Check(context.Background(), spend.Create{Lane: spend.LanePod, What: "c", WorstCaseUSD: usd(0.10)})
	assert.Check(t, is.ErrorContains(err, "daily budget $2.00: $0.05 spent (RunPod billing) + $1.89 in flight + this create's worst case $0.10 = $2.04 would pass it"))
}

func abs(v float64) float64 { return max(v, -v) }

// Without billing the record counts, a lower bound that says what it leaves
// out; with neither, and with an unknown in-flight part, the create is refused.
func TestCheckFallsBackToTheRecordAndNeverGuesses(t *testing.T) {
	denied := errors.New("read pod billing: 403 Forbidden")
	rp := &fakeRunPod{billingErr: denied}
	record := &Record{Version: RecordVersion, WrittenAt: now.Add(-9 * time.Hour), Since: "2026-10-07", Until: "2026-10-14",
		Days: []DaySpend{{Day: "2026-10-14", USD: usd(0.45), Billed: true}, {Day: "2026-10-08", USD: usd(1), Unknown: 2}, {Day: "2026-09-30", USD: usd(50)}}}
	g := guard(rp, spend.Limits{DailyUSD: usd(0.50), MonthlyUSD: usd(100)})
	g.Record = record
	u, err := g.Check(context.Background(), spend.Create{Lane: spend.LanePod, What: "c", WorstCaseUSD: usd(0.10)})
	assert.Check(t, errors.Is(err, spend.ErrOverBudget))
	assert.Check(t, is.Equal(u.Source, "the cost history's record 2026-10-07 through 2026-10-14, 9h0m0s old; "+
		"not in it: spend of the month before 2026-10-07, 2 cost(s) its evidence does not show"))
	assert.Check(t, is.Equal(u.SpentMonth, usd(1.45)), "September is not October")
	assert.Check(t, is.ErrorContains(err, "daily budget $0.50: $0.45 spent (the cost history's record 2026-10-07 through 2026-10-14"))

	record.Until = "2026-10-13"
	_, _, note := record.Spent(now)
	assert.Check(t, is.Contains(note, "not in it: spend after 2026-10-13"), "a record that ends yesterday says so")

	g.Record = nil
	_, err = g.Check(context.Background(), spend.Create{Lane: spend.LanePod, What: "c", WorstCaseUSD: usd(0.01)})
	assert.Check(t, is.ErrorContains(err, "what was spent is unknown: RunPod billing unreadable (read pod billing: 403 Forbidden) and no spend record"))
	assert.Check(t, !errors.Is(err, spend.ErrOverBudget))

	rp = &fakeRunPod{listErr: errors.New("list pods: 502")}
	_, err = guard(rp, spend.Limits{DailyUSD: usd(5)}).Check(context.Background(), spend.Create{Lane: spend.LanePod, What: "c", WorstCaseUSD: usd(0.01)})
	assert.Check(t, is.ErrorContains(err, "budget: what is in flight is unknown (list pods: 502); the pod create c was not made"))
}

func TestParseRecordNamesWhatIsWrong(t *testing.T) {
	good, err := (Record{WrittenAt: now, Since: "2026-10-14", Until: "2026-10-14", Days: []DaySpend{{Day: "2026-10-14", USD: usd(1.5), Billed: true}}}).Marshal()
	assert.NilError(t, err)
	r, err := ParseRecord(good)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(r.Days[0].USD, usd(1.5)))
	for body, want := range map[string]string{
		`{"version":2,"writtenAt":"2026-10-14T00:00:00Z","days":[]}`: "version 2",
		`{"version":1,"days":[]}`:                                    `"writtenAt" is missing`,
		`{"version":1,"writtenAt":"2026-10-14T00:00:00Z","since":"2026-10-14","until":"2026-10-14","days":[{"day":"14/10","usd":1}]}`:       `day 0: "14/10"`,
		`{"version":1,"writtenAt":"2026-10-14T00:00:00Z","since":"2026-10-14","until":"2026-10-14","days":[{"day":"2026-10-14","usd":-1}]}`: "usd -1",
		`{"version":1,"writtenAt":"2026-10-14T00:00:00Z","since":"2026-10-14","until":"2026-10-14","days":[],"extra":1}`:                    "unknown field",
		`{"version":1,"writtenAt":"2026-10-14T00:00:00Z","since":"2026-10-15","until":"2026-10-14","days":[]}`:                              "since not after until",
	} {
		_, err := ParseRecord([]byte(body))
		assert.Check(t, is.ErrorContains(err, want), body)
		assert.Check(t, strings.HasPrefix(err.Error(), "spend record: "))
	}
}

// The lane's own pods count at their bound (Create.OwnUSD) less what billing
// already shows for them, and never again among the live pods; billing is
// read once per Guard on the same UTC day (a new day reads it again); a pod
// an earlier check counted that is gone now still counts at what it could
// cost then, since the reused billing cannot show its last charges.
func TestCheckCountsOwnPodsAndReusesBilling(t *testing.T) {
	ours := ownership.Tags{Repository: "org/app", Workflow: ".github/workflows/gpu.yml", RunID: 7, Attempt: 1, Candidate: 1}
	theirs := ownership.Tags{Repository: "org/other", Workflow: ".github/workflows/gpu.yml", RunID: 8, Attempt: 1, Candidate: 1}
	live := func(id string, tags ownership.Tags) runpod.Pod {
		return runpod.Pod{ID: id, Name: tags.PodName(), Env: tags.Env(), Status: runpod.PodRunning, Cost: 0.40, CreatedAt: wire.KnownTime(now)}
	}
	rp := &fakeRunPod{pods: []runpod.BillingRecord{charge("rejected", 0, 0.01), charge("handed", 0, 0.05)},
		live: []runpod.Pod{live("handed", ours), live("yours", theirs)}}
	at := now
	g := guard(rp, spend.Limits{DailyUSD: usd(10)})
	g.Clock = clock.Func(func() time.Time { return at })
	c := spend.Create{Lane: spend.LanePod, What: "c", WorstCaseUSD: usd(1), OwnUSD: usd(0.50), OwnPods: []string{"rejected", "handed", "gone-unbilled"}}

	u, err := g.Check(context.Background(), c)
	assert.NilError(t, err)
	yours := 0.40 * ReaperBound.Hours()
	assert.Check(t, is.DeepEqual(u.InFlight, []string{"pod yours", "this lane's 3 pod(s)"}), "the handed-over pod is the lane's, not a live pod besides")
	assert.Check(t, abs(u.InFlightUSD.Dollars()-(yours+0.50-0.06)) < 1e-6, "in flight %v", u.InFlightUSD)
	assert.Check(t, is.Len(rp.asked, 2), "pod and Serverless billing")

	rp.live = rp.live[:1] // the other repository's pod is deleted: its last charges are not in the reused billing
	at = now.Add(10 * time.Minute)
	u, err = g.Check(context.Background(), c)
	assert.NilError(t, err)
	assert.Check(t, is.Len(rp.asked, 2), "billing reused on the same day")
	assert.Check(t, is.DeepEqual(u.InFlight, []string{"pod yours (gone since an earlier check)", "this lane's 3 pod(s)"}))
	assert.Check(t, abs(u.InFlightUSD.Dollars()-(yours+0.44)) < 1e-6, "in flight %v", u.InFlightUSD)

	at = now.Add(12 * time.Hour) // the next UTC day
	_, err = g.Check(context.Background(), c)
	assert.NilError(t, err)
	assert.Check(t, is.Len(rp.asked, 4), "a new day reads billing again")
}

// fakeCatalog is a GPU catalog of Serverless prices by pool.
type fakeCatalog struct {
	types []runpod.GPUType
	err   error
	reads int
}

func (f *fakeCatalog) ListGPUTypes(context.Context, runpod.GPUQuery) ([]runpod.GPUType, error) {
	f.reads++
	return f.types, f.err
}

// A live endpoint's workers are priced by its pools' dearest card in the
// catalog (an H100 endpoint at $4.18/h, not at the A4000's $0.70), never
// below the floor; an endpoint whose pools the catalog does not know at the
// catalog's dearest; an unreadable catalog leaves what is in flight unknown.
func TestCheckPricesAnEndpointByItsPool(t *testing.T) {
	gpu := func(id, pool string, usd float64) runpod.GPUType {
		return runpod.GPUType{ID: id, Pool: pool, Price: runpod.GPUPrice{Serverless: wire.Float(usd)}}
	}
	catalog := &fakeCatalog{types: []runpod.GPUType{gpu("NVIDIA RTX A4000", "AMPERE_16", 0.58), gpu("NVIDIA H100 80GB HBM3", "ADA_80_PRO", 4.18),
		gpu("NVIDIA H100 PCIe", "ADA_80_PRO", 3.90), gpu("NVIDIA H200", "HOPPER_141", 5.58)}}
	endpoint := func(id string, pools ...string) runpod.Endpoint {
		return runpod.Endpoint{ID: id, Name: ownership.ServerlessNamePrefix + "org-app-9-1-" + id, Workers: runpod.EndpointWorkers{Max: 1},
			GPU: &runpod.EndpointGPU{Pools: pools}}
	}
	tests := []struct {
		name   string
		ep     runpod.Endpoint
		hourly float64
	}{
		{name: "an H100 pool", ep: endpoint("h100", "ADA_80_PRO"), hourly: 4.18},
		{name: "the A4000's pool keeps the floor", ep: endpoint("a4000", "AMPERE_16"), hourly: DefaultEndpointHourly.Dollars()},
		{name: "an unknown pool: the catalog's dearest", ep: endpoint("new", "BLACKWELL_192"), hourly: 5.58},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := guard(&fakeRunPod{liveEndpoints: []runpod.Endpoint{tc.ep}}, spend.Limits{DailyUSD: usd(100)})
			g.Catalog = catalog
			u, err := g.Check(context.Background(), spend.Create{Lane: spend.LanePod, What: "c", WorstCaseUSD: usd(1)})
			assert.NilError(t, err)
			assert.Check(t, abs(u.InFlightUSD.Dollars()-tc.hourly*EndpointBound.Hours()) < 1e-6, "in flight %v", u.InFlightUSD)
		})
	}
	// What billing already shows for a live endpoint is spent, not in flight.
	g := guard(&fakeRunPod{liveEndpoints: []runpod.Endpoint{endpoint("h100", "ADA_80_PRO")}, endpoints: []runpod.BillingRecord{charge("h100", 0, 0.5)}},
		spend.Limits{DailyUSD: usd(100)})
	g.Catalog = catalog
	u, err := g.Check(context.Background(), spend.Create{Lane: spend.LanePod, What: "c", WorstCaseUSD: usd(1)})
	assert.NilError(t, err)
	assert.Check(t, abs(u.InFlightUSD.Dollars()-(4.18*EndpointBound.Hours()-0.5)) < 1e-6, "in flight %v", u.InFlightUSD)
	assert.Check(t, abs(u.SpentToday.Dollars()-0.5) < 1e-6, "spent today %v", u.SpentToday)

	g = guard(&fakeRunPod{liveEndpoints: []runpod.Endpoint{endpoint("h100", "ADA_80_PRO")}}, spend.Limits{DailyUSD: usd(100)})
	g.Catalog = &fakeCatalog{err: errors.New("502")}
	_, err = g.Check(context.Background(), spend.Create{Lane: spend.LanePod, What: "c", WorstCaseUSD: usd(1)})
	assert.Check(t, is.ErrorContains(err, "what is in flight is unknown (the GPU catalog, which prices live Serverless endpoints: 502)"))
}

// A record's month runs from its first day through today, both counted; a
// day of $0 is a day like any other; a record that starts on the month's
// first day and ends today leaves nothing out.
func TestRecordSpentCountsTheMonthsFirstDayAndToday(t *testing.T) {
	b, err := (Record{WrittenAt: now, Since: "2026-10-01", Until: "2026-10-14", Days: []DaySpend{
		{Day: "2026-09-30", USD: usd(100)}, {Day: "2026-10-01", USD: usd(2)}, {Day: "2026-10-13", USD: usd(0)}, {Day: "2026-10-14", USD: usd(0.25)},
	}}).Marshal()
	assert.NilError(t, err)
	r, err := ParseRecord(b)
	assert.NilError(t, err, "a day of $0 is valid")
	today, month, note := r.Spent(now)
	assert.Check(t, is.Equal(today, usd(0.25)))
	assert.Check(t, is.Equal(month, usd(2.25)), "the 1st and today count; September does not")
	assert.Check(t, !strings.Contains(note, "not in it"), note)
}

// A live pod of the same repository counts at the lane's pod bound; a lane
// that creates no pod (the Serverless lane, PodBound 0) knows no such bound
// and counts it at the reaper's, as another repository's.
func TestCheckBoundsASameRepositoryPodByTheLanesPodBound(t *testing.T) {
	tags := ownership.Tags{Repository: "org/app", Workflow: ".github/workflows/gpu.yml", RunID: 9, Attempt: 1, Candidate: 1}
	pod := runpod.Pod{ID: "other-run", Name: tags.PodName(), Env: tags.Env(), Status: runpod.PodRunning, Cost: 0.40, CreatedAt: wire.KnownTime(now)}
	for _, tc := range []struct {
		podBound, want time.Duration
	}{{podBound: time.Hour, want: time.Hour}, {podBound: 0, want: ReaperBound}} {
		g := guard(&fakeRunPod{live: []runpod.Pod{pod}}, spend.Limits{DailyUSD: usd(10)})
		g.PodBound = tc.podBound
		u, err := g.Check(context.Background(), spend.Create{Lane: spend.LaneServerless, What: "attempt", WorstCaseUSD: usd(1)})
		assert.NilError(t, err)
		assert.Check(t, abs(u.InFlightUSD.Dollars()-0.40*tc.want.Hours()) < 1e-6, "pod bound %s: in flight %v", tc.podBound, u.InFlightUSD)
	}
}

// usd is a test's dollar figure as an exact amount.
func usd(v float64) money.Amount { return money.FromDollars(v) }
