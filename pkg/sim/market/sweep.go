package market

import (
	"context"
	"fmt"
	"strings"

	"github.com/org/runpod-gpu/pkg/mdtable"
)

// SweepSeeds and SweepLayouts are the scenarios the README's sweep compares
// the reputation policy with the seed's on: seeds 1 to 10, both layouts.
var (
	SweepSeeds   = []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	SweepLayouts = []Layout{Uniform, Clustered}
)

// Target is what the reputation policy is held to against the seed's policy
// in every scenario: at least this much less waste on rejected hosts per
// accepted pod, no higher p95 time to a runner and no more runs that ended
// with no pod.
const Target = 0.30

// sweepPolicies are the sweep's runs per scenario, in order: the seed's,
// the plain lane and the reputation policy with both clouds, and the
// reputation policy restricted to the secure cloud.
func sweepPolicies() []Policy {
	var out []Policy
	for _, p := range Policies() {
		if p.Name == "seed" || p.Name == "lane" || p.Name == "reputation" {
			out = append(out, p)
		}
	}
	for _, p := range SecurePolicies() {
		if p.Name == "reputation" {
			p.Name = "reputation, secure cloud"
			out = append(out, p)
		}
	}
	return out
}

// Comparison is one scenario of a sweep: the seed's policy, the plain lane
// and the reputation policy with both clouds, and the reputation policy with
// the secure cloud alone; then the seed's and the reputation policy (both
// clouds) again from a cold start: no warm-up, so the lane has no record for
// its first day and a quarter.
type Comparison struct {
	Title                          string
	Seed, Lane, Reputation, Secure Result
	ColdSeed, ColdReputation       Result
}

// ColdP95OK reports whether the reputation policy's p95 time to a runner
// from a cold start is not higher than the seed's from the same start.
func (c Comparison) ColdP95OK() bool {
	return c.ColdReputation.TimeToRunner(0.95) <= c.ColdSeed.TimeToRunner(0.95)
}

// coldPolicies are the cold-start runs per scenario: the seed's policy and
// the reputation policy with both clouds.
func coldPolicies() []Policy {
	var out []Policy
	for _, p := range Policies() {
		if p.Name == "seed" || p.Name == "reputation" {
			out = append(out, p)
		}
	}
	return out
}

// Verdict is how one reputation result fares against the seed's.
type Verdict struct {
	LessWaste float64 // 1 - waste per accepted pod / the seed's
	WasteOK   bool    // LessWaste at least Target
	P95OK     bool    // p95 time to a runner not higher than the seed's
	NoPodOK   bool    // runs that ended with no pod: not more than the seed's
	All       bool    // all three
}

// Judge compares r with the seed's result.
func Judge(seed, r Result) Verdict {
	v := Verdict{LessWaste: 1 - r.WastePerAccepted()/max(seed.WastePerAccepted(), 1e-12)}
	v.WasteOK = v.LessWaste >= Target-1e-9 // rounding: 30 % less is 30 % less
	v.P95OK = r.TimeToRunner(0.95) <= seed.TimeToRunner(0.95)
	v.NoPodOK = r.RunsNoPod <= seed.RunsNoPod
	v.All = v.WasteOK && v.P95OK && v.NoPodOK
	return v
}

// Sweep runs base (its pull requests, bad share and warm-up) for every seed
// and layout, then the same scenarios without the warm-up (the cold start),
// workers policy runs at a time.
func Sweep(ctx context.Context, base Scenario, seeds []uint64, layouts []Layout, workers int) ([]Comparison, error) {
	var scenarios, cold []Scenario
	for _, seed := range seeds {
		for _, l := range layouts {
			s := base
			s.Seed, s.Layout = seed, l
			scenarios = append(scenarios, s)
			s.WarmUp = -1 // Scenario's "none"
			cold = append(cold, s)
		}
	}
	reps, err := RunAll(ctx, scenarios, sweepPolicies(), workers)
	if err != nil {
		return nil, err
	}
	colds, err := RunAll(ctx, cold, coldPolicies(), workers)
	if err != nil {
		return nil, err
	}
	out := make([]Comparison, len(reps))
	for i, rep := range reps {
		out[i] = Comparison{Title: rep.Title(), Seed: rep.Results[0], Lane: rep.Results[1], Reputation: rep.Results[2], Secure: rep.Results[3],
			ColdSeed: colds[i].Results[0], ColdReputation: colds[i].Results[1]}
	}
	return out, nil
}

