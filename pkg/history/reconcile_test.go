package history

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/budget"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/runpod"
)

// billedAttempt is an attempt whose pods ran at t with the given estimates.
func billedAttempt(runID int64, at time.Time, pods ...Pod) Attempt {
	for i := range pods {
		pods[i].At = at
	}
	return Attempt{RunID: runID, Attempt: 1, CreatedAt: at.Add(-10 * time.Minute), StartedAt: at.Add(-10 * time.Minute),
		Decision: DecisionPaid, Pods: pods, URL: "https://github.com/org/app/actions/runs/1/attempts/1"}
}

func podOf(id string, usd float64) Pod {
	return Pod{ID: id, Dollars: cost.KnownMoney(money.FromDollars(usd))}
}

// dayCharge is a pod's charge in the day bucket of t.
func dayCharge(kind, id string, t time.Time, usd float64) BilledCharge {
	start := t.UTC().Truncate(24 * time.Hour)
	return BilledCharge{Kind: kind, ID: id, Start: start, End: start.AddDate(0, 0, 1), USD: money.FromDollars(usd)}
}

func billOf(charges ...BilledCharge) SavedBilling {
	start, end := billingWindow(Range{Since: date(2026, 10, 6), Until: date(2026, 10, 8)})
	return SavedBilling{Schema: BillingSchema, Start: start, End: end, ReadAt: date(2026, 10, 10), Charges: charges}
}

func TestReconcileMatchesChargesToRunsByIDAndDay(t *testing.T) {
	day1, day2 := t0, t0.AddDate(0, 0, 1)
	r := summarize([]Attempt{
		billedAttempt(1, day1, podOf("rej", 0.01), podOf("acc", 0.20)),
		billedAttempt(2, day2, podOf("p2", 0.30)),
	}, nil)
	rec := Reconcile(r, billOf(
		dayCharge(KindPod, "rej", day1, 0.01), dayCharge(KindPod, "acc", day1, 0.2015),
		dayCharge(KindPod, "p2", day2, 0.30),
	), nil, 0)

	assert.Check(t, is.Len(rec.Runs, 2))
	assert.Check(t, is.Equal(rec.Runs[0].Count, 2))
	assert.Check(t, is.Equal(*rec.Runs[0].DriftUSD, money.FromDollars(0.0015)))
	assert.Check(t, !rec.Runs[0].Over, "0.7 %% and under a cent")
	assert.Check(t, is.DeepEqual(dayNames(rec.Days), []string{"2026-10-06", "2026-10-07"}))
	assert.Check(t, is.Equal(rec.Totals.Count, 3))
	assert.Check(t, is.Equal(rec.Totals.BilledUSD, money.FromDollars(0.5115)))
	assert.Check(t, is.Len(rec.Findings, 0))
	assert.Check(t, is.Len(rec.Warnings, 0))
}

func dayNames(rows []DriftRow) []string {
	var out []string
	for _, d := range rows {
		out = append(out, d.Day)
	}
	return out
}

