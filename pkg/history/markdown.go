package history

import (
	"fmt"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/mdtable"
	"github.com/org/runpod-gpu/pkg/money"
)

const (
	// maxListed bounds the unknowns and warnings the Markdown lists; the
	// JSON report has all of them.
	maxListed = 50
	// maxAttemptRows bounds the attempt table, keeping a job summary well
	// under GitHub's 1 MiB.
	maxAttemptRows = 200
)

// Markdown renders the report for a job summary or a file. GitHub renders
// the Mermaid charts.
func (r *Report) Markdown() string {
	var b strings.Builder
	b.WriteString("## RunPod GPU cost history\n\n")
	b.WriteString("> " + r.Disclaimer + "\n\n")
	if r.Totals.Attempts == 0 {
		b.WriteString("No workflow attempts in the saved evidence.\n")
		return b.String()
	}
	r.writeTotals(&b)
	r.writeBilling(&b)
	r.writeGPUs(&b)
	r.writeRightSizing(&b)
	r.writeWeeks(&b)
	r.writeTriggers(&b)
	r.writeConclusions(&b)
	r.writeReused(&b)
	r.writeStages(&b)
	r.writeServerless(&b)
	writeList(&b, "Unknowns", r.Unknowns)
	writeList(&b, "Warnings", r.Warnings)
	r.writeAttempts(&b)
	return b.String()
}

func (r *Report) writeTotals(b *strings.Builder) {
	t := r.Totals
	// The headline leads with the amount: what a reader opens the report for.
	what := "GPU pods"
	if t.ServerlessAttempts > 0 {
		what = "GPU pods and Serverless jobs"
	}
	fmt.Fprintf(b, "**%s** spent on %s from %s to %s (UTC), in %d workflow attempts.\n\n", t.Spend, what, r.FirstDay, r.LastDay, t.Attempts)
	attempts := fmt.Sprintf("%d paid, %d reused an earlier gate, %d without GPU work, %d unknown (evidence missing)",
		t.Paid, t.Reused, t.NoGPUWork, t.UnknownAttempts)
	pods := fmt.Sprintf("%d: %d accepted, %d rejected; %d with unknown cost", t.Pods, t.Accepted, t.Rejected, t.UnknownCostPods)
	if t.Duplicates > 0 {
		pods += fmt.Sprintf("; %d duplicate rows counted once", t.Duplicates)
	}
	tb := mdtable.New("", "")
	for _, row := range [][2]string{
		{"Attempts", attempts},
		{"Attempts with a download still missing (retried by the next collection)", fmt.Sprint(t.Incomplete)},
		{"Pods", pods},
		{"Spend", t.Spend.String()},
		{"Accepted pods", t.AcceptedSpend.String()},
		{"Rejected candidates", t.RejectedSpend.String()},
	} {
		tb.Row(row[0], row[1])
	}
	if r.Serverless != nil {
		tb.Row("Serverless jobs", fmt.Sprintf("%s in %d attempts (see Serverless lane)", r.Serverless.Spend, r.Serverless.Attempts))
	}
	b.WriteString(tb.String() + "\n")
}

func (r *Report) writeGPUs(b *strings.Builder) {
	b.WriteString("### Spend per GPU\n\n")
	if len(r.GPUs) == 0 {
		b.WriteString("No pods.\n\n")
		return
	}
	tb := mdtable.New("GPU", "Pods", "Accepted", "Rejected", "Unknown-cost pods", "Spend", "Rejected spend", "Spend per accepted pod").
		AlignRight(1, 2, 3, 4, 5, 6, 7)
	labels, values := make([]string, 0, len(r.GPUs)), make([]money.Amount, 0, len(r.GPUs))
	unknown := 0
	for _, g := range r.GPUs {
		perPod := "n/a (none accepted)"
		if g.SpendPerAcceptedPod != nil {
			perPod = g.SpendPerAcceptedPod.String()
		}
		tb.Row(cell(g.GPU), fmt.Sprint(g.Pods), fmt.Sprint(g.Accepted), fmt.Sprint(g.Rejected),
			fmt.Sprint(g.UnknownCostPods), g.Spend.String(), g.RejectedSpend.String(), perPod)
		labels, values = append(labels, strings.TrimPrefix(g.GPU, "NVIDIA ")), append(values, g.Spend.Known)
		unknown += g.UnknownCostPods
	}
	b.WriteString(tb.String())
	b.WriteString("\nSpend per accepted pod divides all of a GPU's spend, rejected candidates included, by its accepted pods.\n\n")
	writeChart(b, "Known spend per GPU (USD)", labels, values, unknown)
}

