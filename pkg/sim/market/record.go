package market

import (
	"slices"
	"time"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/history"
	"github.com/org/runpod-gpu/pkg/reputation"
)

// The lane's reputation comes from the daily cost history, not from its own
// last run: the shipped schedule (cron "17 6 * * *") collects the last
// history.DefaultDays full UTC days and uploads reputation.json, which every
// lane run after it fetches. The simulation publishes that record once a day,
// when the artifact is there, from the evidence of those days only.
const (
	// RecordPublished is when, after midnight UTC, the daily record is there
	// to fetch: the 06:17 schedule plus the collection.
	RecordPublished = 6*time.Hour + 30*time.Minute
	// RecordDays is how many full days before that day the record covers.
	RecordDays = history.DefaultDays
)

// evidence is what the lane's history holds and what it last published.
type evidence struct {
	instant    bool                     // Scenario.InstantRecord: every attempt is seen at once (no daily record)
	noMachines bool                     // Scenario.NoMachines: the record names no machine
	all        []reputation.Observation // every attempt's evidence, in time order
	// published is the latest daily record; nil before the first one.
	published *reputation.Record
	next      time.Time // when the next daily record is published
}

func newEvidence(start time.Time, instant, noMachines bool) *evidence {
	next := start.UTC().Truncate(24 * time.Hour).Add(RecordPublished)
	if next.Before(start) {
		next = next.Add(24 * time.Hour)
	}
	return &evidence{instant: instant, noMachines: noMachines, next: next}
}

// add keeps the evidence of one run's attempts, as the cost history reads
// it from their records (see observation).
func (e *evidence) add(attempts []cost.Attempt) {
	for _, a := range attempts {
		if o, ok := observation(a); ok {
			if e.noMachines {
				o.Machine = ""
			}
			e.all = append(e.all, o)
		}
	}
	slices.SortStableFunc(e.all, func(a, b reputation.Observation) int { return a.At.Compare(b.At) })
}

// record is the reputation record a lane run starting at now fetches: the
// latest daily one (empty before the first: the lane's reputation-file does
// not exist yet, so it plans as the seed does and records machines), or
// every attempt so far when learning is instant.
func (e *evidence) record(now time.Time) *reputation.Record {
	if e.instant {
		rec := &reputation.Record{}
		rec.Add(e.all...)
		return rec
	}
	for !now.Before(e.next) {
		e.publish(e.next)
		e.next = e.next.Add(24 * time.Hour)
	}
	if e.published == nil {
		return &reputation.Record{}
	}
	return e.published
}

// publish writes the record of the cost history run that finished at: the
// evidence of the RecordDays full UTC days before that day, within the
// record's bounds.
func (e *evidence) publish(at time.Time) {
	days := history.LastFullDays(at, RecordDays)
	rec := &reputation.Record{Version: reputation.RecordVersion}
	for _, o := range e.all {
		if days.Contains(o.At) {
			rec.Add(o)
		}
	}
	e.published = rec
}

// observation is one attempt's evidence as history.Report.Reputation builds
// it from the attempt's record: only a pod whose host showed a verdict and
// whose data center the record names, with the paid seconds and price the
// lane recorded (not the simulation's own view).
func observation(a cost.Attempt) (reputation.Observation, bool) {
	if a.PodID == "" || (a.Host != cost.HostWorked && a.Host != cost.HostFailed) || a.DataCenter == "" || a.GPU == "" || a.At.IsZero() {
		return reputation.Observation{}, false
	}
	o := reputation.Observation{At: a.At, GPU: a.GPU, DataCenter: a.DataCenter, Cloud: a.Cloud, Driver: a.Driver, Machine: a.Machine,
		OK: a.Host == cost.HostWorked}
	if a.Seconds.Known && a.Seconds.N > 0 {
		o.Seconds = a.Seconds.N
	}
	if a.Price.Known && a.Price.PerHour > 0 {
		o.PricePerHour = a.Price.PerHour
	}
	return o, true
}
