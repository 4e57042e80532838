package history

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/org/runpod-gpu/pkg/cost"
)

// ReportSchema names the shape of the JSON report.
const ReportSchema = "runpod-gpu-history/v1"

// unknownGPU groups pods whose evidence names no GPU type.
const unknownGPU = "unknown GPU"

// Report is the cost history of a set of workflow attempts. Sums that
// include an unknown amount are unknown (see Amount), never zero.
type Report struct {
	Schema       string            `json:"schema"`
	Disclaimer   string            `json:"disclaimer"`
	FirstDay     string            `json:"firstDay"` // UTC date of the earliest attempt; "" when none
	LastDay      string            `json:"lastDay"`
	Totals       Totals            `json:"totals"`
	GPUs         []GPUSummary      `json:"gpus"` // by known spend, largest first
	Triggers     Triggers          `json:"triggers"`
	RepeatedRefs []RefSummary      `json:"repeatedRefs"` // tested refs the paid path ran for more than once
	ReusedGates  []ReusedGate      `json:"reusedGates"`
	Conclusions  []ConclusionGroup `json:"conclusions"` // paid attempts by the GPU job's conclusion, every conclusion listed
	Stages       StageTotals       `json:"stages"`
	Billing      *Reconciliation   `json:"billing,omitempty"`
	RightSizing  *RightSizing      `json:"rightSizing,omitempty"`
	Weeks        []WeekSummary     `json:"weeks"`
	Unknowns     []string          `json:"unknowns"` // every figure the evidence could not give, and why
	Warnings     []string          `json:"warnings"` // odd evidence: duplicates, malformed lines, unreadable files
	Attempts     []Attempt         `json:"attempts"`
	// Serverless is the Serverless lane's attempts; absent when there were none.
	Serverless *ServerlessSummary `json:"serverless,omitempty"`
}

// Totals counts attempts and pods and sums their spend.
type Totals struct {
	Attempts        int    `json:"attempts"`
	Paid            int    `json:"paid"`
	Reused          int    `json:"reused"`
	NoGPUWork       int    `json:"noGpuWork"`
	UnknownAttempts int    `json:"unknownAttempts"`    // attempts whose evidence is missing
	Incomplete      int    `json:"incompleteEvidence"` // attempts with a download still missing
	Pods            int    `json:"pods"`               // distinct pods; duplicates counted once
	Accepted        int    `json:"accepted"`
	Rejected        int    `json:"rejected"` // rejected candidates and pods of failed attempts
	UnknownCostPods int    `json:"unknownCostPods"`
	Duplicates      int    `json:"duplicatePods"` // pod rows left out because another attempt counted the id
	Spend           Amount `json:"spend"`         // pods and Serverless jobs
	AcceptedSpend   Amount `json:"acceptedSpend"`
	RejectedSpend   Amount `json:"rejectedSpend"`
	// ServerlessAttempts are the Serverless lane's attempts, whose spend
	// Spend includes (see Report.Serverless).
	ServerlessAttempts int `json:"serverlessAttempts,omitempty"`
}

// GPUSummary is the pods of one GPU type, failures included.
type GPUSummary struct {
	GPU             string `json:"gpu"`
	Pods            int    `json:"pods"`
	Accepted        int    `json:"accepted"`
	Rejected        int    `json:"rejected"`
	UnknownCostPods int    `json:"unknownCostPods"`
	Spend           Amount `json:"spend"`
	RejectedSpend   Amount `json:"rejectedSpend"`
	// SpendPerAcceptedPod is all the GPU's spend, rejections included, over
	// its accepted pods; null when none was accepted.
	SpendPerAcceptedPod *Amount `json:"spendPerAcceptedPod"`
}

// TriggerGroup is a set of paid attempts.
type TriggerGroup struct {
	Attempts   int    `json:"attempts"`
	TestedRefs int    `json:"testedRefs"`
	Spend      Amount `json:"spend"`
}

// Triggers splits the paid attempts by why they ran: an automatic run of a
// tested ref for the first time, an automatic repeat of a ref already run, or
// a manual confirmation.
type Triggers struct {
	AutomaticFirst  TriggerGroup `json:"automaticFirst"`
	AutomaticRepeat TriggerGroup `json:"automaticRepeat"`
	Manual          TriggerGroup `json:"manual"`
	UnknownRef      TriggerGroup `json:"unknownRef"` // automatic attempts whose tested ref no evidence names
}