func (r *Report) writeWeeks(b *strings.Builder) {
	b.WriteString("### Spend per week\n\n")
	tb := mdtable.New("Week", "Attempts", "Pods", "Spend").AlignRight(1, 2, 3)
	labels, values := make([]string, 0, len(r.Weeks)), make([]money.Amount, 0, len(r.Weeks))
	unknown := 0
	for _, w := range r.Weeks {
		tb.Row(w.Week, fmt.Sprint(w.Attempts), fmt.Sprint(w.Pods), w.Spend.String())
		labels, values = append(labels, w.Week), append(values, w.Spend.Known)
		unknown += w.Spend.Unknown
	}
	b.WriteString(tb.String() + "\n")
	writeChart(b, "Known spend per week (USD)", labels, values, unknown)
}

func (r *Report) writeTriggers(b *strings.Builder) {
	b.WriteString("### Automatic runs and manual confirmations\n\n")
	tr := r.Triggers
	type row struct {
		name  string
		group TriggerGroup
	}
	rows := []row{
		{"Automatic, first run of a tested ref", tr.AutomaticFirst},
		{"Automatic, repeat of a tested ref already run", tr.AutomaticRepeat},
		{"Manual confirmation", tr.Manual},
	}
	if tr.UnknownRef.Attempts > 0 {
		rows = append(rows, row{"Automatic, tested ref unknown", tr.UnknownRef})
	}
	tb := mdtable.New("Paid attempts", "Attempts", "Tested refs", "Spend").AlignRight(1, 2, 3)
	for _, r := range rows {
		tb.Row(r.name, fmt.Sprint(r.group.Attempts), fmt.Sprint(r.group.TestedRefs), r.group.Spend.String())
	}
	b.WriteString(tb.String())
	b.WriteString("\n#### Tested refs the paid path ran for more than once\n\n")
	if len(r.RepeatedRefs) == 0 {
		b.WriteString("None.\n\n")
		return
	}
	repeated := mdtable.New("Tested ref", "Automatic", "Manual", "Reused", "Spend").AlignRight(1, 2, 3, 4)
	for _, s := range r.RepeatedRefs {
		repeated.Row("`"+shortRef(s.TestedRef)+"`", fmt.Sprint(s.Automatic), fmt.Sprint(s.Manual), fmt.Sprint(s.Reused), s.Spend.String())
	}
	b.WriteString(repeated.String() + "\n")
}

func (r *Report) writeConclusions(b *strings.Builder) {
	b.WriteString("### Paid attempts by GPU job conclusion\n\n")
	tb := mdtable.New("GPU job", "Paid attempts", "Pods", "Spend").AlignRight(1, 2, 3)
	for _, g := range r.Conclusions {
		tb.Row(string(g.Conclusion), fmt.Sprint(g.Attempts), fmt.Sprint(g.Pods), g.Spend.String())
	}
	b.WriteString(tb.String())
	b.WriteString("\nSpend includes each attempt's rejected candidates. Unknown: no cost report says how the GPU job ended " +
		"(one written before reports carried it, none at all, or a job that had not finished).\n\n")
}

func (r *Report) writeReused(b *strings.Builder) {
	b.WriteString("### Reused gates\n\n")
	if len(r.ReusedGates) == 0 {
		b.WriteString("No attempt reused an earlier gate.\n\n")
		return
	}
	fmt.Fprintf(b, "%d attempts reused an earlier gate for their tested ref and created no pod.\n\n", len(r.ReusedGates))
	tb := mdtable.New("Attempt", "Day", "Tested ref")
	for _, g := range r.ReusedGates {
		tb.Row(attemptLink(g.RunID, g.Attempt, g.URL), g.Day, "`"+shortRef(g.TestedRef)+"`")
	}
	b.WriteString(tb.String() + "\n")
}

