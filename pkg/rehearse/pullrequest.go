package rehearse

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
)

// PullRequest is a pull request already open on a running simulated cloud
// (on cloud.Repository, its CI in progress), for PlayPullRequest to play the
// repository's lane for, as GitHub starts it from the default branch.
type PullRequest struct {
	Cloud *cloud.Cloud
	// Dir is the default branch's checkout: its workflows and configuration.
	Dir     string
	Number  int
	HeadSHA string
	HeadRef string
	// Vars are the repository's variables (vars.*), Secrets the lane's
	// environment's secrets, as GitHub hands them to the run.
	Vars    map[string]string
	Secrets map[string]string
	// AppID is the App whose gate the ruleset requires (the lane's gate-app-id).
	AppID int64
	// Timeout bounds the play; 0 means three minutes.
	Timeout time.Duration
}

// PlayPullRequest plays the lane caller of pr.Dir for pr on pr.Cloud, with
// the repository's variables and secrets (an App's key among them), and
// returns what it did; the gate it publishes stays on the pull request's head.
func PlayPullRequest(ctx context.Context, pr PullRequest) (*Played, error) {
	if pr.Cloud == nil || pr.AppID <= 0 || pr.Number <= 0 || pr.HeadSHA == "" {
		return nil, fmt.Errorf("rehearse: PlayPullRequest needs Cloud, Number, HeadSHA and AppID (got number %d, head %q, App %d)", pr.Number, pr.HeadSHA, pr.AppID)
	}
	repo, err := readWorkflows(pr.Dir)
	if err != nil {
		return nil, err
	}
	suite, err := embeddedSuite()
	if err != nil {
		return nil, err
	}
	var lane *workflowFile
	for _, f := range repo {
		if f.isLaneCaller() && lane == nil {
			lane = f
		}
	}
	if lane == nil {
		return nil, errors.New("no workflow of " + pr.Dir + " calls the GPU lane")
	}
	cfgText, err := os.ReadFile(filepath.Join(pr.Dir, config.DefaultPath))
	if err != nil {
		return nil, err
	}
	s := &stage{cloud: pr.Cloud, lane: lane, pr: pr.Number, head: pr.HeadSHA, gateApp: pr.AppID}
	if names := lane.workflowRunNames(); len(names) > 0 {
		s.ciName = names[0]
	}
	defer s.close()
	if err := s.writeWorkspace(cfgText); err != nil {
		return nil, err
	}
	if s.runID, err = pr.Cloud.GitHub.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: cloud.Repository, WorkflowPath: lane.Path, Event: "workflow_run",
		HeadSHA: pr.HeadSHA, HeadBranch: pr.HeadRef, PullRequests: []int{pr.Number}, Jobs: []githubsim.JobSpec{{Name: "finish", Status: "waiting"}}}); err != nil {
		return nil, fmt.Errorf("start the lane's run: %w", err)
	}
	vars := map[string]any{}
	for k, v := range pr.Vars {
		vars[k] = v
	}
	timeout := pr.Timeout
	if timeout == 0 {
		timeout = 3 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return s.play(ctx, suite, vars, pr.Secrets)
}