// SweepTable renders a sweep: a row per scenario with each policy's wasted
// $ on rejected hosts per accepted pod, the reputation policy's reduction
// against the seed's and its p95 time to a runner and runs with no pod,
// and the seed's and the reputation policy's p95 from a cold start, then how
// many scenarios meet the target, with both clouds and with the secure cloud
// alone, and from a cold start. ✗ marks a figure that misses it.
func SweepTable(cs []Comparison) string {
	tb := mdtable.New("scenario", "seed", "lane", "reputation", "less than seed", "reputation, secure only", "less than seed",
		"p95 to a runner: seed / rep. / secure", "runs with no pod: seed / rep. / secure", "p95 from a cold start: seed / rep.").
		AlignRight(1, 2, 3, 4, 5, 6, 7, 8, 9)
	var both, secure [4]int
	cold := 0
	for _, c := range cs {
		if c.ColdP95OK() {
			cold++
		}
		vb, vs := Judge(c.Seed, c.Reputation), Judge(c.Seed, c.Secure)
		tally(&both, vb)
		tally(&secure, vs)
		tb.Row(c.Title, fmt.Sprintf("$%.4f", c.Seed.WastePerAccepted()), fmt.Sprintf("$%.4f", c.Lane.WastePerAccepted()),
			fmt.Sprintf("$%.4f", c.Reputation.WastePerAccepted()), percent(vb),
			fmt.Sprintf("$%.4f", c.Secure.WastePerAccepted()), percent(vs),
			fmt.Sprintf("%s / %s / %s", minutes(c.Seed.TimeToRunner(0.95)), mark(minutes(c.Reputation.TimeToRunner(0.95)), vb.P95OK),
				mark(minutes(c.Secure.TimeToRunner(0.95)), vs.P95OK)),
			fmt.Sprintf("%d / %s / %s", c.Seed.RunsNoPod, mark(fmt.Sprint(c.Reputation.RunsNoPod), vb.NoPodOK),
				mark(fmt.Sprint(c.Secure.RunsNoPod), vs.NoPodOK)),
			fmt.Sprintf("%s / %s", minutes(c.ColdSeed.TimeToRunner(0.95)), mark(minutes(c.ColdReputation.TimeToRunner(0.95)), c.ColdP95OK())))
	}
	var b strings.Builder
	b.WriteString(tb.String())
	n := len(cs)
	fmt.Fprintf(&b, "\nBoth clouds: ≥ %.0f %% less waste in %d of %d scenarios, p95 not higher in %d, runs with no pod not more in %d; all three in %d.\n",
		Target*100, both[0], n, both[1], both[2], both[3])
	fmt.Fprintf(&b, "Secure cloud only: ≥ %.0f %% less waste in %d of %d scenarios, p95 not higher in %d, runs with no pod not more in %d; all three in %d.\n",
		Target*100, secure[0], n, secure[1], secure[2], secure[3])
	fmt.Fprintf(&b, "From a cold start (no warm-up: no record for the first day and a quarter), both clouds: p95 not higher in %d of %d scenarios.\n", cold, n)
	return b.String()
}

func tally(t *[4]int, v Verdict) {
	for i, ok := range []bool{v.WasteOK, v.P95OK, v.NoPodOK, v.All} {
		if ok {
			t[i]++
		}
	}
}

// percent renders a verdict's waste reduction, marked when under the target.
func percent(v Verdict) string {
	s := fmt.Sprintf("%.0f %%", 100*v.LessWaste)
	if v.LessWaste < 0 {
		s = fmt.Sprintf("%.0f %% more", -100*v.LessWaste)
	}
	return mark(s, v.WasteOK)
}

// mark flags a figure that misses the target.
func mark(s string, ok bool) string {
	if ok {
		return s
	}
	return s + " ✗"
}
