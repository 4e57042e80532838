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

// Rank is the plan's ranker (plan.Input.Rank). With no evidence it is
// ColdRank: the seed's cloud first. Otherwise each candidate is
// pinned (dataCenterIds) to the data centers of its stock that are neither
// quarantined nor in trouble — a pod there failing, or landing on a machine
// held bad, more often than Params.Avoid — when some are; the live
// candidates are ordered by expected cost to a working runner, price × (run
// time + failure odds × failed time + odds of landing on a held machine ×
// ScreenTime) (equal estimates keep the cheapest-first order), those in
// trouble everywhere after the rest; static tier slots keep their places;
// and a candidate whose every data center is quarantined goes last, so it is
// still tried when nothing else works and again once its window ends. The
// second place goes to another GPU type (secondOfAnotherType).
func (e *Estimator) Rank(in plan.Input, cands []plan.Candidate) []plan.Candidate {
	if e.Empty() {
		return ColdRank(in, cands)
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
		at := e.place(&r.c, &r.parked, stock[c.GPUID+"|"+strings.ToUpper(c.Cloud)])
		r.doubtful = at.trouble() > e.p.Avoid
		r.score = c.PricePerHour.Dollars() * (e.p.RunTime.Hours() + odds(at.failure)*at.failTime.Hours() + odds(at.screened)*e.p.ScreenTime.Hours())
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
	for _, r := range slices.Concat(live, static, parked) {
		out = append(out, r.c)
	}
	head := secondOfAnotherType(slices.Clip(out[:len(live)+len(static)])) // a parked candidate stays last
	return append(head, out[len(head):]...)
}

// secondOfAnotherType moves the first candidate of another GPU type up to
// second place when the first two share a type: two startup failures in a
// row end the run with no pod, and a type's failures go together (a flaky
// host model, a driver rollout that refuses its PTX), so a second try of the
// same type is the likeliest way to end a run with nothing.
func secondOfAnotherType(cands []plan.Candidate) []plan.Candidate {
	if len(cands) < 3 || cands[0].GPUID != cands[1].GPUID {
		return cands
	}
	i := slices.IndexFunc(cands, func(c plan.Candidate) bool { return c.GPUID != cands[0].GPUID })
	if i < 0 {
		return cands
	}
	c := cands[i]
	return slices.Insert(slices.Delete(cands, i, i+1), 1, c)
}

// ColdRank is the lane's order before its record holds any evidence (the
// first day and a quarter of a new lane): the seed policy's, secure live
// offers cheapest first and then the static tier slots, with the community
// offers after them, and the second place for another GPU type. Nothing is
// known of any host yet, and community hosts boot slower and fail more of
// their cheapest offers' pods: renting them first made a new lane's p95 time
// to a runner up to 1.24× the seed's (the market sweep's cold-start column).
// Plan order is kept within each group; nothing is pinned or dropped.
func ColdRank(_ plan.Input, cands []plan.Candidate) []plan.Candidate {
	var secure, static, community []plan.Candidate
	for _, c := range cands {
		switch {
		case c.Source != plan.SourceLive:
			static = append(static, c)
		case strings.EqualFold(c.Cloud, plan.CloudCommunity):
			community = append(community, c)
		default:
			secure = append(secure, c)
		}
	}
	return secondOfAnotherType(append(append(secure, static...), community...))
}

// odds turns a chance into odds (capped): the expected number of pods
// lost that way before one that is not.
func odds(p float64) float64 {
	p = min(max(p, 0), 0.95)
	return p / (1 - p)
}

// placement is what a candidate's placement is expected to give, weighted by
// stock as RunPod places: the chance a pod fails, the chance it lands on a
// machine held bad (and is deleted before its proof), and the paid time of
// a failure.
type placement struct {
	failure, screened float64
	failTime          time.Duration
}

// trouble is the chance a create there gives no runner at the first try.
func (p placement) trouble() float64 { return 1 - (1-p.failure)*(1-p.screened) }

// place narrows c's placement to its good data centers and returns what the
// placement is expected to give. parked is set when every data center is
// quarantined.
func (e *Estimator) place(c *plan.Candidate, parked *bool, dcs []plan.DataCenterStock) placement {
	if len(c.DataCenterIDs) > 0 { // a zone restriction: never widened
		dcs = withinZones(c.DataCenterIDs, dcs)
	}
	if len(dcs) == 0 { // no stock known (static, catalog down): the type's prior
		return placement{failure: e.p.PriorFailure, failTime: e.p.FailTime}
	}
	type option = dcOption
	var usable, good []option
	for _, dc := range dcs {
		o := option{dc, e.Estimate(Pair{GPU: c.GPUID, Cloud: c.Cloud, DataCenter: dc.ID})}
		if !o.est.QuarantinedUntil.IsZero() {
			continue
		}
		usable = append(usable, o)
		if o.trouble() <= e.p.Avoid {
			good = append(good, o)
		}
	}
	pick := good
	switch {
	case len(usable) == 0:
		*parked = true
		return placement{failure: 1, failTime: e.p.FailTime}
	case len(good) == 0: // all doubtful: the least bad ones
		slices.SortStableFunc(usable, func(a, b option) int { return cmpFloat(a.trouble(), b.trouble()) })
		best := usable[0].trouble()
		i := slices.IndexFunc(usable, func(o option) bool { return o.trouble() > best+0.05 })
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
	var w, failure, screened, failSecs float64
	for _, o := range pick {
		sw := max(stockWeight[strings.ToUpper(o.dc.Availability)], 1)
		w += sw
		failure += sw * o.est.Failure
		screened += sw * o.est.Screened
		failSecs += sw * o.est.FailTime.Seconds()
	}
	return placement{failure: failure / w, screened: screened / w, failTime: secondsOf(failSecs / w)}
}

// dcOption is one data center of a candidate's stock with its estimate.
type dcOption struct {
	dc  plan.DataCenterStock
	est Estimate
}

func (o dcOption) trouble() float64 {
	return placement{failure: o.est.Failure, screened: o.est.Screened}.trouble()
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
