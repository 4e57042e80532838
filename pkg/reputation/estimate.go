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
	// MachineHold is how long a machine's evidence holds it bad: a machine
	// whose pods failed (its own estimate, shrunk towards PriorFailure with
	// PriorWeight, above Avoid) over the failures and successes of this long
	// is held bad, and a pod RunPod places on it is deleted before its proof
	// (see BadMachine). No create parameter excludes a machine, and a held
	// machine's pods never run, so it is released only when its failures age
	// out: the record's own span (the cost history's 7 days) by default.
	MachineHold time.Duration
	// ScreenTime is what a pod placed on a held machine costs until the next
	// candidate is on its way: the create, one read of its machine and its
	// deletion.
	ScreenTime time.Duration
}

// DefaultParams are the lane's defaults.
var DefaultParams = Params{
	HalfLife: 72 * time.Hour, PriorFailure: 0.1, PriorWeight: 2, Avoid: 0.3,
	QuarantineAfter: 2, QuarantineFor: 12 * time.Hour,
	RunTime: 15 * time.Minute, FailTime: 4 * time.Minute,
	MachineHold: 7 * 24 * time.Hour, ScreenTime: time.Minute,
}

func (p Params) withDefaults() Params {
	d := DefaultParams
	positiveOr(&p.HalfLife, d.HalfLife)
	if p.PriorFailure >= 1 {
		p.PriorFailure = d.PriorFailure // a probability below 1
	}
	positiveOr(&p.PriorFailure, d.PriorFailure)
	positiveOr(&p.PriorWeight, d.PriorWeight)
	positiveOr(&p.Avoid, d.Avoid)
	positiveOr(&p.QuarantineAfter, d.QuarantineAfter)
	positiveOr(&p.QuarantineFor, d.QuarantineFor)
	positiveOr(&p.RunTime, d.RunTime)
	positiveOr(&p.FailTime, d.FailTime)
	positiveOr(&p.MachineHold, d.MachineHold)
	positiveOr(&p.ScreenTime, d.ScreenTime)
	return p
}

// positiveOr sets *v to def unless it is positive: zero means unset, and no
// parameter may be negative.
func positiveOr[T int | float64 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
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
	// shrunk towards Params.PriorFailure. Pods on machines held bad are not
	// counted: a pod placed on one again is deleted before its proof.
	Failure float64
	// Evidence is the decayed number of attempts behind it (0: prior only).
	Evidence float64
	// Screened is the share of the pair's placements (decayed) that landed
	// on machines held bad now: how often a create here is deleted before
	// its proof (see Estimator.BadMachine).
	Screened float64
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

// add counts one observation of weight w.
func (t *tally) add(o Observation, w float64) {
	t.n += w
	if o.OK {
		t.consecutive = 0
		return
	}
	t.fails += w
	t.consecutive++
	t.lastFailure = o.At
	if o.Seconds > 0 {
		t.failSecs += w * float64(o.Seconds)
		t.failsW += w
	}
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
	// bad holds the machines held bad now (see BadMachine), with the
	// failures and attempts that put them there; screened is, by pair, the
	// decayed placements on them.
	bad      map[string]machineVerdict
	screened map[Pair]float64
}

// machineVerdict is why a machine is held bad.
type machineVerdict struct {
	pair        Pair
	fails, n    int
	lastFailure time.Time
	poolW       float64 // the weight of its one pooled failure: its latest
}

// poolWeight is the prior's weight in a pooled estimate: pooled evidence is
// about other pairs, so it takes more of it to move a pair's prior.
const poolWeight = 4

// New estimates every pair of rec at now. Observations after now (a clock
// skew) count as made now.
//
// Machines first: a machine whose own evidence of the last
// Params.MachineHold says it fails more often than Params.Avoid is held bad.
// Its pods then say nothing more about its pair (a pod placed there again is
// deleted before its proof; the pair's Screened share is how often that
// happens) and count as one failure in the pools: one bad machine among good
// ones is one piece of evidence about its data center and its host model,
// however many pods it took, while a bad rollout fails many machines.
func New(rec Record, now time.Time, p Params) *Estimator {
	e := &Estimator{p: p.withDefaults(), now: now, pairs: map[Pair]*tally{}, types: map[Pair]*tally{}, dcs: map[Pair]*tally{},
		screened: map[Pair]float64{}}
	obs := slices.Clone(rec.Observations)
	slices.SortStableFunc(obs, func(a, b Observation) int { return a.At.Compare(b.At) })
	e.bad = e.holdMachines(obs)
	for _, o := range obs {
		k := pairOf(o.GPU, o.Cloud, o.DataCenter)
		w := e.weight(o.At)
		if v, held := e.bad[o.Machine]; held && o.Machine != "" {
			e.screened[k] += w
			if !o.OK && w > v.poolW {
				v.poolW = w
				e.bad[o.Machine] = v
			}
			continue
		}
		t := e.pairs[k]
		if t == nil {
			t = &tally{}
			e.pairs[k] = t
		}
		t.add(o, w)
		e.pool(k, !o.OK, w)
	}
	for _, v := range e.bad {
		e.pool(v.pair, true, v.poolW)
	}
	return e
}

// weight is an observation's decayed weight: 1 now, ½ one HalfLife ago.
func (e *Estimator) weight(at time.Time) float64 {
	return math.Exp2(-max(e.now.Sub(at), 0).Hours() / e.p.HalfLife.Hours())
}

// pool counts one observation of pair k in its GPU type's and its data
// center's pooled tallies.
func (e *Estimator) pool(k Pair, failed bool, w float64) {
	for _, t := range []*tally{pooled(e.types, Pair{GPU: k.GPU, Cloud: k.Cloud}), pooled(e.dcs, Pair{DataCenter: k.DataCenter})} {
		t.n += w
		if failed {
			t.fails += w
		}
	}
}

// holdMachines finds the machines held bad at the estimator's time: by the
// observations (in time order) that name their machine, within MachineHold.
func (e *Estimator) holdMachines(obs []Observation) map[string]machineVerdict {
	seen := map[string]machineVerdict{}
	for _, o := range obs {
		if o.Machine == "" || e.now.Sub(o.At) > e.p.MachineHold {
			continue
		}
		v := seen[o.Machine]
		v.pair = pairOf(o.GPU, o.Cloud, o.DataCenter)
		v.n++
		if !o.OK {
			v.fails++
			v.lastFailure = o.At
		}
		seen[o.Machine] = v
	}
	bad := map[string]machineVerdict{}
	for id, v := range seen {
		if v.fails > 0 && (float64(v.fails)+e.p.PriorFailure*e.p.PriorWeight)/(float64(v.n)+e.p.PriorWeight) > e.p.Avoid {
			bad[id] = v
		}
	}
	return bad
}

// BadMachine reports whether the machine with RunPod's id is held bad now,
// and why, for the log: a pod placed on it is best deleted before its proof.
func (e *Estimator) BadMachine(id string) (bool, string) {
	v, held := e.bad[id]
	if !held || id == "" {
		return false, ""
	}
	return true, fmt.Sprintf("machine %s (%s) failed %d of its last %d pods (last %s)", id, v.pair, v.fails, v.n,
		v.lastFailure.UTC().Format(time.RFC3339))
}

// HeldMachines is how many machines are held bad now.
func (e *Estimator) HeldMachines() int { return len(e.bad) }

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
func (e *Estimator) Empty() bool { return len(e.pairs) == 0 && len(e.bad) == 0 }

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
	if sw := e.screened[p]; sw > 0 {
		n := sw
		if t != nil {
			n += t.n
		}
		est.Screened = sw / n
	}
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