// A provider that bills started minutes bills each pod up to a minute more
// than its per-second estimate: the drift is within that rounding, and where
// it passes the threshold (and a cent) it is a warning naming the run.
func TestReconcileWarnsOfDriftAboveTheThreshold(t *testing.T) {
	const price = 2.0 // $/h: a started minute is $0.0333
	est := func(seconds int) float64 { return float64(seconds) * price / 3600 }
	billed := func(seconds int) float64 { return float64((seconds+59)/60*60) * price / 3600 }
	r := summarize([]Attempt{
		billedAttempt(1, t0, podOf("long", est(3601))),               // 1 s over an hour: one extra minute, 1.6 %
		billedAttempt(2, t0.Add(time.Hour), podOf("short", est(61))), // 61 s bills 120 s: +97 %
		billedAttempt(3, t0.Add(2*time.Hour), podOf("tiny", 0.0001)), // under a cent: never a warning
	}, nil)
	rec := Reconcile(r, billOf(
		dayCharge(KindPod, "long", t0, billed(3601)),
		dayCharge(KindPod, "short", t0, billed(61)),
		dayCharge(KindPod, "tiny", t0, 0.0006),
	), nil, 0)
	for _, run := range rec.Runs {
		assert.Check(t, *run.DriftUSD >= 0 && *run.DriftUSD <= money.FromDollars(60*price/3600), "run %d: drift %v beyond a minute's rounding", run.RunID, *run.DriftUSD)
	}
	assert.Check(t, !rec.Runs[0].Over)
	assert.Check(t, rec.Runs[1].Over)
	assert.Check(t, !rec.Runs[2].Over)
	assert.Assert(t, is.Len(rec.Warnings, 1), "%q", rec.Warnings)
	assert.Check(t, is.Equal(rec.Warnings[0], "run 2 attempt 1: billed $0.0667 against $0.0339 estimated (+0.0328 USD, +96.7 %), above the 5 % drift threshold"))
	assert.Check(t, is.Equal(rec.Days[0].describe(), "+0.0661 USD, +3.2 %"), "the day as a whole stays within 5 %%")
	assert.Check(t, !rec.Days[0].Over)

	quiet := Reconcile(r, billOf(dayCharge(KindPod, "long", t0, billed(3601)), dayCharge(KindPod, "short", t0, billed(61)),
		dayCharge(KindPod, "tiny", t0, 0.0006)), nil, 2) // 200 %
	assert.Check(t, is.Len(quiet.Warnings, 0), "%q", quiet.Warnings)
}

// A pod the lane never recorded is a finding, by name, and a warning; a pod
// of a run outside the report's range is the lane's, not untracked.
func TestReconcileNamesWhatTheLaneCannotAccountFor(t *testing.T) {
	r := summarize([]Attempt{billedAttempt(1, t0, podOf("ours", 0.10), podOf("unbilled", 0.05))}, nil)
	earlier := billedAttempt(9, t0.AddDate(0, 0, -1).Add(23*time.Hour), podOf("yesterdays", 0.40))
	rec := Reconcile(r, billOf(
		dayCharge(KindPod, "ours", t0, 0.10),
		dayCharge(KindPod, "ours", t0.AddDate(0, 0, 2), 0.70), // went on billing two days later
		dayCharge(KindPod, "stranger", t0, 0.25),
		dayCharge(KindEndpoint, "ep-stranger", t0.AddDate(0, 0, 1), 0.05),
		dayCharge(KindPod, "yesterdays", t0, 0.02),
	), []Attempt{earlier}, 0)

	assert.Check(t, is.DeepEqual(rec.Untracked, []Untracked{
		{Kind: KindPod, ID: "stranger", Days: []string{"2026-10-06"}, BilledUSD: money.FromDollars(0.25)},
		{Kind: KindEndpoint, ID: "ep-stranger", Days: []string{"2026-10-07"}, BilledUSD: money.FromDollars(0.05)},
	}))
	findings := strings.Join(rec.Findings, "\n")
	assert.Check(t, is.Contains(findings, "pod stranger billed $0.2500 on 2026-10-06: the lane never recorded it"))
	assert.Check(t, is.Contains(findings, "endpoint ep-stranger billed $0.0500 on 2026-10-07: the lane never recorded it"))
	assert.Check(t, is.Contains(findings, "pod ours of run 1 attempt 1 billed $0.7000 on 2026-10-08, outside its run's days (2026-10-06 to 2026-10-07)"))
	assert.Check(t, is.Contains(findings, "pod unbilled of run 1 attempt 1 (estimated $0.0500) has no charge"))
	assert.Check(t, !strings.Contains(findings, "yesterdays"), "a pod of an earlier run is the lane's")
	assert.Check(t, is.Contains(strings.Join(rec.Warnings, "\n"), "2 billed pod(s) or endpoint(s) the lane never recorded: pod stranger, endpoint ep-stranger"))
	assert.Check(t, is.Equal(rec.Totals.UntrackedUSD, money.FromDollars(0.30)))
	assert.Check(t, is.Equal(rec.Runs[0].BilledUSD, money.FromDollars(0.80)), "the late charges are the run's")
}

