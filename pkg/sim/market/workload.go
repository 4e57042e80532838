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
}

// workload draws the scenario's refs in arrival order.
func workload(s Scenario) []ref {
	r := rand.New(rand.NewPCG(s.Seed, 0x776f726b)) // "work"
	var refs []ref
	at := s.Start
	for pr := 1; pr <= s.PRs; pr++ {
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
