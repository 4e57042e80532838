package gate

// A gate over several pods: the tiers of a matrix lane (matrix_tiers), each
// with its own pod and GPU job, and a pod lost to its host with the job's
// re-run on another host. Cleanup reads what each pod's GPU job did and what
// it cost (lanetiers.Result rows, from GitHub's job list by the pod's
// runner); the gate passes only when every tier the lane tests passed, shows
// a row per pod, and publishes each tier's own check (its name and key) for
// the tier's reuse by tree.

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/lanetiers"
)

// TierRequest is the lane's pods as the gate sees them.
type TierRequest struct {
	// Expected are the tiers the lane tests (provision's record): each must
	// pass. "" alone is a lane of one pod on any reviewed tier.
	Expected []string
	// Rows are cleanup's tier-results: a row per pod and per tier without one.
	Rows []lanetiers.Result
	// RerunJobResult is the re-run GPU job's needs.<job>.result ("" when
	// there is no re-run job, or it was never asked for).
	RerunJobResult JobResult
}

// tiered reports whether the gate is one over the lane's rows: a matrix,
// or a lane whose pod was lost to its host.
func (t TierRequest) tiered() bool {
	if len(t.Expected) > 1 || (len(t.Expected) == 1 && t.Expected[0] != "") {
		return true
	}
	for _, r := range t.Rows {
		if r.Outcome == lanetiers.OutcomeHostFault || r.Rerun {
			return true
		}
	}
	return false
}

// resolveTiers decides a lane's gate from its rows: paid when every tier the
// lane tests passed (reused when each passed earlier), else failed, naming
// each tier that did not and why. GitHub's own results of the GPU jobs must
// agree: without a host fault the GPU jobs' result must be success (every
// job of the matrix succeeded), and with one the re-run's.
func (r ConcludeRequest) resolveTiers() (gatecheck.Kind, string) {
	if len(r.Tiers.Expected) == 0 {
		// Rows with no tier to hold them to: nothing says any tier passed.
		return gatecheck.KindFailed, fmt.Sprintf("provision's record of the tiers the lane tests is missing (%d row(s) from cleanup, no tiers): nothing shows a tier passed", len(r.Tiers.Rows))
	}
	final := map[string]lanetiers.Result{}
	for _, row := range lanetiers.Final(r.Tiers.Rows) {
		final[row.Tier] = row
	}
	var failing, notes []string
	reused, fault := 0, false
	for _, row := range r.Tiers.Rows {
		fault = fault || row.Outcome == lanetiers.OutcomeHostFault
	}
	for _, tier := range r.Tiers.Expected {
		row, ok := final[tier]
		switch {
		case !ok:
			failing = append(failing, fmt.Sprintf("%s: no result (cleanup did not report it)", label(tier)))
		case !row.Passed():
			failing = append(failing, fmt.Sprintf("%s %s: %s", label(tier), row.Outcome, cmp.Or(row.Reason, row.Outcome)))
		case row.Outcome == lanetiers.OutcomeReused:
			reused++
		}
		if note := rerunNote(tier, r.Tiers.Rows); note != "" {
			notes = append(notes, note)
		}
	}
	switch ran := len(r.Tiers.Expected) - reused; {
	case len(failing) > 0:
	case ran > 0 && !fault && r.GPUJobResult != JobSuccess:
		failing = append(failing, fmt.Sprintf("the GPU jobs' result is %q, not success", cmp.Or(string(r.GPUJobResult), "unknown")))
	case ran > 0 && fault && r.Tiers.RerunJobResult != JobSuccess && r.GPUJobResult != JobSuccess:
		failing = append(failing, fmt.Sprintf("the re-run GPU jobs' result is %q, not success", cmp.Or(string(r.Tiers.RerunJobResult), "unknown")))
	}
	what := joinNonEmpty(strings.Join(notes, "; "))
	if len(failing) > 0 {
		return gatecheck.KindFailed, joinNonEmpty(strings.Join(failing, "; "), what)
	}
	if reused == len(r.Tiers.Expected) {
		return gatecheck.KindReused, joinNonEmpty(fmt.Sprintf("every tier (%d) passed earlier for the tested tree", reused), what)
	}
	return gatecheck.KindPaid, joinNonEmpty(fmt.Sprintf("every tier passed (%d tested now, %d reused)", len(r.Tiers.Expected)-reused, reused), what)
}

