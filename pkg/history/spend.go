package history

import (
	"cmp"
	"path/filepath"
	"slices"
	"time"

	"github.com/org/runpod-gpu/pkg/budget"
	"github.com/org/runpod-gpu/pkg/clock"
	"github.com/org/runpod-gpu/pkg/money"
)

// SpendRecord is the budget's fallback record of the report's days
// (budget.RecordFile): each day's spend as RunPod billed it where the report
// was reconciled with billing, else as the lane estimated it, with the count
// of unknown costs that makes an estimate a lower bound. It covers within
// (nil: the report's first to last day).
func (r *Report) SpendRecord(now time.Time, within *Range) budget.Record {
	rec := budget.Record{Version: budget.RecordVersion, WrittenAt: now.UTC(), Since: r.FirstDay, Until: r.LastDay, Days: []budget.DaySpend{}}
	if within != nil {
		rec.Since, rec.Until = within.Since.Format(time.DateOnly), within.Until.Format(time.DateOnly)
	}
	days := map[string]*budget.DaySpend{}
	sums := map[string]money.Amount{}

	day := func(d string) *budget.DaySpend {
		if days[d] == nil {
			days[d] = &budget.DaySpend{Day: d}
		}
		return days[d]
	}
	for _, a := range r.Attempts {
		spend := a.Spend()
		d := day(a.when().UTC().Format(time.DateOnly))
		sums[d.Day] += spend.Known
		d.Unknown += spend.Unknown
	}
	if b := r.Billing; b != nil && b.Unreadable == "" {
		for _, row := range b.Days {
			if row.Day < rec.Since || row.Day > rec.Until {
				continue // billed on a day the record does not cover (the day after the range)
			}
			*day(row.Day) = budget.DaySpend{Day: row.Day, Billed: true}
			sums[row.Day] = row.BilledUSD + row.UntrackedUSD
		}
	}
	for _, d := range days {
		d.USD = sums[d.Day]
		rec.Days = append(rec.Days, *d)
	}
	slices.SortFunc(rec.Days, func(a, b budget.DaySpend) int { return cmp.Compare(a.Day, b.Day) })
	return rec
}

// writeSpend writes the report's spend record into dir.
func writeSpend(res *Result, dir string, report *Report, o Options) error {
	now := clock.Clock(clock.Wall{})
	if o.Clock != nil {
		now = o.Clock
	}
	if report.FirstDay == "" && o.Range == nil {
		return nil // no attempt and no range: nothing to cover
	}
	data, err := report.SpendRecord(now.Now(), o.Range).Marshal()
	if err != nil {
		return err
	}
	res.SpendPath = filepath.Join(dir, budget.RecordFile)
	return writePublished(res.SpendPath, append(data, '\n'))
}
