package cost

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/org/runpod-gpu/pkg/mdtable"
	"github.com/org/runpod-gpu/pkg/wire"
)

// Disclaimer opens every report: these figures are estimates, not invoices.
const Disclaimer = "Estimates, not invoices: paid seconds run from the provider's start to confirmed deletion " +
	"and are priced at the hourly rate captured while the pod ran. RunPod's bill is authoritative."

// Report is the cost of one run's GPU work: the accepted pod's paid window by
// stage, and the rejected candidates paid for before it. An empty PodID means
// no pod was accepted (for example, the attempts were exhausted).
type Report struct {
	PodID string
	GPU   string
	Tier  string
	// Where the accepted pod ran, from its record before deletion, for the
	// lane's reputation; "" when unknown (no record, or an older report).
	Cloud      string
	DataCenter string
	Driver     string // the host's CUDA level
	Price      Price
	Window     Window
	Stages     []Stage   // from Stages; empty when the breakdown is unavailable
	Rejected   []Attempt // rejected candidates, reported separately from the accepted pod
	Notes      []string  // caller's remarks, e.g. why the breakdown is missing
	// JobConclusion is how the GPU job on the accepted pod ended; "" when the
	// writer does not say (the reaper knows no job), which reads back as unknown.
	JobConclusion Conclusion
	// Host is what the accepted pod showed about its host beyond its proof:
	// HostFailed when the pod was lost to its host while its GPU job ran (a
	// host fault), "" when nothing went wrong with it (its proof passed, so
	// the reputation counts it as worked).
	Host HostVerdict
	// ProvisionRejected says Rejected includes provision's rejected candidates
	// (cleanup was given its rejected-attempts output). Without it (the
	// watchdog, a caller that does not pass them) Rejected holds only the pods
	// the writer found itself, and the report says the run total leaves
	// provision's candidates out rather than claiming there were none.
	ProvisionRejected bool
}

// Conclusion is how the GPU job on the accepted pod ended; unknown when the
// report does not say (an older artifact, a reaper's report).
func (r Report) Conclusion() Conclusion { return r.JobConclusion.OrUnknown() }

// Dollars estimates the accepted pod's cost; unknown when its window or price is.
func (r Report) Dollars() Money { return Dollars(r.Window, r.Price) }

// RejectedDollars sums the rejected candidates' costs; unknown if any is.
func (r Report) RejectedDollars() Money {
	sum, _, _ := sumMoney(r.rejectedAmounts()...)
	return sum
}

// Total is the accepted pod's cost plus the rejected candidates'; unknown if any part is.
func (r Report) Total() Money {
	sum, _, _ := sumMoney(r.totalAmounts()...)
	return sum
}

func (r Report) rejectedAmounts() []Money {
	amounts := make([]Money, 0, len(r.Rejected))
	for _, a := range r.Rejected {
		amounts = append(amounts, a.Dollars())
	}
	return amounts
}

func (r Report) totalAmounts() []Money {
	amounts := r.rejectedAmounts()
	if r.accepted() {
		amounts = append(amounts, r.Dollars())
	}
	return amounts
}

// accepted reports whether the report covers an accepted pod.
func (r Report) accepted() bool {
	return r.PodID != "" || r.Window.Start.Known() || r.Window.End.Known()
}

