// Package localgate is the relay of a maintainer's local GPU validation: it
// re-verifies the dispatched evidence and publishes the CI GPU gate, as the
// App when app-id is given, else with the workflow's token. It runs no
// pull-request code.
package localgate

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/org/runpod-gpu/pkg/actionio"
	"github.com/org/runpod-gpu/pkg/actionkit"
	"github.com/org/runpod-gpu/pkg/localgate"
)

// Run is the local-gate action: it reads its inputs and writes its outputs and job
// summary through io. actions/local-gate/main.go and the image's multi-call binary
// (role local-gate) both hand it to actionkit.
func Run(ctx context.Context, io *actionio.IO) error {
	pr, err := io.Int(localgate.InputPRNumber, 0, 1, math.MaxInt32)
	if err != nil {
		return err
	}
	commentID, err := io.Int(localgate.InputCommentID, 0, 1, math.MaxInt64)
	if err != nil {
		return err
	}
	// The run's identity, as every action reads it: the run URL names the
	// attempt, so the gate's evidence links the attempt that relayed it.
	current, err := actionkit.CurrentRun(io)
	if err != nil {
		return err
	}
	// With app-id the gate is published as the App, so a check branch
	// protection binds to the App can be satisfied by a local validation;
	// without it, github-token publishes as GitHub Actions.
	gh, err := actionkit.GitHub(ctx, io, "")
	if err != nil {
		return err
	}

	published, err := localgate.Relay(ctx, gh, localgate.RelayRequest{
		Repository: current.Repository, PRNumber: int(pr), SHA: io.Input(localgate.InputSHA), CommentID: commentID,
		Dispatcher: io.Getenv("GITHUB_ACTOR"), TriggeringActor: io.Getenv("GITHUB_TRIGGERING_ACTOR"),
		Event: io.Getenv("GITHUB_EVENT_NAME"), WorkflowRef: io.Getenv("GITHUB_REF"),
	}, localgate.PublishOptions{CheckName: io.Input("check-name"), RunID: current.ID, RunURL: current.URL()})
	if errors.Is(err, localgate.ErrRefused) {
		// The summary says why in the run's page, where the maintainer looks first.
		return errors.Join(err, io.AddSummary(fmt.Sprintf("### Local GPU gate not published\n\n%s\n", err)))
	}
	if err != nil {
		return err
	}
	if err := actionio.WriteOutputs[outputs](io, outputs{CheckRunID: published.CheckRunID, CheckRunURL: published.CheckRunURL,
		ExternalID: published.ExternalID, EvidenceURL: published.CommentURL}); err != nil {
		return err
	}
	io.Infof("published %s for %s from %s", published.ExternalID, published.SHA, published.CommentURL)
	return io.AddSummary(published.Summary())
}

// outputs are the local-gate action's outputs: the published gate and its evidence.
type outputs struct {
	CheckRunID  int64  `output:"check-run-id"`
	CheckRunURL string `output:"check-run-url"`
	ExternalID  string `output:"external-id"`
	EvidenceURL string `output:"evidence-url"`
}
