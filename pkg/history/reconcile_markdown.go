package history

import (
	"fmt"
	"strings"

	"github.com/org/runpod-gpu/pkg/mdtable"
)

// writeBilling renders the reconciliation: the totals, a row per day of the
// runs and per run, and every finding by name.
func (r *Report) writeBilling(b *strings.Builder) {
	rec := r.Billing
	if rec == nil {
		return
	}
	b.WriteString("### Estimated against billed\n\n")
	if rec.Unreadable != "" {
		fmt.Fprintf(b, "RunPod's billing could not be read, so nothing here is reconciled: %s\n\n", cell(rec.Unreadable))
		return
	}
	t := rec.Totals
	fmt.Fprintf(b, "RunPod billed **%s** for the lane's %d pod(s) and endpoint(s) that %s estimated (%s); "+
		"%s more for pods and endpoints the lane never recorded. Billing for %s (UTC), read at %s; drift above %s (and a cent) is a warning.\n\n",
		usd(t.BilledUSD), t.Count, t.Estimated, t.describe(), usd(t.UntrackedUSD), rec.Window, rec.ReadAt, percent(rec.Threshold))
	if rec.NotInBill > 0 {
		fmt.Fprintf(b, "%d attempt(s) outside the billing's window are not reconciled.\n\n", rec.NotInBill)
	}
	days := mdtable.New("Day", "Pods and endpoints", "Estimated", "Billed", "Drift", "Untracked billed").AlignRight(1, 2, 3, 4, 5)
	for _, d := range rec.Days {
		days.Row(d.Day, fmt.Sprint(d.Count), d.Estimated.String(), usd(d.BilledUSD), driftCell(d), usd(d.UntrackedUSD))
	}
	b.WriteString("Per day of the runs (untracked charges on the day billed):\n\n" + days.String() + "\n")
	runs := mdtable.New("Run", "Day", "Pods and endpoints", "Estimated", "Billed", "Drift").AlignRight(2, 3, 4, 5)
	for i, run := range rec.Runs {
		if i == maxAttemptRows {
			break
		}
		ids := make([]string, 0, len(run.Resources))
		for _, res := range run.Resources {
			ids = append(ids, mdtable.Code(res.ID))
		}
		runs.Row(attemptLink(run.RunID, run.Attempt, run.URL), run.Day, strings.Join(ids, " "), run.Estimated.String(), usd(run.BilledUSD), driftCell(run.DriftRow))
	}
	b.WriteString("Per run:\n\n" + runs.String() + "\n")
	if len(rec.Runs) > maxAttemptRows {
		fmt.Fprintf(b, "… and %d more runs in the JSON report.\n\n", len(rec.Runs)-maxAttemptRows)
	}
	rec.writeVolumes(b) // volume.go
	writeList(b, "Billing findings", rec.Findings)
}

// driftCell shows a row's drift, marking one above the threshold.
func driftCell(d DriftRow) string {
	s := d.describe()
	if d.Over {
		s = "**" + s + "** ⚠"
	}
	return s
}
