package provision

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/org/runpod-gpu/pkg/actionio"
	"github.com/org/runpod-gpu/pkg/cost"
)

// Outputs are the action outputs of a result (also written on failure, so the
// cleanup and gate steps see what was spent). pod-id is present only for an
// accepted pod: otherwise the id published at creation must stay for cleanup.
func (r Result) Outputs() map[string]string {
	known, unknown := r.RejectedCost()
	rejected := fmt.Sprintf("%.4f", known.USD)
	if unknown > 0 {
		rejected += "+unknown"
	}
	out := map[string]string{
		"paid-path":               string(r.Decision),
		"reused-check-url":        r.ReusedCheckURL,
		"image":                   r.Image,
		"attempts":                strconv.Itoa(len(r.Attempts)),
		"rejected-cost-usd":       rejected,
		"rejected-attempts":       cost.FormatAttempts(r.rejected()), // for cleanup's run total
		"retained-pod-ids":        strings.Join(r.RetainedPodIDs, ","),
		"retention-artifact-name": r.RetentionArtifact,
		"runner-label":            "",
		"gpu-type":                "",
		"candidate":               "",
		"tier":                    "",
		"price-per-hour":          "",
		"startup-seconds":         "",
		"started-at":              "",
	}
	if a := r.Accepted; a != nil {
		out["pod-id"], out["runner-label"], out["gpu-type"] = a.PodID, a.RunnerLabel, a.GPU
		out["candidate"], out["tier"] = a.Candidate, a.Tier
		if a.Price.Known {
			out["price-per-hour"] = strconv.FormatFloat(a.Price.PerHour, 'f', -1, 64)
		}
		out["startup-seconds"] = strconv.FormatInt(a.StartupSeconds, 10)
		if !a.StartedAt.IsZero() {
			out["started-at"] = a.StartedAt.UTC().Format("2006-01-02T15:04:05Z07:00")
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
		b.WriteString("| # | candidate | GPU | pod | $/h | outcome | reason | paid s | cost |\n|---|---|---|---|---|---|---|---|---|\n")
		for _, a := range r.Attempts {
			seconds, dollars := a.Seconds.String(), a.Dollars().String()
			if a.Outcome == cost.OutcomeAccepted {
				// Its cost so far; cleanup reports the same pod's cost to deletion.
				seconds, dollars = seconds+" to acceptance", dollars+" to acceptance"
			}
			fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", a.Number, a.Candidate, a.GPU, orDash(a.PodID),
				priceCell(a.Price), a.Outcome, escapeCell(orDash(a.Reason)), seconds, dollars)
		}
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
	}
	if len(r.Plan.Candidates) > 0 {
		fmt.Fprintf(&b, "\n<details><summary>Plan (worst-case spend %s)</summary>\n\n%s\n</details>\n", r.WorstCase, r.Plan.Table())
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
	return strconv.FormatFloat(p.PerHour, 'f', 2, 64)
}

func escapeCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

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

// ActionObserver reports a run to the Actions runner: plain log lines, the
// structured attempt lines the cost history reads, the pod-id output the
// moment a pod exists (the last one written wins: the accepted pod), and each
// phase as a ::group:: block, so the log reads as plan, attempt 1, attempt 2.
func ActionObserver(io *actionio.IO) Observer { return &actionObserver{io: io} }

type actionObserver struct {
	io      *actionio.IO
	created []string
}

func (o *actionObserver) Logf(format string, args ...any) { o.io.Infof(format, args...) }

func (o *actionObserver) Phase(title string) (end func()) { return o.io.Phase(title) }

func (o *actionObserver) PodCreated(podID string) {
	o.created = append(o.created, podID)
	// Published at once so a failure-path cleanup can find the pod even if
	// this process dies before it finishes.
	err := errors.Join(o.io.SetOutput("pod-id", podID), o.io.SetOutput("created-pod-ids", strings.Join(o.created, ",")))
	if err != nil {
		o.io.Warningf("could not publish pod id %s: %v", podID, err)
	}
}

func (o *actionObserver) AttemptDone(a cost.Attempt) { o.io.Infof("%s", cost.AttemptLine(a).Format()) }