// Validate checks the window, that stages are well formed and sum exactly to
// the window's seconds, and that each rejected attempt is valid.
func (r Report) Validate() error {
	if err := r.Window.Validate(); err != nil {
		return fieldErr("window", err)
	}
	if r.JobConclusion != "" && !r.JobConclusion.Valid() {
		return fieldErr("jobConclusion", invalid("%q: want %s, %s, %s, %s or %s", r.JobConclusion, ConclusionSuccess,
			ConclusionFailure, ConclusionCancelled, ConclusionSkipped, ConclusionUnknown))
	}
	for i, s := range r.Stages {
		key := fmt.Sprintf("stages[%d]", i)
		if !s.Kind.Valid() {
			return fieldErr(key+".kind", invalid("%q: want %s, %s, %s, %s or %s", s.Kind,
				StageStartup, StageSetup, StageTests, StageCleanup, StageOverhead))
		}
		if s.Seconds < 0 {
			return fieldErr(key+".seconds", invalid("%d: want a non-negative whole number", s.Seconds))
		}
	}
	if len(r.Stages) > 0 {
		window := r.Window.Seconds()
		if !window.Known {
			return fieldErr("stages", fmt.Errorf("%w: the paid window is unknown", ErrStageSum))
		}
		if sum := sumStages(r.Stages); sum != window.N {
			return fieldErr("stages", fmt.Errorf("%w: stages sum to %d s, the window is %d s", ErrStageSum, sum, window.N))
		}
	}
	if r.Host != "" && r.Host != HostWorked && r.Host != HostFailed {
		return fieldErr("host", invalid("%q: want %s, %s or no value", r.Host, HostWorked, HostFailed))
	}
	for i, a := range r.Rejected {
		if err := a.Validate(); err != nil {
			return fieldErr(fmt.Sprintf("rejected[%d]", i), err)
		}
	}
	return nil
}

// unknowns explains each unknown figure, so a reader never mistakes it for zero.
func (r Report) unknowns() []string {
	var notes []string
	if r.accepted() {
		if !r.Window.Start.Known() {
			notes = append(notes, "Paid window start unknown: the pod record had no provider start time "+
				"(createdAt is never used for cost), so the accepted pod's seconds and dollars are unknown.")
		}
		if !r.Window.End.Known() {
			notes = append(notes, "Deletion not confirmed: the paid window has no end, so the accepted pod's "+
				"seconds and dollars are unknown and the pod may still be billing.")
		}
		if !r.Price.Known {
			notes = append(notes, fmt.Sprintf("Hourly price unknown (%s): dollars are unknown, not zero.", r.Price.Source))
		}
	}
	for _, a := range r.Rejected {
		if !a.Dollars().Known {
			notes = append(notes, fmt.Sprintf("Rejected attempt %d (%s): cost unknown (seconds %s, price %s).",
				a.Number, a.Candidate, a.Seconds, a.Price))
		}
	}
	return notes
}

// Markdown renders the report for a job summary.
func (r Report) Markdown() string {
	var b strings.Builder
	b.WriteString("### RunPod GPU cost (estimate)\n\n")
	b.WriteString("> " + Disclaimer + "\n\n")

	if r.accepted() {
		tb := mdtable.New("Accepted pod", "")
		rows := [][2]string{
			{"Pod", orUnknown(r.PodID)},
			{"GPU", orUnknown(r.GPU)},
			{"Tier", orUnknown(r.Tier)},
			{"Price", r.Price.String()},
			{"Paid window", r.Window.Start.String() + " → " + r.Window.End.String()},
			{"Paid seconds (start to deletion)", r.Window.Seconds().String()},
			{"Estimated cost (start to deletion)", r.Dollars().String()},
		}
		if r.Host == HostFailed {
			rows = append(rows, [2]string{"Host", "lost while its GPU job ran (a host fault, counted against the host)"})
		}
		for _, row := range rows {
			tb.Row(row[0], cell(row[1]))
		}
		b.WriteString(tb.String() + "\n")
		r.writeStages(&b)
	} else {
		b.WriteString("No pod was accepted.\n\n")
	}
	r.writeRejected(&b)

	if r.ProvisionRejected {
		fmt.Fprintf(&b, "**Estimated run total** (accepted pod and every rejected candidate): %s\n", atLeast(r.totalAmounts()))
	} else {
		fmt.Fprintf(&b, "**Estimated total** (accepted pod and the pods this step found; provision's rejected candidates are not included, see its summary): %s\n",
			atLeast(r.totalAmounts()))
	}

	notes := append(r.unknowns(), r.Notes...)
	if len(notes) > 0 {
		b.WriteString("\n#### Notes\n\n")
		for _, n := range notes {
			b.WriteString("- " + oneLine(n) + "\n")
		}
	}
	return b.String()
}

