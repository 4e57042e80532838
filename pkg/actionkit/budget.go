package actionkit

import (
	"errors"
	"io/fs"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/actionio"
	"github.com/org/runpod-gpu/pkg/budget"
	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/spend"
)

// SpendRecordInput is the budget's fallback record, an input of both lanes.
type SpendRecordInput struct {
	SpendRecord string `input:"spend-record" default:"" path:"GITHUB_WORKSPACE,RUNNER_TEMP" desc:"With a budget in the configuration: the cost history's spend record (spend.json of its runpod-gpu-reputation artifact), inside the workspace or RUNNER_TEMP, counted when RunPod's billing cannot be read. Empty or a missing file: none; with neither billing nor a record a budget refuses every create."`
}

// Budget builds the one budget check both lanes make before a create: nil
// when the configuration sets no budget. An unreadable record is a warning
// (billing may still be readable); podBound is the lane's bound on one pod
// (startup and lifetime), 0 for a lane that creates none.
func Budget(io *actionio.IO, cfg *config.Config, rp budget.RunPod, in SpendRecordInput, podBound time.Duration) (budget.Checker, error) {
	daily, monthly, ok := cfg.BudgetLimits()
	if !ok {
		return nil, nil
	}
	owner, repo, err := Repository(io)
	if err != nil {
		return nil, err
	}
	g := &budget.Guard{Limits: spend.Limits{DailyUSD: daily, MonthlyUSD: monthly}, RunPod: rp, Repository: owner + "/" + repo,
		PodBound: podBound, Logf: io.Infof}
	if c, ok := rp.(budget.Catalog); ok {
		g.Catalog = c // live endpoints priced by their pools
	}
	if path := strings.TrimSpace(in.SpendRecord); path != "" {
		rec, err := budget.ReadRecord(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			io.Infof("budget: spend-record %q does not exist yet: RunPod's billing is the only source of spend", path)
		case err != nil:
			io.Warningf("input spend-record: %v: RunPod's billing is the only source of spend", err)
		default:
			g.Record = rec
		}
	}
	return g, nil
}
