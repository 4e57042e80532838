package reputation

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/plan"
)

// stockWeight is how much of RunPod's placement a data center's stock level
// draws: RunPod places by free GPUs, so a HIGH data center gets most pods.
var stockWeight = map[string]float64{"LOW": 1, "MEDIUM": 5, "HIGH": 10}

// Rank is the plan's ranker (plan.Input.Rank). With no evidence it returns
// the candidates unchanged: the seed's policy. Otherwise each candidate is
// pinned (dataCenterIds) to the data centers of its stock that are neither
// quarantined nor estimated to fail more often than Params.Avoid, when some
// are; the live candidates are ordered by expected cost to a working runner,
// price × run time + failure odds × price × failed time (equal estimates
// keep the cheapest-first order), those failing more often than Avoid
// everywhere after the rest; static tier slots keep their places; and
// a candidate whose every data center is quarantined goes last, so it is
// still tried when nothing else works and again once its window ends.
func (e *Estimator) Rank(in plan.Input, cands []plan.Candidate) []plan.Candidate {
	if e.Empty() {
		return cands
	}
	stock := map[string][]plan.DataCenterStock{}
	if in.CatalogErr == nil {
		for _, o := range in.Offers {
			k := o.GPUID + "|" + strings.ToUpper(o.Cloud)
			for _, dc := range o.DataCenters {
				if stockWeight[strings.ToUpper(dc.Availability)] > 0 {
					stock[k] = append(stock[k], dc)
				}
			}
		}
	}
	type ranked struct {
		c      plan.Candidate
		score  float64
		parked bool
		// doubtful: every data center of its stock fails more often than
		// Avoid. Cheap failures can still make its expected cost lowest, but
		// two failures in a row end the run with no pod (the early stop),
		// so it goes after the live candidates that work.
		doubtful bool
	}
	var live, static, parked []ranked
	for _, c := range cands {
		r := ranked{c: c}
		failure, failTime := e.place(&r.c, &r.parked, stock[c.GPUID+"|"+strings.ToUpper(c.Cloud)])
		r.doubtful = failure > e.p.Avoid
		odds := min(failure, 0.95) / (1 - min(failure, 0.95))
		r.score = c.PricePerHour * (e.p.RunTime.Hours() + odds*failTime.Hours())
		switch {
		case r.parked:
			parked = append(parked, r)
		case c.Source == plan.SourceLive:
			live = append(live, r)
		default:
			static = append(static, r)
		}
	}
	slices.SortStableFunc(live, func(a, b ranked) int {
		if a.doubtful != b.doubtful {
			if b.doubtful {
				return -1
			}
			return 1
		}
		return cmpFloat(a.score, b.score)
	})
	out := make([]plan.Candidate, 0, len(cands))
	for _, group := range [][]ranked{live, static, parked} {
		for _, r := range group {
			out = append(out, r.c)
		}
	}
	return out
}

// place narrows c's placement to its good data centers and returns the
// candidate's failure estimate (weighted by stock, as RunPod places) and the
// paid time of a failure there. parked is set when every data center is
// quarantined.
func (e *Estimator) place(c *plan.Candidate, parked *bool, dcs []plan.DataCenterStock) (float64, time.Duration) {
	if len(c.DataCenterIDs) > 0 { // a zone restriction: never widened
		dcs = withinZones(c.DataCenterIDs, dcs)
	}
	if len(dcs) == 0 { // no stock known (static, catalog down): the type's prior
		return e.p.PriorFailure, e.p.FailTime
	}
	type option struct {
		dc  plan.DataCenterStock
		est Estimate
	}
	var usable, good []option
	for _, dc := range dcs {
		o := option{dc, e.Estimate(Pair{GPU: c.GPUID, Cloud: c.Cloud, DataCenter: dc.ID})}
		if !o.est.QuarantinedUntil.IsZero() {
			continue
		}
		usable = append(usable, o)
		if o.est.Failure <= e.p.Avoid {
			good = append(good, o)
		}
	}
	pick := good
	switch {
	case len(usable) == 0:
		*parked = true
		return 1, e.p.FailTime
	case len(good) == 0: // all doubtful: the least bad ones
		slices.SortStableFunc(usable, func(a, b option) int { return cmpFloat(a.est.Failure, b.est.Failure) })
		best := usable[0].est.Failure
		i := slices.IndexFunc(usable, func(o option) bool { return o.est.Failure > best+0.05 })
		if i < 0 {
			i = len(usable)
		}
		pick = usable[:i]
	}
	if len(pick) < len(dcs) {
		ids := make([]string, 0, len(pick))
		for _, o := range pick {
			ids = append(ids, o.dc.ID)
		}
		c.DataCenterIDs = ids
	}
	var w, failure, failSecs float64
	for _, o := range pick {
		sw := max(stockWeight[strings.ToUpper(o.dc.Availability)], 1)
		w += sw
		failure += sw * o.est.Failure
		failSecs += sw * o.est.FailTime.Seconds()
	}
	return failure / w, secondsOf(failSecs / w)
}

// withinZones is the stock of each data center ids names, in that order; one
// dcs does not list counts as low stock.
func withinZones(ids []string, dcs []plan.DataCenterStock) []plan.DataCenterStock {
	var within []plan.DataCenterStock
	for _, id := range ids {
		i := slices.IndexFunc(dcs, func(d plan.DataCenterStock) bool { return strings.EqualFold(d.ID, id) })
		if i >= 0 {
			within = append(within, dcs[i])
		} else {
			within = append(within, plan.DataCenterStock{ID: id, Availability: "LOW"})
		}
	}
	return within
}

// cmpFloat orders floats, treating values within rounding noise as equal so
// a stable sort keeps the plan's order between them.
func cmpFloat(a, b float64) int {
	if d := a - b; d < 1e-9 && d > -1e-9 {
		return 0
	}
	return cmp.Compare(a, b)
}

func secondsOf(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
