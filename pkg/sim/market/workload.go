package market

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// Workload model: pull requests arrive about every quarter hour, a third of
// them are pushed again (some twice) minutes to hours later, every push is a
// new tested ref, and GitHub delivers the trigger of each push three times.
const (
	meanPRGap        = 15 * time.Minute
	deliveriesPerRef = 3
	jobMedian        = 12 * time.Minute
)

// ref is one tested merge ref: a pull request's push.
type ref struct {
	PR, Push int
	At       time.Time     // its first delivery
	Job      time.Duration // how long its GPU job holds the accepted pod
	Warm     bool          // part of the warm-up: run, not counted
}

// workload draws the scenario's refs in arrival order: the warm-up's (from
// their own stream, so the measured refs are the same whatever the warm-up)
// from Start less WarmUp, then the measured ones from Start.
func workload(s Scenario) []ref {
	var warm []ref
	if s.WarmUp > 0 {
		for _, r := range draw(s.Start.Add(-s.WarmUp), 0x7761726d, s.Seed, -1) { // "warm"
			if !r.At.Before(s.Start) {
				break
			}
			r.Warm = true
			warm = append(warm, r)
		}
	}
	return append(warm, draw(s.Start, 0x776f726b, s.Seed, s.PRs)...) // "work"
}

// draw draws the refs of prs pull requests (-1: as many as arrive in a
// month) arriving from start, from the stream key of seed.
func draw(start time.Time, key, seed uint64, prs int) []ref {
	r := rand.New(rand.NewPCG(seed, key))
	var refs []ref
	at := start
	for pr := 1; prs < 0 || pr <= prs; pr++ {
		if prs < 0 && at.Sub(start) > 30*24*time.Hour {
			break
		}
		at = at.Add(time.Duration(r.ExpFloat64() * float64(meanPRGap)).Round(time.Second))
		pushes := 1
		switch u := r.Float64(); {
		case u < 0.12:
			pushes = 3
		case u < 0.35:
			pushes = 2
		}
		t := at
		for push := 1; push <= pushes; push++ {
			job := time.Duration(float64(jobMedian) * math.Exp(0.4*r.NormFloat64())).Round(time.Second)
			refs = append(refs, ref{PR: pr, Push: push, At: t, Job: job})
			t = t.Add(time.Duration(30+r.IntN(450)) * time.Minute)
		}
	}
	slices.SortStableFunc(refs, func(a, b ref) int { return a.At.Compare(b.At) })
	return refs
}
