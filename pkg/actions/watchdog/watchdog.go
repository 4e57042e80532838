// Package watchdog is the setup-watchdog action: on a hosted runner beside the
// GPU job it bounds the accepted pod's setup and lifetime, deletes it when the
// job ends, a bound expires or the pull request becomes obsolete, and cancels
// an obsolete run only after the deletion is confirmed.
package watchdog

import (
	"context"
	"math"
	"time"

	"github.com/org/runpod-gpu/pkg/actionio"
	"github.com/org/runpod-gpu/pkg/actionkit"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/watchdog"
)

// Run is the watchdog action: it reads its inputs and writes its outputs and job
// summary through io. actions/watchdog/main.go and the image's multi-call binary
// (role watchdog) both hand it to actionkit.
func Run(ctx context.Context, io *actionio.IO) error {
	cfg, err := actionkit.Config(io)
	if err != nil {
		return err
	}
	pr, err := io.Int("pr-number", 0, 0, math.MaxInt32)
	if err != nil {
		return err
	}
	// The head authorize pinned (provision refused the same value if it was malformed).
	head, err := io.SHA("expected-head-sha", pr > 0)
	if err != nil {
		return err
	}
	poll, err := io.Duration("poll-seconds", watchdog.DefaultPoll, time.Second, time.Hour)
	if err != nil {
		return err
	}
	snapshot, err := cost.ParseSnapshot(io.Input("price-per-hour"), "", io.Input("gpu-type"), io.Input("tier"))
	if err != nil {
		io.Warningf("%v; the cost report treats it as unknown", err)
	}
	rp, policy, err := actionkit.RunPod(io)
	if err != nil {
		return err
	}
	// The runner's scope: the foreign-job check and the registration's removal look it up there.
	scope, org, err := actionkit.RunnerScope(io)
	if err != nil {
		return err
	}
	gh, err := actionkit.GitHub(ctx, io, org)
	if err != nil {
		return err
	}
	current, err := actionkit.CurrentRun(io)
	if err != nil {
		return err
	}

	res, runErr := watchdog.Run(ctx, watchdog.Deps{Pods: rp, GitHub: gh, Policy: policy, Logf: io.Infof}, watchdog.Request{
		PodID: io.Input("pod-id"), RunID: current.ID, Attempt: current.Attempt,
		RunnerLabel: io.Input("runner-label"), RunnerScope: scope, TestStep: io.Input("test-step-name"),
		PRNumber: int(pr), ExpectedHeadSHA: head,
		SetupBudget: cfg.SetupBudget(), Lifetime: cfg.Lifetime(), Poll: poll, Snapshot: snapshot,
	})
	// The watch logged an interrupted pod's cost line itself, before it asked
	// for the run's cancellation (which can end this job).
	if err := actionio.WriteOutputs[watchdog.Outputs](io, res.Outputs()); err != nil {
		io.Warningf("%v", err)
	}
	if err := io.AddSummary(res.Summary(runErr)); err != nil {
		io.Warningf("job summary: %v", err)
	}
	return runErr
}