func TestReconcileKeepsUnknownEstimatesUnknown(t *testing.T) {
	unknown := Pod{ID: "u"} // no cost evidence
	r := summarize([]Attempt{billedAttempt(1, t0, unknown, podOf("k", 0.1))}, nil)
	rec := Reconcile(r, billOf(dayCharge(KindPod, "u", t0, 0.3), dayCharge(KindPod, "k", t0, 0.1)), nil, 0)
	assert.Check(t, rec.Runs[0].DriftUSD == nil, "an unknown estimate never drifts by a number")
	assert.Check(t, rec.Totals.DriftUSD == nil)
	assert.Check(t, is.Equal(rec.Runs[0].describe(), "drift unknown: an estimate is unknown"))
	assert.Check(t, !rec.Runs[0].Over)
}

func TestReconcileSaysWhyBillingIsUnreadable(t *testing.T) {
	r := summarize([]Attempt{billedAttempt(1, t0, podOf("p", 0.1))}, nil)
	b := billOf()
	b.Error = "read pod billing: 403 Forbidden"
	rec := Reconcile(r, b, nil, 0)
	assert.Check(t, is.Equal(rec.Unreadable, "read pod billing: 403 Forbidden"))
	assert.Check(t, is.Len(rec.Runs, 0))
	r.Billing = rec
	assert.Check(t, is.Contains(r.Markdown(), "RunPod's billing could not be read, so nothing here is reconciled: read pod billing: 403 Forbidden"))
}

// fakeBilling answers the billing routes from fixed records.
type fakeBilling struct {
	pods, endpoints []runpod.BillingRecord
	err             error
	asked           []runpod.BillingQuery
}

func (f *fakeBilling) PodBilling(_ context.Context, q runpod.BillingQuery) ([]runpod.BillingRecord, error) {
	f.asked = append(f.asked, q)
	return f.pods, f.err
}

func (f *fakeBilling) ServerlessBilling(_ context.Context, q runpod.BillingQuery) ([]runpod.BillingRecord, error) {
	f.asked = append(f.asked, q)
	return f.endpoints, f.err
}