func (r Report) writeStages(b *strings.Builder) {
	b.WriteString("#### Paid window by stage\n\n")
	if len(r.Stages) == 0 {
		b.WriteString("Stage breakdown unavailable.\n\n")
		return
	}
	tb := mdtable.New("Kind", "Stage", "Seconds", "Estimated cost").AlignRight(2, 3)
	for _, s := range r.Stages {
		tb.Row(string(s.Kind), cell(s.Name), fmt.Sprint(s.Seconds), KnownSeconds(s.Seconds).At(r.Price).String())
	}
	tb.Row("**Total**", "", fmt.Sprintf("**%d**", sumStages(r.Stages)), "**"+r.Dollars().String()+"**")
	b.WriteString(tb.String() + "\n")
	b.WriteString(r.Gantt())

	var byKind []string
	for _, kind := range []StageKind{StageStartup, StageSetup, StageTests, StageCleanup, StageOverhead} {
		var n int64
		for _, s := range r.Stages {
			if s.Kind == kind {
				n += s.Seconds
			}
		}
		byKind = append(byKind, fmt.Sprintf("%s %d s", kind, n))
	}
	b.WriteString("By kind: " + strings.Join(byKind, " · ") + "\n\n")
}

func (r Report) writeRejected(b *strings.Builder) {
	b.WriteString("#### Rejected candidates\n\n")
	switch {
	case len(r.Rejected) == 0 && r.ProvisionRejected:
		b.WriteString("No rejected candidates.\n\n")
		return
	case len(r.Rejected) == 0:
		b.WriteString("None found by this step. Provision's rejected candidates were not passed to it: " +
			"provision's summary lists them and what they cost.\n\n")
		return
	}
	tb := mdtable.New("#", "Candidate", "GPU", "Pod", "Seconds", "Price", "Estimated cost", "Reason").AlignRight(0, 4, 6)
	for _, a := range r.Rejected {
		tb.Row(fmt.Sprint(a.Number), cell(a.Candidate), cell(a.GPU), cell(orNone(a.PodID)), a.Seconds.String(),
			cell(a.Price.String()), a.Dollars().String(), cell(a.Reason))
	}
	b.WriteString(tb.String())
	fmt.Fprintf(b, "\nRejected candidates total: %s\n\n", atLeast(r.rejectedAmounts()))
}

// atLeast renders a sum, or, when some amounts are unknown, the known part
// first: "$x known, n of m amounts unknown" (the total is then at least $x).
func atLeast(amounts []Money) string {
	sum, partial, unknown := sumMoney(amounts...)
	if sum.Known {
		return sum.String()
	}
	if unknown == len(amounts) {
		return fmt.Sprintf("unknown (%d of %d amounts unknown)", unknown, len(amounts))
	}
	return fmt.Sprintf("%s known, %d of %d amounts unknown", KnownMoney(partial), unknown, len(amounts))
}

