package market

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/mdtable"
)

// Result is what one policy did over the whole workload.
type Result struct {
	Policy, Summary string
	Refs            int // tested refs the workload brought
	RefsTested      int // refs that got an accepted runner
	Runs            int // provision runs (paid path)
	RunsNoPod       int // runs that ended with no accepted pod
	Pods            int // pods created
	Accepted        int
	Rejected        int
	// Screened counts the rejected pods deleted before their proof because
	// the reputation record held their machine bad.
	Screened int
	// Dollars is every pod billed from creation to confirmed deletion, per
	// second, plus the accepted pods' GPU jobs; Wasted is the rejected pods' part.
	Dollars, Wasted float64
	// TimesToRunner is, per tested ref, its first delivery to its accepted runner.
	TimesToRunner []time.Duration
	// WasteByFault splits Wasted by the fault of the machine the rejected
	// pod ran on (FaultNone: a good machine's rare failure), and RejectedOn
	// counts rejected pods by machine: where the waste went.
	WasteByFault map[Fault]float64
	RejectedOn   map[string]int
}

// DollarsPerRef is what one tested ref cost, rejected pods included.
func (r Result) DollarsPerRef() float64 { return r.Dollars / float64(max(r.RefsTested, 1)) }

// PodsPerRef is how many pods one tested ref paid for.
func (r Result) PodsPerRef() float64 { return float64(r.Pods) / float64(max(r.RefsTested, 1)) }

// WastePerAccepted is what rejected pods cost per accepted pod.
func (r Result) WastePerAccepted() float64 { return r.Wasted / float64(max(r.Accepted, 1)) }

// NoPodShare is the share of runs that ended with no pod.
func (r Result) NoPodShare() float64 { return float64(r.RunsNoPod) / float64(max(r.Runs, 1)) }

// TimeToRunner is the q-quantile (0 to 1) of the time to a runner; 0 with none.
func (r Result) TimeToRunner(q float64) time.Duration {
	if len(r.TimesToRunner) == 0 {
		return 0
	}
	ts := slices.Clone(r.TimesToRunner)
	slices.Sort(ts)
	i := int(q*float64(len(ts)) + 0.5)
	return ts[min(max(i-1, 0), len(ts)-1)] // nearest rank
}

// Report is one scenario's results, policy by policy.
type Report struct {
	Scenario Scenario
	Machines int
	BadShare float64 // the fleet's real share of bad machines
	Refs     int
	Results  []Result
}

// Result returns the named policy's result.
func (rep Report) Result(policy string) (Result, bool) {
	for _, r := range rep.Results {
		if r.Policy == policy {
			return r, true
		}
	}
	return Result{}, false
}

// Title names the scenario, e.g. "20 % bad machines, clustered (seed 1)".
func (rep Report) Title() string {
	return fmt.Sprintf("%.0f %% bad machines, %s (seed %d)", rep.BadShare*100, rep.Scenario.Layout, rep.Scenario.Seed)
}

// Markdown renders the report: a heading, what was simulated, the table and
// a Mermaid chart of the wasted dollars per accepted pod.
func (rep Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "### %s\n\n", rep.Title())
	fmt.Fprintf(&b, "%d pull requests, %d tested refs (3 deliveries each), %d machines.\n\n", rep.Scenario.PRs, rep.Refs, rep.Machines)
	b.WriteString(rep.Table())
	b.WriteString("\n")
	for _, r := range rep.Results {
		fmt.Fprintf(&b, "- **%s**: %s\n", r.Policy, r.Summary)
	}
	b.WriteString("\n")
	b.WriteString(rep.Chart())
	return b.String()
}

// Table renders one row per policy.
func (rep Report) Table() string {
	tb := mdtable.New("policy", "$ per tested ref", "paid pods per ref", "wasted $ on rejected hosts per accepted pod",
		"p50 time to a runner", "p95 time to a runner", "runs that ended with no pod").AlignRight(1, 2, 3, 4, 5, 6)
	for _, r := range rep.Results {
		tb.Row(r.Policy, fmt.Sprintf("$%.4f", r.DollarsPerRef()), fmt.Sprintf("%.2f", r.PodsPerRef()), fmt.Sprintf("$%.4f", r.WastePerAccepted()),
			minutes(r.TimeToRunner(0.5)), minutes(r.TimeToRunner(0.95)), fmt.Sprintf("%.1f %% (%d of %d)", 100*r.NoPodShare(), r.RunsNoPod, r.Runs))
	}
	return tb.String()
}

// Chart is a Mermaid bar chart of the wasted dollars per accepted pod.
func (rep Report) Chart() string {
	var names, values []string
	top := 0.0
	for _, r := range rep.Results {
		names = append(names, fmt.Sprintf("%q", r.Policy))
		values = append(values, fmt.Sprintf("%.4f", r.WastePerAccepted()))
		top = max(top, r.WastePerAccepted())
	}
	var b strings.Builder
	b.WriteString("```mermaid\nxychart-beta\n")
	fmt.Fprintf(&b, "    title \"Wasted $ on rejected hosts per accepted pod, %s\"\n", strings.NewReplacer(" (", ", ", ")", "").Replace(rep.Title()))
	fmt.Fprintf(&b, "    x-axis [%s]\n", strings.Join(names, ", "))
	fmt.Fprintf(&b, "    y-axis \"USD\" 0 --> %.4f\n", max(top*1.1, 0.0001))
	fmt.Fprintf(&b, "    bar [%s]\n```\n", strings.Join(values, ", "))
	return b.String()
}

// minutes renders a duration as minutes and seconds, e.g. "3m05s".
func minutes(d time.Duration) string {
	d = d.Round(time.Second)
	return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
}