// The collection saves the bill beside the evidence; an offline
// regeneration reconciles the same figures, and the report shows them.
func TestRunSavesTheBillAndRegeneratesItsReconciliation(t *testing.T) {
	dir := t.TempDir()
	writeSaved(t, dir, savedAttempt{rec: completedAttempt(1, 1, "pull_request", t0), logs: map[string]string{},
		artifacts: []cost.Artifact{artifactOf(1, 1, cost.TriggerAutomatic, strings.Repeat("b", 40), acceptedReport("acc", "NVIDIA L4", 0.36, t0, 600))}})
	rng := Range{Since: date(2026, 10, 6), Until: date(2026, 10, 6)}
	src := &fakeBilling{
		pods:      []runpod.BillingRecord{{ID: "acc", Start: date(2026, 10, 6), End: date(2026, 10, 7), Total: 0.08}, {ID: "rogue", Start: date(2026, 10, 6), End: date(2026, 10, 7), Total: 0.5}},
		endpoints: []runpod.BillingRecord{},
	}
	b := FetchBilling(context.Background(), src, rng, date(2026, 10, 9))
	assert.NilError(t, writeBilling(dir, b))
	assert.Check(t, is.DeepEqual(src.asked[0], runpod.BillingQuery{Start: date(2026, 10, 6), End: date(2026, 10, 8), Bucket: runpod.BucketDay}),
		"the range's days and the day after")

	res, err := Run(context.Background(), Options{Dir: dir, DriftThreshold: 0.05})
	assert.NilError(t, err)
	rec := res.Report.Billing
	assert.Assert(t, rec != nil)
	assert.Check(t, is.Equal(*rec.Runs[0].DriftUSD, money.FromDollars(0.02)), "0.36 $/h × 600 s = $0.06 estimated")
	assert.Check(t, is.Contains(strings.Join(res.BillingWarnings, "\n"), "pod rogue"))
	md, err := os.ReadFile(filepath.Join(dir, MarkdownReportFile))
	assert.NilError(t, err)
	assert.Check(t, is.Contains(string(md), "### Estimated against billed"))
	assert.Check(t, is.Contains(string(md), "| 2026-10-06 | 1 | $0.0600 | $0.0800 | **+0.0200 USD, +33.3 %** ⚠ | $0.5000 |"))
	assert.Check(t, is.Contains(string(md), "- pod rogue billed $0.5000 on 2026-10-06: the lane never recorded it"))

	// The budget's fallback record holds the day as billed, the lane's pod and the one it never recorded.
	rec2, err := budget.ReadRecord(res.SpendPath)
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(rec2.Days, []budget.DaySpend{{Day: "2026-10-06", USD: 580_000, Billed: true}}))
	assert.Check(t, is.Equal(rec2.Since+".."+rec2.Until, "2026-10-06..2026-10-06"))

	src.err = errors.New("read pod billing: 403 Forbidden")
	assert.NilError(t, writeBilling(dir, FetchBilling(context.Background(), src, rng, date(2026, 10, 9))))
	res, err = Run(context.Background(), Options{Dir: dir})
	assert.NilError(t, err)
	assert.Check(t, is.Contains(strings.Join(res.BillingWarnings, "\n"), "could not be read"))
	rec2, err = budget.ReadRecord(res.SpendPath)
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(rec2.Days, []budget.DaySpend{{Day: "2026-10-06", USD: 60_000}}), "unreconciled: the estimate")
}

// A Serverless attempt's endpoint is matched to the Serverless bill by its id;
// one of an older artifact without the id cannot be, and says so by being absent.
func TestReconcileMatchesServerlessEndpoints(t *testing.T) {
	sls := billedAttempt(3, t0)
	sls.Serverless = &cost.ServerlessSpend{Attempt: "rpg-sls-org-app-3-1-aa", EndpointID: "ep3", Dollars: cost.KnownMoney(money.FromDollars(0.0125)), WorkerSeconds: 64}
	old := billedAttempt(4, t0)
	old.Serverless = &cost.ServerlessSpend{Attempt: "rpg-sls-org-app-4-1-bb", Dollars: cost.KnownMoney(money.FromDollars(0.01))}
	r := summarize([]Attempt{billedAttempt(1, t0, podOf("p1", 0.10)), sls, old}, nil)
	rec := Reconcile(r, billOf(dayCharge(KindPod, "p1", t0, 0.10), dayCharge(KindEndpoint, "ep3", t0, 0.0233)), nil, 0)
	assert.Assert(t, is.Len(rec.Runs, 2), "the attempt without an endpoint id has nothing to match")
	assert.Check(t, is.DeepEqual(rec.Runs[1].Resources, []ResourceDrift{{Kind: KindEndpoint, ID: "ep3", Estimated: cost.KnownMoney(money.FromDollars(0.0125)), BilledUSD: money.FromDollars(0.0233), Billed: true}}))
	assert.Check(t, is.Equal(*rec.Runs[1].DriftUSD, money.FromDollars(0.0108)))
	assert.Check(t, is.Len(rec.Untracked, 0))
	assert.Check(t, is.DeepEqual(rec.Findings, []string{"Serverless rpg-sls-org-app-4-1-bb of run 4 attempt 1 records no endpoint id (an artifact written before it did): its bill cannot be matched"}))
}