// cell makes outside text safe inside one Markdown table cell.
func cell(s string) string { return mdtable.Cell(s) }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// JSON forms. Derived figures (seconds, dollars, totals) are written for
// readers that do not recompute them and ignored on read.
type (
	reportOut struct {
		Disclaimer      string      `json:"disclaimer"`
		Accepted        bool        `json:"accepted"`
		PodID           string      `json:"podId"`
		GPU             string      `json:"gpu"`
		Tier            string      `json:"tier"`
		Cloud           string      `json:"cloud,omitempty"`
		DataCenter      string      `json:"dataCenter,omitempty"`
		Driver          string      `json:"driver,omitempty"`
		Price           Price       `json:"price"`
		Window          windowOut   `json:"window"`
		Dollars         Money       `json:"dollars"`
		Stages          []stageOut  `json:"stages"`
		Rejected        []Attempt   `json:"rejected"`
		RejectedDollars Money       `json:"rejectedDollars"`
		TotalDollars    Money       `json:"totalDollars"`
		Notes           []string    `json:"notes"`
		JobConclusion   Conclusion  `json:"jobConclusion,omitempty"`
		Host            HostVerdict `json:"host,omitempty"`
		// ProvisionRejected is absent (false) from reports that leave them out.
		ProvisionRejected bool `json:"provisionRejected,omitempty"`
	}
	windowOut struct {
		Start   wire.Time `json:"start"`
		End     wire.Time `json:"end"`
		Seconds Seconds   `json:"seconds"`
	}
	stageOut struct {
		Stage
		Dollars Money `json:"dollars"`
	}
	reportIn struct {
		PodID string `json:"podId"`
		GPU   string `json:"gpu"`
		Tier  string `json:"tier"`
		// Absent from artifacts written before reports said where the pod ran.
		Cloud      string    `json:"cloud"`
		DataCenter string    `json:"dataCenter"`
		Driver     string    `json:"driver"`
		Price      Price     `json:"price"`
		Window     windowIn  `json:"window"`
		Stages     []stageIn `json:"stages"`
		Rejected   []Attempt `json:"rejected"`
		Notes      []string  `json:"notes"`
		// JobConclusion is absent from artifacts written before reports carried it.
		JobConclusion Conclusion `json:"jobConclusion"`
		// Host is absent unless the pod was lost to its host.
		Host HostVerdict `json:"host"`
		// ProvisionRejected is absent from artifacts written before cleanup was given them.
		ProvisionRejected bool `json:"provisionRejected"`
	}
	windowIn Window
	stageIn  Stage
)

func (w *windowIn) UnmarshalJSON(b []byte) error { return decodeFields(b, w) }
func (s *stageIn) UnmarshalJSON(b []byte) error  { return decodeFields(b, s) }

// MarshalJSON writes the report with its derived figures and the disclaimer.
func (r Report) MarshalJSON() ([]byte, error) {
	out := reportOut{
		Disclaimer: Disclaimer, Accepted: r.accepted(), PodID: r.PodID, GPU: r.GPU, Tier: r.Tier, Price: r.Price,
		Cloud: r.Cloud, DataCenter: r.DataCenter, Driver: r.Driver,
		Window:   windowOut{Start: r.Window.Start, End: r.Window.End, Seconds: r.Window.Seconds()},
		Dollars:  r.Dollars(),
		Stages:   make([]stageOut, 0, len(r.Stages)),
		Rejected: r.Rejected, RejectedDollars: r.RejectedDollars(), TotalDollars: r.Total(),
		Notes: r.Notes, JobConclusion: r.JobConclusion, Host: r.Host, ProvisionRejected: r.ProvisionRejected,
	}
	for _, s := range r.Stages {
		out.Stages = append(out.Stages, stageOut{Stage: s, Dollars: KnownSeconds(s.Seconds).At(r.Price)})
	}
	if out.Rejected == nil {
		out.Rejected = []Attempt{}
	}
	if out.Notes == nil {
		out.Notes = []string{}
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads what MarshalJSON writes and validates it (see Validate).
func (r *Report) UnmarshalJSON(b []byte) error {
	var in reportIn
	if err := decodeFields(b, &in); err != nil {
		return err
	}
	out := Report{
		PodID: in.PodID, GPU: in.GPU, Tier: in.Tier, Price: in.Price,
		Cloud: in.Cloud, DataCenter: in.DataCenter, Driver: in.Driver,
		Window: Window(in.Window), Rejected: in.Rejected, Notes: in.Notes,
		JobConclusion: in.JobConclusion, Host: in.Host, ProvisionRejected: in.ProvisionRejected,
	}
	for _, s := range in.Stages {
		out.Stages = append(out.Stages, Stage(s))
	}
	if err := out.Validate(); err != nil {
		return err
	}
	*r = out
	return nil
}
