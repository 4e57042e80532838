package provision

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/mdtable"
	"github.com/org/runpod-gpu/pkg/money"
)

// Outputs are the start-runpod action's outputs, one field per output
// (written by actionio.WriteOutputs). The pod-id and created-pod-ids the
// action publishes the moment each pod exists are the action's own.
type Outputs struct {
	PaidPath              string `output:"paid-path"`
	ReusedCheckURL        string `output:"reused-check-url"`
	Image                 string `output:"image"`
	Attempts              string `output:"attempts"`
	RejectedCostUSD       string `output:"rejected-cost-usd"`
	RejectedAttempts      string `output:"rejected-attempts"` // for cleanup's run total
	RetainedPodIDs        string `output:"retained-pod-ids"`
	RetentionArtifactName string `output:"retention-artifact-name"`
	RunnerLabel           string `output:"runner-label"`
	GPUType               string `output:"gpu-type"`
	Candidate             string `output:"candidate"`
	Tier                  string `output:"tier"`
	PricePerHour          string `output:"price-per-hour"`
	StartupSeconds        string `output:"startup-seconds"`
	StartedAt             string `output:"started-at"`
	// PodID is the accepted pod, left unwritten without one: the id
	// published at creation must then stay for cleanup.
	PodID string `output:"pod-id,omitempty"`
}

// Outputs are the action outputs of a result (also written on failure, so the
// cleanup and gate steps see what was spent).
func (r Result) Outputs() Outputs {
	known, unknown := r.RejectedCost()
	rejected := strings.TrimPrefix(known.USD.Format(money.Fine), "$")
	if unknown > 0 {
		rejected += "+unknown"
	}
	out := Outputs{
		PaidPath:              string(r.Decision),
		ReusedCheckURL:        r.ReusedCheckURL,
		Image:                 r.Image,
		Attempts:              strconv.Itoa(len(r.Attempts)),
		RejectedCostUSD:       rejected,
		RejectedAttempts:      cost.FormatAttempts(r.rejected()),
		RetainedPodIDs:        strings.Join(r.RetainedPodIDs, ","),
		RetentionArtifactName: r.RetentionArtifact,
	}
	if a := r.Accepted; a != nil {
		out.PodID, out.RunnerLabel, out.GPUType = a.PodID, a.RunnerLabel, a.GPU
		out.Candidate, out.Tier = a.Candidate, a.Tier
		if a.Price.Known {
			out.PricePerHour = strconv.FormatFloat(a.Price.PerHour.Dollars(), 'f', -1, 64)
		}
		out.StartupSeconds = strconv.FormatInt(a.StartupSeconds, 10)
		if !a.StartedAt.IsZero() {
			out.StartedAt = a.StartedAt.UTC().Format("2006-01-02T15:04:05Z07:00")
		}
	}
	return out
}

// rejected are the attempts rejected-cost-usd sums, in order: what cleanup
// adds to the accepted pod's cost for the run total.
func (r Result) rejected() []cost.Attempt {
	var out []cost.Attempt
	for _, a := range r.Attempts {
		if a.Outcome == cost.OutcomeRejected {
			out = append(out, a)
		}
	}
	return out
}

