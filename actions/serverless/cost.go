package serverlessaction

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/org/runpod-gpu/pkg/actionio"
	"github.com/org/runpod-gpu/pkg/actionkit"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/redact"
	"github.com/org/runpod-gpu/pkg/serverless"
)

// outcome gathers what the attempt did, once its cleanup ran.
func outcome(in Inputs, lane *serverless.Lane, a *attempt, err error) serverless.Outcome {
	o := serverless.Outcome{Settings: lane.Settings, Result: a.result, Output: in.OutputDir, Payload: a.payload.SHA256(), Err: err, Budget: lane.BudgetUsage}
	if r, rerr := serverless.LoadReceipt(lane.Receipt); rerr == nil {
		o.Receipt = r
	}
	if l, lerr := serverless.ReadLedger(lane.Ledger.Path); lerr == nil {
		o.Ledger = l
	}
	return o
}

// report writes the job summary and the attempt's cost artifact file for
// the cost history (an attempt that wrote no receipt created nothing).
func report(io *actionio.IO, in Inputs, o serverless.Outcome) {
	if o.Receipt == nil {
		return
	}
	_ = io.AddSummary(o.Summary())
	current, err := actionkit.CurrentRun(io)
	if err != nil {
		return
	}
	trigger := cost.TriggerOf(io.Getenv("GITHUB_EVENT_NAME"))
	art := o.CostArtifact(cost.Run{Repository: current.Repository, ID: current.ID, Attempt: current.Attempt, TestedRef: in.TestedRef, Trigger: trigger, PRNumber: in.PRNumber})
	data, err := json.MarshalIndent(art, "", "  ")
	file := append([]byte(redact.Published(string(data))), '\n') // published as an artifact
	if err == nil {
		err = os.MkdirAll(filepath.Dir(in.CostFile), 0o755)
	}
	if err == nil {
		err = os.WriteFile(in.CostFile, file, 0o644)
	}
	if err != nil {
		io.Warningf("cost: the cost artifact file %s was not written: %v", in.CostFile, err)
		return
	}
	io.Infof("cost: %s", *art.Serverless)
	// The seal in this job's log is what makes the file count: the cost
	// history ignores an artifact no lane job's log vouches for.
	io.Infof("%s", cost.SealLine(file).Format())
}
