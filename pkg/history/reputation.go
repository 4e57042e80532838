package history

import (
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/reputation"
)

// ReputationFile is the reputation record Run writes into the evidence
// directory, the file provision's reputation-file input reads.
const ReputationFile = "reputation.json"

// ReputationStats says how much of the report's evidence went into the record.
type ReputationStats struct {
	Observations int // pods that went in
	// NoDataCenter pods had a host verdict but no known data center (records
	// written before attempts carried it): they say nothing about a pair.
	NoDataCenter int
	// NoVerdict pods showed nothing about their host: rejected for the PR's,
	// the API's or the price's sake, or from records without a verdict.
	NoVerdict int
	Undated   int // pods of an attempt with no time at all
}

// Reputation builds the lane's reputation record from the report's pods, one
// observation per pod counted once (duplicates left out): its GPU, where it
// ran (data center and, when provision read it, machine), whether its host
// worked, its paid seconds and price, and when.
//
// A pod whose data center is unknown is left out rather than pooled as
// evidence about its GPU type everywhere: the estimator already pools each
// pair's evidence by GPU type and by data center, and blaming every data
// center of a type for one data center's bad rollout would push the lane away
// from the good ones. Old records (no data center) thus read as no history:
// the seed's policy.
//
// A pod whose attempt time is unknown (an accepted pod reported only by
// cleanup's artifact) is dated at the latest time known for its run attempt,
// never before that run's rejected pods: the accepted pod came last, and a
// pair's consecutive failures are counted in time order.
func (r *Report) Reputation() (reputation.Record, ReputationStats) {
	var rec reputation.Record
	var st ReputationStats
	for _, a := range r.Attempts {
		latest := a.when()
		for _, p := range a.Pods {
			if p.At.After(latest) {
				latest = p.At
			}
		}
		for _, p := range a.Pods {
			switch {
			case p.DuplicateOf != "":
				continue
			case p.Host != cost.HostWorked && p.Host != cost.HostFailed:
				st.NoVerdict++
				continue
			case p.DataCenter == "" || p.GPU == "":
				st.NoDataCenter++
				continue
			}
			o := reputation.Observation{At: p.At, GPU: p.GPU, DataCenter: p.DataCenter, Cloud: p.Cloud,
				Driver: p.Driver, Machine: p.Machine, OK: p.Host == cost.HostWorked}
			if o.At.IsZero() {
				o.At = latest
			}
			if o.At.IsZero() { // no time at all: the evidence cannot be weighed
				st.Undated++
				continue
			}
			if p.Seconds.Known && p.Seconds.N > 0 {
				o.Seconds = p.Seconds.N
			}
			if p.Price.Known && p.Price.PerHour > 0 {
				o.PricePerHour = p.Price.PerHour
			}
			rec.Add(o)
			st.Observations++
		}
	}
	rec.Version = reputation.RecordVersion
	return rec, st
}