// RefSummary is one tested ref the paid path ran for more than once.
type RefSummary struct {
	TestedRef string `json:"testedRef"`
	Automatic int    `json:"automatic"` // paid automatic attempts
	Manual    int    `json:"manual"`    // paid manual confirmations
	Reused    int    `json:"reused"`    // attempts that reused an earlier gate
	Spend     Amount `json:"spend"`
}

// ConclusionGroup is the paid attempts whose GPU job ended one way: it tells
// a paid failure from a paid success.
type ConclusionGroup struct {
	Conclusion cost.Conclusion `json:"conclusion"`
	Attempts   int             `json:"attempts"`
	Pods       int             `json:"pods"`  // counted pods, rejected candidates included
	Spend      Amount          `json:"spend"` // all the attempts' pods, rejected candidates included
}

// ReusedGate is an attempt that reused an earlier gate instead of paying.
type ReusedGate struct {
	RunID     int64  `json:"runId"`
	Attempt   int    `json:"runAttempt"`
	Day       string `json:"day"`
	TestedRef string `json:"testedRef"`
	URL       string `json:"url"`
}

// StageTotals sums the accepted pods' paid windows by stage kind.
type StageTotals struct {
	Kinds []StageTotal `json:"kinds"`
	// Pods have a stage breakdown; AcceptedWithout are accepted pods without one.
	Pods            int `json:"pods"`
	AcceptedWithout int `json:"acceptedWithoutBreakdown"`
}

// StageTotal is one stage kind's seconds and spend.
type StageTotal struct {
	Kind    cost.StageKind `json:"kind"`
	Seconds int64          `json:"seconds"`
	Spend   Amount         `json:"spend"`
}

// WeekSummary is one ISO week's attempts and spend.
type WeekSummary struct {
	Week     string `json:"week"` // "2026-W41"
	Attempts int    `json:"attempts"`
	Pods     int    `json:"pods"`
	Spend    Amount `json:"spend"`
}

// Summarize reads the saved evidence in dir, offline, and builds the report
// of the attempts whose run was created within r (every attempt when r is nil).
func Summarize(dir string, within *Range) (*Report, error) {
	st := store{dir: dir}
	keys, err := st.keys()
	if err != nil {
		return nil, err
	}
	reaped, reaperProblems := loadReaperCosts(dir)
	// Reading an attempt is mostly waiting for its files: read several at once.
	type result struct {
		attempt *Attempt
		problem string
	}
	results := make([]result, len(keys))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0)*4, len(keys)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				rec, ok, err := st.load(keys[i])
				switch {
				case err != nil:
					results[i].problem = fmt.Sprintf("run %d attempt %d: %v: left out; the next collection downloads it again",
						keys[i].RunID, keys[i].Attempt, err)
				case ok && (within == nil || within.Contains(rec.CreatedAt)):
					a := readAttempt(st, rec, reaped)
					results[i].attempt = &a
				}
			}
		}()
	}
	for i := range keys {
		next <- i
	}
	close(next)
	wg.Wait()

	var attempts []Attempt
	problems := reaperProblems
	for _, r := range results {
		if r.attempt != nil {
			attempts = append(attempts, *r.attempt)
		}
		if r.problem != "" {
			problems = append(problems, r.problem)
		}
	}
	return summarize(attempts, problems), nil
}

// when dates an attempt: its start, or its run's creation.
func (a Attempt) when() time.Time {
	if a.StartedAt.IsZero() {
		return a.CreatedAt
	}
	return a.StartedAt
}

// summarize builds the report of attempts given in run and attempt order.
func summarize(attempts []Attempt, problems []string) *Report {
	r := &Report{
		Schema: ReportSchema, Disclaimer: cost.Disclaimer,
		GPUs: []GPUSummary{}, RepeatedRefs: []RefSummary{}, ReusedGates: []ReusedGate{},
		Weeks: []WeekSummary{}, Unknowns: []string{}, Warnings: []string{}, Attempts: attempts,
	}
	if r.Attempts == nil {
		r.Attempts = []Attempt{}
	}
	r.markDuplicates()
	r.count()
	r.byGPU()
	r.byTrigger()
	r.byConclusion()
	r.byStage()
	r.byWeek()
	r.byServerless()
	r.explain(problems)
	return r
}

// markDuplicates counts a pod id once: later attempts naming it again keep
// the row, marked, out of every total.
func (r *Report) markDuplicates() {
	first := map[string]string{}
	for i := range r.Attempts {
		a := &r.Attempts[i]
		for j := range a.Pods {
			p := &a.Pods[j]
			if p.ID == "" {
				continue
			}
			if where, seen := first[p.ID]; seen {
				p.DuplicateOf = where
				r.Warnings = append(r.Warnings, fmt.Sprintf("pod %s appears in %s and again in %s: counted once, in %s",
					p.ID, where, a.name(), where))
				continue
			}
			first[p.ID] = a.name()
		}
	}
}

