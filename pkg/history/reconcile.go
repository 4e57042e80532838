package history

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/money"
)

// DefaultDriftThreshold is the drift between estimate and bill, as a share
// of the estimate, above which the report warns (5 %).
const DefaultDriftThreshold = 0.05

// driftFloorUSD is the least drift worth a warning, whatever its share:
// invoices are in cents, and a pod of a few seconds billed a started minute
// drifts by a large share of almost nothing.
const driftFloorUSD = money.Cent

// Reconciliation sets the report's estimates beside RunPod's billing: per
// run and per day of the runs, what the lane estimated, what RunPod billed
// for the same pods and endpoints (matched by id, within the run's time),
// and the drift; and every billed pod or endpoint the lane never recorded.
// It is Report.Billing, absent when no bill was read.
type Reconciliation struct {
	Window    string  `json:"window"` // the billing read: "2026-10-06..2026-10-09" (UTC days, inclusive)
	ReadAt    string  `json:"readAt"`
	Threshold float64 `json:"driftThreshold"` // share of the estimate, e.g. 0.05
	// Unreadable says why billing could not be read; nothing else is set then.
	Unreadable string      `json:"unreadable,omitempty"`
	Totals     DriftRow    `json:"totals"`
	Days       []DriftRow  `json:"days"`
	Runs       []RunDrift  `json:"runs"`
	Untracked  []Untracked `json:"untracked"`
	// Volumes are the network volumes' storage as billed (volume.go): no
	// estimate stands beside it, and it is not a pod or endpoint of a run.
	Volumes    []VolumeStorage `json:"networkVolumes,omitempty"`
	Findings   []string        `json:"findings"`      // what the lane cannot account for, each named
	Warnings   []string        `json:"warnings"`      // drifts above the threshold: the action prints them as ::warning::
	NotInBill  int             `json:"notReconciled"` // runs outside the billing's window
	trackedIDs map[string]bool
}

// DriftRow is an estimate beside its bill.
type DriftRow struct {
	Day       string       `json:"day,omitempty"`
	Count     int          `json:"resources"` // pods and endpoints
	Estimated Amount       `json:"estimated"`
	BilledUSD money.Amount `json:"billedUsd"`
	// DriftUSD is billed minus estimated; null while any estimate is unknown.
	DriftUSD *money.Amount `json:"driftUsd"`
	// DriftShare is DriftUSD over the estimate; null when either is unknown or the estimate is 0.
	DriftShare *float64 `json:"driftShare"`
	Over       bool     `json:"overThreshold"`
	// UntrackedUSD is what the day's bill holds for pods and endpoints the lane never recorded.
	UntrackedUSD money.Amount `json:"untrackedUsd,omitempty"`
}

// RunDrift is one workflow attempt's pods and endpoints against their bill.
type RunDrift struct {
	RunID     int64           `json:"runId"`
	Attempt   int             `json:"runAttempt"`
	URL       string          `json:"url"`
	Resources []ResourceDrift `json:"resources"`
	DriftRow
}

// ResourceDrift is one pod or endpoint: its estimate and what was billed for it.
type ResourceDrift struct {
	Kind      string       `json:"kind"`
	ID        string       `json:"id"`
	Estimated cost.Money   `json:"estimated"`
	BilledUSD money.Amount `json:"billedUsd"`
	Billed    bool         `json:"billed"` // any charge was found
}

// Untracked is a billed pod or endpoint the lane's evidence never names.
type Untracked struct {
	Kind      string       `json:"kind"`
	ID        string       `json:"id"`
	Days      []string     `json:"days"`
	BilledUSD money.Amount `json:"billedUsd"`
}

// tracked is one pod or endpoint the lane recorded, and the run it belongs to.
type tracked struct {
	kind, id string
	estimate cost.Money
	from, to time.Time // the run's time: the days its charges may fall on
}

