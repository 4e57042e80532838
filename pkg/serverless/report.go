package serverless

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/mdtable"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/spend"
)

// Outcome is what one attempt of the lane did, for its summary and its cost.
type Outcome struct {
	Settings Settings
	Receipt  *Receipt     // nil when the attempt never wrote one
	Result   *RunResult   // nil when no job ran
	Ledger   *Ledger      // the ledger after the attempt; nil when unreadable
	Payload  string       // the approved payload's SHA-256
	Output   string       // the results directory
	Err      error        // the attempt's error, cleanup's included
	Budget   *spend.Usage // what the budget check before setup saw; nil without a budget
}

// Spend is the attempt's cost for the cost history: the job's worker time
// (its delay, cold start included, its execution and the idle timeout) at the
// price ceiling; a known $0 when nothing was created; unknown otherwise.
func (o Outcome) Spend() cost.ServerlessSpend {
	s := o.Settings
	sp := cost.ServerlessSpend{GPU: s.GPUType, Pool: s.GPUPool, PricePerHour: s.PriceCeiling}
	if r := o.Receipt; r != nil {
		sp.Attempt, sp.EndpointID = r.Attempt, r.Endpoint.ID
		if r.Job != nil {
			sp.JobID, sp.JobStatus = r.Job.ID, r.Job.Status
		}
		if !r.Created() {
			sp.Dollars = cost.KnownMoney(0) // refused before any create: nothing could bill
		}
	}
	if res := o.Result; res != nil {
		sp.JobStatus = string(res.State)
		sp.WorkerSeconds, sp.Dollars = cost.EstimateServerless(time.Duration(res.DelayTime)*time.Millisecond,
			time.Duration(res.ExecutionTime)*time.Millisecond, s.IdleTimeout, s.PriceCeiling)
	}
	if l := o.Ledger; l != nil {
		sp.LedgerCents = l.TotalCents()
		for _, res := range l.Reservations {
			if sp.Attempt != "" && res.Attempt == sp.Attempt {
				sp.ReservedCents += res.Cents
			}
		}
	}
	return sp
}

// Summary is the lane's job summary: the job, where it ran, what came back,
// whether cleanup was confirmed, and what it cost against the ledger.
func (o Outcome) Summary() string {
	var b strings.Builder
	b.WriteString("### Serverless lane\n\n")
	sp := o.Spend()
	verdict := "**Passed**"
	if o.Err != nil {
		verdict = "**Failed**: " + mdtable.Cell(firstLine(o.Err.Error()))
	}
	fmt.Fprintf(&b, "%s\n\n", verdict)
	tb := mdtable.New("", "")
	job, state, cuda, files := "none submitted", "-", "false", "0"
	if res := o.Result; res != nil {
		job, state, cuda, files = mdtable.Code(res.JobID), string(res.State), fmt.Sprint(res.CUDAExecuted), fmt.Sprint(len(res.Files))
	}
	cleaned := "not confirmed"
	if o.Receipt != nil && o.Receipt.CleanupConfirmed {
		cleaned = "confirmed"
	}
	for _, row := range [][2]string{
		{"Job", job + " (" + state + ")"},
		{"GPU", mdtable.Code(o.Settings.GPUType) + " only (pool " + o.Settings.GPUPool + ", its other cards excluded)"},
		{"CUDA executed", cuda},
		{"Result files", files + " in " + mdtable.Code(cmp.Or(o.Output, "-"))},
		{"Payload", mdtable.Code(cmp.Or(o.Payload, "-"))},
		{"Endpoint and template deleted", cleaned},
		{"Estimated cost", fmt.Sprintf("%s (%d worker seconds at %s)", sp.Dollars, sp.WorkerSeconds, sp.PricePerHour.Format(money.Cents))},
		{"Budget ledger", fmt.Sprintf("%s reserved for this attempt; %s of the ledger's total", sp.ReservedCents.Amount(), sp.LedgerCents.Amount())},
	} {
		tb.Row(row[0], row[1])
	}
	if o.Budget != nil {
		tb.Row("Budget used", mdtable.Cell(o.Budget.String()))
	}
	b.WriteString(tb.String())
	return b.String()
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// CostArtifact is the attempt's cost artifact for the cost history (action
// "serverless"; its report holds no pod).
func (o Outcome) CostArtifact(run cost.Run) cost.Artifact {
	sp := o.Spend()
	return cost.Artifact{Run: run, Action: "serverless", Serverless: &sp, Report: cost.Report{Notes: []string{"Serverless lane: no pod"}}}
}
