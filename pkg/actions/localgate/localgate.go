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
	"strconv"
	"strings"

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
	repository := io.Getenv("GITHUB_REPOSITORY")
	// With app-id the gate is published as the App, so a check branch
	// protection binds to the App can be satisfied by a local validation;
	// without it, github-token publishes as GitHub Actions.
	gh, err := actionkit.GitHub(ctx, io, "")
	if err != nil {
		return err
	}
	runID, _ := strconv.ParseInt(io.Getenv("GITHUB_RUN_ID"), 10, 64)
	runURL := ""
	if server := io.Getenv("GITHUB_SERVER_URL"); server != "" && runID > 0 {
		runURL = fmt.Sprintf("%s/%s/actions/runs/%d", strings.TrimRight(server, "/"), repository, runID)
	}

	published, err := localgate.Relay(ctx, gh, localgate.RelayRequest{
		Repository: repository, PRNumber: int(pr), SHA: io.Input(localgate.InputSHA), CommentID: commentID,
		Dispatcher: io.Getenv("GITHUB_ACTOR"), TriggeringActor: io.Getenv("GITHUB_TRIGGERING_ACTOR"),
		Event: io.Getenv("GITHUB_EVENT_NAME"), WorkflowRef: io.Getenv("GITHUB_REF"),
	}, localgate.PublishOptions{CheckName: io.Input("check-name"), RunID: runID, RunURL: runURL})
	if errors.Is(err, localgate.ErrRefused) {
		// The summary says why in the run's page, where the maintainer looks first.
		return errors.Join(err, io.AddSummary(fmt.Sprintf("### Local GPU gate not published\n\n%s\n", err)))
	}
	if err != nil {
		return err
	}
	for _, out := range [][2]string{
		{"check-run-id", strconv.FormatInt(published.CheckRunID, 10)},
		{"check-run-url", published.CheckRunURL},
		{"external-id", published.ExternalID},
		{"evidence-url", published.CommentURL},
	} {
		if err := io.SetOutput(out[0], out[1]); err != nil {
			return err
		}
	}
	io.Infof("published %s for %s from %s", published.ExternalID, published.SHA, published.CommentURL)
	return io.AddSummary(published.Summary())
}
