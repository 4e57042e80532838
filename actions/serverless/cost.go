package serverlessaction

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/org/runpod-gpu/pkg/actionio"
	"github.com/org/runpod-gpu/pkg/actionkit"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/serverless"
)

// writeCost writes the attempt's cost artifact file for the cost history:
// the job's worker time at the lane's price ceiling (unknown without a job
// whose timing the provider reported) and the ledger's reservations.
func writeCost(io *actionio.IO, in Inputs, lane *serverless.Lane, a *attempt) {
	r, err := serverless.LoadReceipt(lane.Receipt)
	if err != nil {
		return
	}
	s := lane.Settings
	spend := cost.ServerlessSpend{Attempt: r.Attempt, GPU: s.GPUType, Pool: s.GPUPool, PricePerHour: s.PriceCeiling}
	if r.Job != nil {
		spend.JobID, spend.JobStatus = r.Job.ID, r.Job.Status
	}
	if !r.Created() {
		spend.Dollars = cost.KnownMoney(0) // refused before any create: nothing could bill
	}
	if res := a.result; res != nil {
		spend.JobStatus = string(res.State)
		spend.WorkerSeconds, spend.Dollars = cost.EstimateServerless(time.Duration(res.DelayTime)*time.Millisecond,
			time.Duration(res.ExecutionTime)*time.Millisecond, s.IdleTimeout, s.PriceCeiling)
	}
	if l, err := serverless.ReadLedger(lane.Ledger.Path); err == nil {
		spend.LedgerCents = l.TotalCents()
		for _, res := range l.Reservations {
			if res.Attempt == r.Attempt {
				spend.ReservedCents += res.Cents
			}
		}
	}
	current, err := actionkit.CurrentRun(io)
	if err != nil {
		return
	}
	trigger := cost.TriggerAutomatic
	if io.Getenv("GITHUB_EVENT_NAME") == "workflow_dispatch" {
		trigger = cost.TriggerManual
	}
	art := cost.Artifact{Action: "serverless", Serverless: &spend, Report: cost.Report{Notes: []string{"Serverless lane: no pod"}},
		Run: cost.Run{Repository: current.Repository, ID: current.ID, Attempt: current.Attempt, TestedRef: in.TestedRef, Trigger: trigger, PRNumber: in.PRNumber}}
	data, err := json.MarshalIndent(art, "", "  ")
	if err == nil {
		err = os.MkdirAll(filepath.Dir(in.CostFile), 0o755)
	}
	if err == nil {
		err = os.WriteFile(in.CostFile, append(data, '\n'), 0o644)
	}
	if err != nil {
		io.Warningf("cost: the cost artifact file %s was not written: %v", in.CostFile, err)
		return
	}
	io.Infof("cost: %s", spend)
}