// rerunNote says what became of a tier's pods lost to their hosts: "host
// fault, re-run on <GPU> in <data center>" and the re-run's outcome, then
// the lost pods.
func rerunNote(tier string, rows []lanetiers.Result) string {
	var lost []string
	for _, row := range rows {
		if row.Tier != tier {
			continue
		}
		gone := func() string { return "lost: " + strings.Join(lost, "; ") }
		switch {
		case row.Outcome == lanetiers.OutcomeHostFault:
			lost = append(lost, fmt.Sprintf("pod %s on %s, %s", row.PodID, lanetiers.Where(row.GPUType, row.DataCenter), row.Reason))
		case row.Rerun && len(lost) > 0:
			return fmt.Sprintf("%s: host fault, re-run on %s: %s (%s)", label(tier), lanetiers.Where(row.GPUType, row.DataCenter), row.Outcome, gone())
		case len(lost) > 0 && row.Outcome == lanetiers.OutcomeNoPod:
			return fmt.Sprintf("%s: host fault, %s (%s)", label(tier), row.Reason, gone())
		}
	}
	if len(lost) > 0 {
		return fmt.Sprintf("%s: host fault, not re-run (lost: %s)", label(tier), strings.Join(lost, "; "))
	}
	return ""
}

func label(tier string) string { return lanetiers.Result{Tier: tier}.Label() }

// tierEvidence is the request's evidence with the lane's rows, when the gate
// is over them, and a reused tier's gate as the evidence of an all-reused one.
func (r ConcludeRequest) tierEvidence() gatecheck.Evidence {
	e := r.Evidence
	if r.Lane == LaneServerless || !r.Tiers.tiered() {
		return e
	}
	e.Tiers = tierRows(r.Tiers.Rows)
	for _, row := range r.Tiers.Rows {
		if e.ReusedCheckURL == "" && row.Outcome == lanetiers.OutcomeReused {
			e.ReusedCheckURL = row.ReusedCheckURL
		}
	}
	return e
}

// tierRows are the rows as the check shows them.
func tierRows(rows []lanetiers.Result) []gatecheck.TierRow {
	out := make([]gatecheck.TierRow, 0, len(rows))
	for _, r := range rows {
		result := r.Outcome
		if r.Rerun {
			result += " (re-run)"
		}
		out = append(out, gatecheck.TierRow{Tier: r.Tier, GPU: r.GPUType, DataCenter: r.DataCenter,
			PricePerHour: r.PricePerHour, PaidSeconds: r.PaidSeconds, Result: result, Reason: r.Reason})
	}
	return out
}

// TierCheck is a tier's own check a matrix lane published.
type TierCheck struct {
	Tier string
	Kind gatecheck.Kind
	URL  string
	Err  error
}

// publishTierChecks publishes each tested tier's own check (paid or failed,
// its key the tier's): what a later lane's provision reuses that tier by.
// Reused tiers publish nothing new; a failure to publish only costs reuse.
func publishTierChecks(ctx context.Context, gh Publisher, r ConcludeRequest, e gatecheck.Evidence) []TierCheck {
	var out []TierCheck
	for _, row := range lanetiers.Final(r.Tiers.Rows) {
		if row.Tier == "" || row.PodID == "" || row.Outcome == lanetiers.OutcomeReused {
			continue
		}
		te := gatecheck.Evidence{HeadSHA: e.HeadSHA, TestedRef: e.TestedRef, CheckName: gatecheck.TierCheckName(e.CheckName, row.Tier),
			RunID: e.RunID, RunURL: e.RunURL, CompletedAt: e.CompletedAt, Tiers: tierRows([]lanetiers.Result{row}),
			Kind: gatecheck.KindFailed, Reason: row.Reason}
		if row.Passed() {
			te.Kind, te.Reason = gatecheck.KindPaid, ""
		}
		if e.Key != nil {
			k := e.Key.ForTier(row.Tier)
			te.Key = &k
		}
		run, err := gatecheck.Publish(ctx, gh, te)
		out = append(out, TierCheck{Tier: row.Tier, Kind: te.Kind, URL: run.GetHTMLURL(), Err: err})
	}
	return out
}