// pods calls f for every counted pod.
func (r *Report) pods(f func(a *Attempt, p *Pod)) {
	for i := range r.Attempts {
		a := &r.Attempts[i]
		for j := range a.Pods {
			if a.Pods[j].DuplicateOf == "" {
				f(a, &a.Pods[j])
			}
		}
	}
}

func (r *Report) count() {
	t := &r.Totals
	for i, a := range r.Attempts {
		t.Attempts++
		switch a.Decision {
		case DecisionPaid:
			t.Paid++
		case DecisionReused:
			t.Reused++
		case DecisionNone:
			t.NoGPUWork++
		default:
			t.UnknownAttempts++
		}
		if !a.EvidenceComplete {
			t.Incomplete++
		}
		day := a.when().UTC().Format(time.DateOnly)
		if i == 0 || day < r.FirstDay {
			r.FirstDay = day
		}
		if day > r.LastDay {
			r.LastDay = day
		}
		for _, p := range a.Pods {
			if p.DuplicateOf != "" {
				t.Duplicates++
			}
		}
	}
	r.pods(func(_ *Attempt, p *Pod) {
		t.Pods++
		t.Spend.Add(p.Dollars)
		if p.Outcome == cost.OutcomeAccepted {
			t.Accepted++
			t.AcceptedSpend.Add(p.Dollars)
		} else {
			t.Rejected++
			t.RejectedSpend.Add(p.Dollars)
		}
		if !p.Dollars.Known {
			t.UnknownCostPods++
		}
	})
}

func (r *Report) byGPU() {
	gpus := groupInto(&r.GPUs)
	r.pods(func(_ *Attempt, p *Pod) {
		name := cmp.Or(p.GPU, unknownGPU)
		g := gpus.row(name, func() GPUSummary { return GPUSummary{GPU: name} })
		g.Pods++
		g.Spend.Add(p.Dollars)
		if p.Outcome == cost.OutcomeAccepted {
			g.Accepted++
		} else {
			g.Rejected++
			g.RejectedSpend.Add(p.Dollars)
		}
		if !p.Dollars.Known {
			g.UnknownCostPods++
		}
	})
	for i := range r.GPUs {
		g := &r.GPUs[i]
		if g.Accepted > 0 {
			per := g.Spend.Per(g.Accepted)
			g.SpendPerAcceptedPod = &per
		}
	}
	slices.SortStableFunc(r.GPUs, func(a, b GPUSummary) int {
		return cmp.Or(cmp.Compare(b.Spend.Known, a.Spend.Known), cmp.Compare(a.GPU, b.GPU))
	})
}

func (r *Report) byTrigger() {
	t := triggerTally{groups: map[*TriggerGroup]map[string]bool{}, refs: map[string]*RefSummary{}}
	chronological := slices.Clone(r.Attempts)
	slices.SortStableFunc(chronological, func(a, b Attempt) int { return a.when().Compare(b.when()) })
	ranAutomatically := map[string]bool{}
	for _, a := range chronological {
		switch {
		case a.Decision == DecisionReused:
			r.ReusedGates = append(r.ReusedGates, ReusedGate{RunID: a.RunID, Attempt: a.Attempt,
				Day: a.when().UTC().Format(time.DateOnly), TestedRef: a.TestedRef, URL: a.URL})
			if a.TestedRef != "" {
				t.ref(a.TestedRef).Reused++
			}
			continue
		case a.Decision != DecisionPaid:
			continue
		case a.Trigger == cost.TriggerManual:
			t.add(&r.Triggers.Manual, a)
		case a.TestedRef == "":
			t.add(&r.Triggers.UnknownRef, a)
		case ranAutomatically[a.TestedRef]:
			t.add(&r.Triggers.AutomaticRepeat, a)
		default:
			ranAutomatically[a.TestedRef] = true
			t.add(&r.Triggers.AutomaticFirst, a)
		}
		if a.TestedRef == "" {
			continue
		}
		s := t.ref(a.TestedRef)
		if a.Trigger == cost.TriggerManual {
			s.Manual++
		} else {
			s.Automatic++
		}
		s.Spend.Plus(a.Spend())
	}
	for g, set := range t.groups {
		g.TestedRefs = len(set)
	}
	for _, s := range t.refs {
		if s.Automatic+s.Manual > 1 {
			r.RepeatedRefs = append(r.RepeatedRefs, *s)
		}
	}
	slices.SortFunc(r.RepeatedRefs, func(a, b RefSummary) int {
		return cmp.Or(cmp.Compare(b.Automatic+b.Manual, a.Automatic+a.Manual), cmp.Compare(a.TestedRef, b.TestedRef))
	})
}