// Summary renders the job summary: the decision, the accepted pod, every
// attempt with its reason and cost, the plan and its worst case, warnings.
func (r Result) Summary(runErr error) string {
	var b strings.Builder
	b.WriteString("## RunPod GPU provision\n\n")
	switch {
	case r.Decision == DecisionReused:
		fmt.Fprintf(&b, "**Reused**: this tested ref already passed. No pod was created.\n\nEvidence: %s\n", r.ReusedCheckURL)
		return b.String()
	case r.Decision == DecisionSkipped:
		b.WriteString("**Skipped**: the pull request carries `gpu-validated-locally`; a maintainer's own GPU stands in, and no further pod is paid for.\n\n")
	case r.Accepted != nil:
		a := r.Accepted
		fmt.Fprintf(&b, "**Accepted** `%s` on **%s** (%s, tier %s) at **%s**, runner label `%s`, online %d s after the pod started, after %d attempt(s).\n\n",
			a.PodID, a.GPU, a.Candidate, a.Tier, a.Price, a.RunnerLabel, a.StartupSeconds, len(r.Attempts))
	case runErr != nil:
		fmt.Fprintf(&b, "**Failed**: %s\n\n", runErr)
	}
	if r.Image != "" {
		fmt.Fprintf(&b, "Runner image: `%s`\n\n", r.Image)
	}
	if len(r.Attempts) > 0 {
		table := mdtable.New("#", "candidate", "GPU", "pod", "$/h", "outcome", "reason", "paid s", "cost")
		for _, a := range r.Attempts {
			seconds, dollars := a.Seconds.String(), a.Dollars().String()
			if a.Outcome == cost.OutcomeAccepted {
				// Its cost so far; cleanup reports the same pod's cost to deletion.
				seconds, dollars = seconds+" to acceptance", dollars+" to acceptance"
			}
			table.Row(strconv.Itoa(a.Number), mdtable.Cell(a.Candidate), mdtable.Cell(a.GPU), mdtable.Cell(orDash(a.PodID)),
				priceCell(a.Price), string(a.Outcome), mdtable.Cell(orDash(a.Reason)), seconds, dollars)
		}
		b.WriteString(table.String())
		known, unknown := r.RejectedCost()
		fmt.Fprintf(&b, "\nRejected candidates cost %s", known)
		if unknown > 0 {
			fmt.Fprintf(&b, " plus %d with unknown cost", unknown)
		}
		b.WriteString(".\n")
	}
	if len(r.RetainedPodIDs) > 0 {
		ids := append([]string(nil), r.RetainedPodIDs...)
		sort.Strings(ids)
		fmt.Fprintf(&b, "\n**Kept for inspection (still billing):** %s\n", strings.Join(ids, ", "))
		b.WriteString(keptSummary(r.Kept))
	}
	if r.Budget != nil {
		fmt.Fprintf(&b, "\nBudget used: %s.\n", r.Budget)
		if r.BudgetRecheck != "" {
			fmt.Fprintf(&b, "Budget %s.\n", r.BudgetRecheck)
		}
	}
	if len(r.Plan.Candidates) > 0 {
		fmt.Fprintf(&b, "\n<details><summary>Plan (worst-case spend %s)</summary>\n\n%s%s\n</details>\n", r.WorstCase, r.Plan.Table(), volumeLine(r.Plan))
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(&b, "\n> [!WARNING]\n> %s\n", w)
	}
	fmt.Fprintf(&b, "\n%s\n", cost.Disclaimer)
	return b.String()
}

func priceCell(p cost.Price) string {
	if !p.Known {
		return "unknown"
	}
	return strings.TrimPrefix(p.PerHour.Hourly().Format(money.Cents), "$")
}

// PhaseObserver is an Observer that can fold a long phase of a run (the plan,
// one attempt, the deletions on cancel) into one collapsible block; Run uses
// it when its Observer has it. Phase returns the function that ends the block.
type PhaseObserver interface {
	Phase(title string) (end func())
}

// phase opens a block on a PhaseObserver; other observers hear nothing.
func (r *run) phase(format string, args ...any) (end func()) {
	if p, ok := r.deps.Observer.(PhaseObserver); ok {
		return p.Phase(fmt.Sprintf(format, args...))
	}
	return func() {}
}

// Logger is where a run's log goes: the action's *actionio.IO, or a test's log.
type Logger interface {
	Infof(format string, args ...any)
	// Phase folds a long phase into one collapsible block and returns the
	// function that ends it.
	Phase(title string) (end func())
}

// LogObserver reports a run to a log: plain log lines, the structured attempt
// lines the cost history reads, and each phase as a block, so the log reads
// as plan, attempt 1, attempt 2. Publishing each pod id the moment it exists
// is the action's (actions/provision), which wraps this observer: PodCreated
// does nothing here.
type LogObserver struct{ Log Logger }

// Logf writes one plain log line.
func (o LogObserver) Logf(format string, args ...any) { o.Log.Infof(format, args...) }

// Phase opens a block of the log.
func (o LogObserver) Phase(title string) (end func()) { return o.Log.Phase(title) }

// PodCreated does nothing: a log has no outputs.
func (o LogObserver) PodCreated(string) {}

// AttemptDone writes the attempt's structured line (cost.AttemptLine).
func (o LogObserver) AttemptDone(a cost.Attempt) { o.Log.Infof("%s", cost.AttemptLine(a).Format()) }
