package reputation

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Params tune the estimator. Zero fields take DefaultParams' values.
type Params struct {
	// HalfLife is how fast evidence is forgotten: an observation this old
	// weighs half as much as one made now, so a fixed host earns its place back.
	HalfLife time.Duration
	// PriorFailure and PriorWeight are the prior every pair starts from: a
	// failure probability worth PriorWeight attempts of evidence.
	PriorFailure, PriorWeight float64
	// Avoid: a data center whose pair is estimated to fail more often than
	// this is left out of a candidate's placement while others are not.
	Avoid float64
	// QuarantineAfter consecutive failures of a pair (no success between)
	// quarantine it for QuarantineFor after its last failure; then it is
	// tried again, and one more failure quarantines it again.
	QuarantineAfter int
	QuarantineFor   time.Duration
	// RunTime is what a working pod is paid for (startup and job) and
	// FailTime what a failed one costs when its pair has no paid seconds
	// on record: the two terms of the expected cost.
	RunTime, FailTime time.Duration
}

// DefaultParams are the lane's defaults.
var DefaultParams = Params{
	HalfLife: 72 * time.Hour, PriorFailure: 0.1, PriorWeight: 2, Avoid: 0.3,
	QuarantineAfter: 2, QuarantineFor: 12 * time.Hour,
	RunTime: 15 * time.Minute, FailTime: 4 * time.Minute,
}

func (p Params) withDefaults() Params {
	d := DefaultParams
	if p.HalfLife <= 0 {
		p.HalfLife = d.HalfLife
	}
	if p.PriorFailure <= 0 || p.PriorFailure >= 1 {
		p.PriorFailure = d.PriorFailure
	}
	if p.PriorWeight <= 0 {
		p.PriorWeight = d.PriorWeight
	}
	if p.Avoid <= 0 {
		p.Avoid = d.Avoid
	}
	if p.QuarantineAfter <= 0 {
		p.QuarantineAfter = d.QuarantineAfter
	}
	if p.QuarantineFor <= 0 {
		p.QuarantineFor = d.QuarantineFor
	}
	if p.RunTime <= 0 {
		p.RunTime = d.RunTime
	}
	if p.FailTime <= 0 {
		p.FailTime = d.FailTime
	}
	return p
}

// Pair is where a pod lands: a GPU type in one cloud of one data center.
type Pair struct {
	GPU, Cloud, DataCenter string
}

func (p Pair) String() string {
	return fmt.Sprintf("%s %s in %s", p.GPU, strings.ToLower(p.Cloud), p.DataCenter)
}

// Estimate is what the evidence says about one pair at the estimator's time.
type Estimate struct {
	// Failure is the estimated chance a pod here fails, prior included: the
	// worse of the GPU type's and the data center's pooled rates, each
	// shrunk towards Params.PriorFailure.
	Failure float64
	// Evidence is the decayed number of attempts behind it (0: prior only).
	Evidence float64
	// FailTime is the mean paid time of a failed pod here.
	FailTime time.Duration
	// QuarantinedUntil is when a quarantine ends; zero when not quarantined.
	QuarantinedUntil time.Time
}

type tally struct {
	n, fails         float64 // decayed attempts and failures
	failSecs, failsW float64 // decayed paid seconds of failures, and their weight
	consecutive      int     // failures since the last success
	lastFailure      time.Time
}

// Estimator holds the evidence of a record as of one moment.
type Estimator struct {
	p     Params
	now   time.Time
	pairs map[Pair]*tally
	// types and dcs pool the pairs of a GPU type (in a cloud) and of a data
	// center: a flaky host model fails in every data center and a bad driver
	// rollout hits every type of one data center, so a pair with no evidence
	// of its own starts from the worse of the two.
	types, dcs map[Pair]*tally
}

// poolWeight is the prior's weight in a pooled estimate: pooled evidence is
// about other pairs, so it takes more of it to move a pair's prior.
const poolWeight = 4

// New estimates every pair of rec at now. Observations after now (a clock
// skew) count as made now.
func New(rec Record, now time.Time, p Params) *Estimator {
	e := &Estimator{p: p.withDefaults(), now: now, pairs: map[Pair]*tally{}, types: map[Pair]*tally{}, dcs: map[Pair]*tally{}}
	obs := slices.Clone(rec.Observations)
	slices.SortStableFunc(obs, func(a, b Observation) int { return a.At.Compare(b.At) })
	for _, o := range obs {
		k := pairOf(o.GPU, o.Cloud, o.DataCenter)
		t := e.pairs[k]
		if t == nil {
			t = &tally{}
			e.pairs[k] = t
		}
		w := math.Exp2(-max(now.Sub(o.At), 0).Hours() / e.p.HalfLife.Hours())
		for _, pool := range []*tally{pooled(e.types, Pair{GPU: k.GPU, Cloud: k.Cloud}), pooled(e.dcs, Pair{DataCenter: k.DataCenter})} {
			pool.n += w
			if !o.OK {
				pool.fails += w
			}
		}
		t.n += w
		if o.OK {
			t.consecutive = 0
			continue
		}
		t.fails += w
		t.consecutive++
		t.lastFailure = o.At
		if o.Seconds > 0 {
			t.failSecs += w * float64(o.Seconds)
			t.failsW += w
		}
	}
	return e
}

func pooled(m map[Pair]*tally, k Pair) *tally {
	if m[k] == nil {
		m[k] = &tally{}
	}
	return m[k]
}

func pairOf(gpu, cloud, dc string) Pair {
	cloud = strings.ToUpper(cloud)
	if cloud == "" {
		cloud = "SECURE"
	}
	return Pair{GPU: gpu, Cloud: cloud, DataCenter: strings.ToUpper(dc)}
}

// Empty reports whether there is no evidence at all: a cold start.
func (e *Estimator) Empty() bool { return len(e.pairs) == 0 }

// Estimate returns the pair's estimate (the prior when it has no evidence).
func (e *Estimator) Estimate(p Pair) Estimate {
	p = pairOf(p.GPU, p.Cloud, p.DataCenter)
	prior := e.p.PriorFailure
	for _, pool := range []*tally{e.types[Pair{GPU: p.GPU, Cloud: p.Cloud}], e.dcs[Pair{DataCenter: p.DataCenter}]} {
		if pool != nil {
			prior = max(prior, (pool.fails+e.p.PriorFailure*poolWeight)/(pool.n+poolWeight))
		}
	}
	est := Estimate{Failure: prior, FailTime: e.p.FailTime}
	t := e.pairs[p]
	if t == nil {
		return est
	}
	est.Evidence = t.n
	est.Failure = (t.fails + prior*e.p.PriorWeight) / (t.n + e.p.PriorWeight)
	if t.failsW > 0 {
		est.FailTime = time.Duration(t.failSecs / t.failsW * float64(time.Second))
	}
	if t.consecutive >= e.p.QuarantineAfter {
		if until := t.lastFailure.Add(e.p.QuarantineFor); e.now.Before(until) {
			est.QuarantinedUntil = until
		}
	}
	return est
}

// Quarantined lists the pairs quarantined now, in a stable order, for logs.
func (e *Estimator) Quarantined() []string {
	var out []string
	for k := range e.pairs {
		if until := e.Estimate(k).QuarantinedUntil; !until.IsZero() {
			out = append(out, fmt.Sprintf("%s until %s", k, until.UTC().Format(time.RFC3339)))
		}
	}
	slices.Sort(out)
	return out
}