// triggerTally is what byTrigger counts as it goes: the tested refs of each
// trigger group and the summary of each tested ref.
type triggerTally struct {
	groups map[*TriggerGroup]map[string]bool
	refs   map[string]*RefSummary
}

// add counts a paid attempt in g.
func (t *triggerTally) add(g *TriggerGroup, a Attempt) {
	g.Attempts++
	g.Spend.Plus(a.Spend())
	if t.groups[g] == nil {
		t.groups[g] = map[string]bool{}
	}
	if a.TestedRef != "" {
		t.groups[g][a.TestedRef] = true
	}
}

// ref is the summary of the tested ref name, created at its first use.
func (t *triggerTally) ref(name string) *RefSummary {
	if t.refs[name] == nil {
		t.refs[name] = &RefSummary{TestedRef: name}
	}
	return t.refs[name]
}

// byConclusion sums the paid attempts by how their GPU job ended.
func (r *Report) byConclusion() {
	r.Conclusions = make([]ConclusionGroup, len(cost.Conclusions))
	for i, c := range cost.Conclusions {
		r.Conclusions[i].Conclusion = c
	}
	for _, a := range r.Attempts {
		if a.Decision != DecisionPaid {
			continue
		}
		i := slices.Index(cost.Conclusions, a.JobConclusion.OrUnknown())
		if i < 0 { // not a conclusion this version knows: never dropped from the sums
			i = slices.Index(cost.Conclusions, cost.ConclusionUnknown)
		}
		g := &r.Conclusions[i]
		g.Attempts++
		for _, p := range a.Pods {
			if p.DuplicateOf == "" {
				g.Pods++
			}
		}
		g.Spend.Plus(a.Spend())
	}
}

func (r *Report) byStage() {
	kinds := []cost.StageKind{cost.StageStartup, cost.StageSetup, cost.StageTests, cost.StageCleanup, cost.StageOverhead}
	r.Stages.Kinds = make([]StageTotal, len(kinds))
	for i, k := range kinds {
		r.Stages.Kinds[i].Kind = k
	}
	r.pods(func(_ *Attempt, p *Pod) {
		if p.Outcome != cost.OutcomeAccepted {
			return
		}
		if len(p.Stages) == 0 {
			r.Stages.AcceptedWithout++
			return
		}
		r.Stages.Pods++
		for _, s := range p.Stages {
			if i := slices.Index(kinds, s.Kind); i >= 0 {
				r.Stages.Kinds[i].Seconds += s.Seconds
				r.Stages.Kinds[i].Spend.Add(cost.KnownSeconds(s.Seconds).At(p.Price))
			}
		}
	})
}

func (r *Report) byWeek() {
	weeks := groupInto(&r.Weeks)
	for _, a := range r.Attempts {
		week := isoWeek(a.when())
		w := weeks.row(week, func() WeekSummary { return WeekSummary{Week: week} })
		w.Attempts++
		for _, p := range a.Pods {
			if p.DuplicateOf == "" {
				w.Pods++
				w.Spend.Add(p.Dollars)
			}
		}
		if a.Serverless != nil {
			w.Spend.AddJob(a.Serverless.Dollars)
		}
	}
	slices.SortFunc(r.Weeks, func(a, b WeekSummary) int { return cmp.Compare(a.Week, b.Week) })
}

// explain lists every unknown, attempt by attempt, and every warning.
func (r *Report) explain(problems []string) {
	for _, a := range r.Attempts {
		for _, n := range a.Notes {
			r.Unknowns = append(r.Unknowns, a.name()+": "+n)
		}
		for _, p := range a.Pods {
			if p.DuplicateOf != "" {
				continue
			}
			for _, n := range p.Notes {
				r.Unknowns = append(r.Unknowns, fmt.Sprintf("%s, pod %s: %s", a.name(), cmp.Or(p.ID, "without id"), n))
			}
		}
		for _, w := range a.Warnings {
			r.Warnings = append(r.Warnings, a.name()+": "+w)
		}
	}
	r.Warnings = append(r.Warnings, problems...)
}
