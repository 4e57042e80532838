package serverlessaction

import (
	"strings"

	"github.com/org/runpod-gpu/pkg/actionio"
	"github.com/org/runpod-gpu/pkg/actionkit"
	"github.com/org/runpod-gpu/pkg/budget"
)

// laneBudget reads the reviewed configuration's budget, shared with the pod
// lane: nil without config-path or without a budget in it.
func laneBudget(io *actionio.IO, in Inputs, rp budget.RunPod) (budget.Checker, error) {
	if in.Mode != "run" || strings.TrimSpace(in.ConfigPath) == "" {
		return nil, nil
	}
	cfg, err := actionkit.Config(io, in.ConfigPath)
	if err != nil {
		return nil, err
	}
	return actionkit.Budget(io, cfg, rp, in.SpendRecordInput, 0)
}