func (r *Report) writeStages(b *strings.Builder) {
	b.WriteString("### Paid time by stage (accepted pods)\n\n")
	s := r.Stages
	if s.Pods == 0 {
		fmt.Fprintf(b, "No accepted pod has a stage breakdown (%d accepted pods without one).\n\n", s.AcceptedWithout)
		return
	}
	tb := mdtable.New("Stage", "Seconds", "Spend").AlignRight(1, 2)
	for _, k := range s.Kinds {
		tb.Row(string(k.Kind), fmt.Sprint(k.Seconds), k.Spend.String())
	}
	b.WriteString(tb.String())
	fmt.Fprintf(b, "\n%d accepted pods have a stage breakdown; %d have none and are in no row.\n\n", s.Pods, s.AcceptedWithout)
}

func (r *Report) writeAttempts(b *strings.Builder) {
	fmt.Fprintf(b, "<details><summary>Attempts (%d)</summary>\n\n", len(r.Attempts))
	tb := mdtable.New("Attempt", "Day", "Trigger", "Tested ref", "Decision", "GPU job", "Pods", "Spend", "Evidence").AlignRight(6, 7)
	for i, a := range r.Attempts {
		if i == maxAttemptRows {
			break
		}
		evidence := "complete"
		if !a.EvidenceComplete {
			evidence = "incomplete"
		}
		ref := "unknown"
		if a.TestedRef != "" {
			ref = "`" + shortRef(a.TestedRef) + "`"
		}
		job := "n/a"
		if a.Decision == DecisionPaid {
			job = string(a.JobConclusion.OrUnknown())
		}
		tb.Row(attemptLink(a.RunID, a.Attempt, a.URL), a.when().UTC().Format(time.DateOnly), string(a.Trigger), ref,
			string(a.Decision), cell(job), fmt.Sprint(len(a.Pods)), a.Spend().String(), evidence)
	}
	b.WriteString(tb.String())
	if len(r.Attempts) > maxAttemptRows {
		fmt.Fprintf(b, "\n… and %d more in the JSON report.\n", len(r.Attempts)-maxAttemptRows)
	}
	b.WriteString("\n</details>\n")
}

// writeChart draws a Mermaid bar chart of known amounts. The y axis starts
// at 0: Mermaid otherwise starts it at the smallest value, whose bar then
// looks empty, and bars are read as proportions.
func writeChart(b *strings.Builder, title string, labels []string, values []money.Amount, unknown int) {
	if len(values) == 0 {
		return
	}
	top := money.Amount(0)
	for _, v := range values {
		top = max(top, v)
	}
	if top <= 0 {
		top = money.Dollar // an axis needs a range even when every known amount is 0
	}
	quoted := make([]string, len(labels))
	for i, l := range labels {
		quoted[i] = `"` + chartLabel(l) + `"`
	}
	numbers := make([]string, len(values))
	for i, v := range values {
		numbers[i] = chartValue(v)
	}
	fmt.Fprintf(b, "```mermaid\nxychart-beta\n    title %q\n    x-axis [%s]\n    y-axis \"USD\" 0 --> %s\n    bar [%s]\n```\n\n",
		title, strings.Join(quoted, ", "), chartValue(top), strings.Join(numbers, ", "))
	if unknown > 0 {
		fmt.Fprintf(b, "The chart shows known amounts only; %d unknown amount(s) are not in it.\n\n", unknown)
	}
}

func writeList(b *strings.Builder, title string, items []string) {
	fmt.Fprintf(b, "### %s\n\n", title)
	if len(items) == 0 {
		b.WriteString("None.\n\n")
		return
	}
	for i, item := range items {
		if i == maxListed {
			fmt.Fprintf(b, "- … and %d more in the JSON report.\n", len(items)-maxListed)
			break
		}
		b.WriteString("- " + cell(item) + "\n")
	}
	b.WriteString("\n")
}

func attemptLink(runID int64, attempt int, url string) string {
	text := fmt.Sprintf("%d/%d", runID, attempt)
	if !strings.HasPrefix(url, "https://") {
		return text
	}
	return "[" + text + "](" + url + ")"
}

// shortRef shows a commit SHA as GitHub does in lists.
func shortRef(ref string) string {
	if len(ref) > 12 {
		return ref[:12]
	}
	return ref
}

// cell makes outside text safe in one Markdown table cell or list item.
func cell(s string) string { return mdtable.Cell(s) }

// chartLabel keeps a label from ending the Mermaid string or list it is in.
func chartLabel(s string) string {
	return strings.Join(strings.Fields(strings.NewReplacer(`"`, "", "[", "(", "]", ")").Replace(s)), " ")
}