// trackedOf lists the pods (and Serverless endpoints) an attempt recorded.
func trackedOf(a Attempt) []tracked {
	from := a.CreatedAt.UTC().Truncate(24 * time.Hour)
	to := a.when()
	var out []tracked
	for _, p := range a.Pods {
		if p.DuplicateOf != "" || p.ID == "" {
			continue
		}
		to = maxTime(to, p.At)
		out = append(out, tracked{kind: KindPod, id: p.ID, estimate: p.Dollars})
	}
	if sp := a.Serverless; sp != nil && sp.EndpointID != "" {
		out = append(out, tracked{kind: KindEndpoint, id: sp.EndpointID, estimate: sp.Dollars})
	}
	// Charges fall in day buckets: the run's days, and the day after its end.
	to = to.UTC().Truncate(24*time.Hour).AddDate(0, 0, 2)
	for i := range out {
		out[i].from, out[i].to = from, to
	}
	return out
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// Reconcile sets r's attempts beside the saved billing. others are attempts
// outside r's range (the whole saved evidence) whose pods may bill within
// it: their charges are the lane's, not untracked. threshold is a share of
// the estimate (DefaultDriftThreshold when not positive).
func Reconcile(r *Report, b SavedBilling, others []Attempt, threshold float64) *Reconciliation {
	if !(threshold > 0) {
		threshold = DefaultDriftThreshold
	}
	last := b.End.Add(-billingSpill).AddDate(0, 0, -1)
	rec := &Reconciliation{Window: b.Start.Format(time.DateOnly) + ".." + last.Format(time.DateOnly), ReadAt: b.ReadAt.Format(time.RFC3339),
		Threshold: threshold, Days: []DriftRow{}, Runs: []RunDrift{}, Untracked: []Untracked{}, Findings: []string{}, Warnings: []string{},
		trackedIDs: map[string]bool{}}
	if b.Error != "" {
		rec.Unreadable = b.Error
		return rec
	}
	charges := map[string][]BilledCharge{}
	for _, c := range b.Charges {
		charges[c.Kind+"/"+c.ID] = append(charges[c.Kind+"/"+c.ID], c)
	}
	for _, a := range others {
		for _, t := range trackedOf(a) {
			rec.trackedIDs[t.kind+"/"+t.id] = true
		}
	}
	for _, a := range r.Attempts {
		if d := a.when(); d.Before(b.Start) || !d.Before(b.End.Add(-billingSpill)) {
			rec.NotInBill++
			continue
		}
		rec.addRun(a, charges)
	}
	rec.untracked(b.Charges)
	rec.volumeStorage(b.Charges) // volume.go
	rec.byDay()
	rec.warn()
	return rec
}

// addRun reconciles one attempt's pods and endpoints.
func (rec *Reconciliation) addRun(a Attempt, charges map[string][]BilledCharge) {
	if sp := a.Serverless; sp != nil && sp.EndpointID == "" && !(sp.Dollars.Known && sp.Dollars.USD == 0) {
		rec.Findings = append(rec.Findings, fmt.Sprintf("Serverless %s of %s records no endpoint id (an artifact written before it did): its bill cannot be matched",
			sp.Attempt, a.name()))
	}
	ts := trackedOf(a)
	if len(ts) == 0 {
		return
	}
	run := RunDrift{RunID: a.RunID, Attempt: a.Attempt, URL: a.URL, Resources: []ResourceDrift{}}
	run.Day = a.when().UTC().Format(time.DateOnly)
	for _, t := range ts {
		rec.trackedIDs[t.kind+"/"+t.id] = true
		res := ResourceDrift{Kind: t.kind, ID: t.id, Estimated: t.estimate}
		for _, c := range charges[t.kind+"/"+t.id] {
			res.BilledUSD += c.USD
			res.Billed = true
			if c.End.After(t.from) && c.Start.Before(t.to) {
				continue
			}
			rec.Findings = append(rec.Findings, fmt.Sprintf("%s %s of %s billed %s on %s, outside its run's days (%s to %s): it went on billing after its run",
				t.kind, t.id, a.name(), usd(c.USD), c.day(), t.from.Format(time.DateOnly), t.to.AddDate(0, 0, -1).Format(time.DateOnly)))
		}
		if !res.Billed && t.estimate.Known && t.estimate.USD > 0 {
			rec.Findings = append(rec.Findings, fmt.Sprintf("%s %s of %s (estimated %s) has no charge in the bill read at %s: billing may not have caught up yet",
				t.kind, t.id, a.name(), t.estimate, rec.ReadAt))
		}
		run.Resources = append(run.Resources, res)
		run.Count++
		run.Estimated.Add(res.Estimated)
		run.BilledUSD += res.BilledUSD
	}
	rec.Runs = append(rec.Runs, run)
	rec.Totals.plus(run.DriftRow)
}

// plus adds another row's resources, estimate and bill.
func (d *DriftRow) plus(o DriftRow) {
	d.Count += o.Count
	d.Estimated.Plus(o.Estimated)
	d.BilledUSD += o.BilledUSD
	d.UntrackedUSD += o.UntrackedUSD
}

// untracked names every billed pod and endpoint no attempt recorded.
func (rec *Reconciliation) untracked(charges []BilledCharge) {
	untracked := groupInto(&rec.Untracked)
	for _, c := range charges {
		key := c.Kind + "/" + c.ID
		if rec.trackedIDs[key] || c.Kind == KindNetworkVolume {
			continue
		}
		u := untracked.row(key, func() Untracked { return Untracked{Kind: c.Kind, ID: c.ID, Days: []string{}} })
		u.BilledUSD += c.USD
		if !slices.Contains(u.Days, c.day()) {
			u.Days = append(u.Days, c.day())
		}
		rec.day(c.day()).UntrackedUSD += c.USD
		rec.Totals.UntrackedUSD += c.USD
	}
	for _, u := range rec.Untracked {
		rec.Findings = append(rec.Findings, fmt.Sprintf("%s %s billed %s on %s: the lane never recorded it (a pod or endpoint of another tool, a developer's, or one the lane lost track of)",
			u.Kind, u.ID, usd(u.BilledUSD), strings.Join(u.Days, ", ")))
	}
}

// day is the row of one UTC day, made on first use.
func (rec *Reconciliation) day(day string) *DriftRow {
	i := slices.IndexFunc(rec.Days, func(d DriftRow) bool { return d.Day == day })
	if i < 0 {
		i = len(rec.Days)
		rec.Days = append(rec.Days, DriftRow{Day: day})
	}
	return &rec.Days[i]
}

// byDay sums the runs per day of the runs; untracked charges went to the day billed.
func (rec *Reconciliation) byDay() {
	for _, run := range rec.Runs {
		rec.day(run.Day).plus(DriftRow{Count: run.Count, Estimated: run.Estimated, BilledUSD: run.BilledUSD})
	}
	slices.SortFunc(rec.Days, func(a, b DriftRow) int { return cmp.Compare(a.Day, b.Day) })
}

// usd prints a bill as the report's amounts: "$0.0667".
func usd(v money.Amount) string { return v.Format(money.Fine) }

// settle computes the row's drift against threshold.
func (d *DriftRow) settle(threshold float64) {
	if d.Estimated.Unknown > 0 {
		return
	}
	drift := d.BilledUSD - d.Estimated.Known
	d.DriftUSD = &drift
	if d.Estimated.Known > 0 {
		share := drift.Dollars() / d.Estimated.Known.Dollars()
		d.DriftShare = &share
	}
	d.Over = max(drift, -drift) >= driftFloorUSD && (d.DriftShare == nil || math.Abs(*d.DriftShare) > threshold)
}

// warn settles every row and words a warning for each drift above the threshold.
func (rec *Reconciliation) warn() {
	for i := range rec.Runs {
		run := &rec.Runs[i]
		run.settle(rec.Threshold)
		if run.Over {
			rec.Warnings = append(rec.Warnings, fmt.Sprintf("run %d attempt %d: billed %s against %s estimated (%s), above the %s drift threshold",
				run.RunID, run.Attempt, usd(run.BilledUSD), run.Estimated, run.describe(), percent(rec.Threshold)))
		}
	}
	for i := range rec.Days {
		day := &rec.Days[i]
		day.settle(rec.Threshold)
		if day.Over {
			rec.Warnings = append(rec.Warnings, fmt.Sprintf("%s: billed %s against %s estimated (%s), above the %s drift threshold",
				day.Day, usd(day.BilledUSD), day.Estimated, day.describe(), percent(rec.Threshold)))
		}
	}
	rec.Totals.settle(rec.Threshold)
	if n := len(rec.Untracked); n > 0 {
		rec.Warnings = append(rec.Warnings, fmt.Sprintf("%d billed pod(s) or endpoint(s) the lane never recorded: %s", n, untrackedNames(rec.Untracked)))
	}
}

// describe words the drift: "+$0.0012, +25.0 %".
func (d DriftRow) describe() string {
	switch {
	case d.DriftUSD == nil:
		return "drift unknown: an estimate is unknown"
	case d.DriftShare == nil:
		return signedUSD(*d.DriftUSD)
	}
	return fmt.Sprintf("%s, %+.1f %%", signedUSD(*d.DriftUSD), *d.DriftShare*100)
}

// signedUSD words a drift with its sign and four decimals: "+0.0012 USD".
func signedUSD(a money.Amount) string {
	sign := "+"
	if a < 0 {
		sign, a = "-", -a
	}
	return sign + strings.TrimPrefix(a.Format(money.Fine), "$") + " USD"
}

func percent(share float64) string { return fmt.Sprintf("%g %%", math.Round(share*1000)/10) }

func untrackedNames(us []Untracked) string {
	names := make([]string, 0, len(us))
	for _, u := range us {
		names = append(names, u.Kind+" "+u.ID)
	}
	return strings.Join(names, ", ")
}
