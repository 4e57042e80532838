// Package localgateaction is the local-gate action, the relay of a maintainer's local GPU validation: it
// re-verifies the dispatched evidence and publishes the CI GPU gate, as the
// App when app-id is given, else with the workflow's token. It runs no
// pull-request code.
package localgateaction

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/org/runpod-gpu/pkg/actionio"
	"github.com/org/runpod-gpu/pkg/actionkit"
	"github.com/org/runpod-gpu/pkg/localgate"
)

// Action is the local-gate action, as the image's program runs it (role local-gate).
var Action = actionkit.NewAction(run, reflect.TypeFor[outputs]())

// Inputs are the local-gate action's inputs: the workflow_dispatch inputs the
// local command sent (localgate.Input*), and who publishes.
type Inputs struct {
	// GitHubInputs: with app-id the gate is published as the App, so a check
	// branch protection binds to the App can be satisfied by a local
	// validation; without it, github-token publishes as GitHub Actions.
	actionkit.GitHubInputs `desc.github-token:"Token that reads the PR, its comments and collaborator roles and creates the check run, used when app-id is empty. Leave the default: the workflow's GITHUB_TOKEN publishes as GitHub Actions, the app token-mode lanes trust." desc.app-id:"GitHub App id to publish the gate as (preferred over github-token). Give it whenever the paid lane publishes with this App, so that the local gate comes from the app branch protection expects." desc.app-installation-id:"The App's installation id on this repository (required with app-id)."`

	PRNumber  int64  `input:"pr-number,required" min:"1" max:"2147483647" desc:"Number of the pull request the evidence is for (dispatch input pr-number)."`
	SHA       string `input:"sha,required" desc:"Full commit SHA the maintainer validated (dispatch input sha). It must be the PR's head, and the evidence comment's marker line must name it."`
	CommentID int64  `input:"comment-id,required" min:"1" max:"9223372036854775807" desc:"ID of the evidence comment the local command posted (dispatch input comment-id)."`
	CheckName string `input:"check-name" default:"CI GPU gate" desc:"Name of the gate check run; must match the check branch protection requires."`
}

func run(ctx context.Context, io *actionio.IO, in Inputs) error {
	// The run's identity, as every action reads it: the run URL names the
	// attempt, so the gate's evidence links the attempt that relayed it.
	current, err := actionkit.CurrentRun(io)
	if err != nil {
		return err
	}
	gh, err := actionkit.GitHub(ctx, io, in.GitHubInputs, "")
	if err != nil {
		return err
	}

	published, err := localgate.Relay(ctx, gh, localgate.RelayRequest{
		Repository: current.Repository, PRNumber: int(in.PRNumber), SHA: in.SHA, CommentID: in.CommentID,
		Dispatcher: io.Getenv("GITHUB_ACTOR"), TriggeringActor: io.Getenv("GITHUB_TRIGGERING_ACTOR"),
		Event: io.Getenv("GITHUB_EVENT_NAME"), WorkflowRef: io.Getenv("GITHUB_REF"),
	}, localgate.PublishOptions{CheckName: in.CheckName, RunID: current.ID, RunURL: current.URL()})
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
