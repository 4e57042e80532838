package gate

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/ghapi"
)

// treeGitHub is a fakeGitHub that can read commit trees (TreeReader).
type treeGitHub struct {
	*fakeGitHub
	tree    string
	treeErr error
	reads   []string
}

func (g *treeGitHub) CommitTree(_ context.Context, sha string) (string, error) {
	g.reads = append(g.reads, sha)
	return g.tree, g.treeErr
}

// Authorize's tree key: read only with a lane and a tree reader, and any
// doubt (a lane field missing, an unreadable or invalid tree) answers no key
// with a note in the reason, never a wider match.
func TestAuthorizeTreeKey(t *testing.T) {
	const treeSHA = "7777777777777777777777777777777777777777"
	good := gatecheck.LaneDefinition{Config: []byte(`{"max_provision_attempts":3}`), TestCommand: "make test-gpu",
		ImageDigest: "ghcr.io/actions/actions-runner:latest@sha256:" + strings.Repeat("1", 64),
		Workflow:    "o/r/.github/workflows/gpu.yml@refs/heads/main", Version: "v1.2.3"}
	digest, err := gatecheck.LaneDigest(good)
	assert.NilError(t, err)
	noGateReason := "no earlier gate for tested ref " + merge
	noKey := ": only this exact tested ref can be reused"
	broken := good
	broken.TestCommand = " "
	tests := []struct {
		name       string
		lane       *gatecheck.LaneDefinition
		reader     bool
		tree       string
		treeErr    error
		wantKey    *gatecheck.TreeKey
		wantReason string
		wantReads  int
	}{
		{name: "lane and tree: keyed", lane: &good, reader: true, tree: treeSHA, wantReads: 1,
			wantKey:    &gatecheck.TreeKey{Tree: treeSHA, Lane: digest},
			wantReason: noGateReason + " (tree:" + treeSHA + ":lane:" + digest + "): running the paid path"},
		{name: "no lane: no key, no note, no tree read", reader: true, tree: treeSHA,
			wantReason: noGateReason + ": running the paid path"},
		{name: "lane but no tree reader: no key, no note", lane: &good,
			wantReason: noGateReason + ": running the paid path"},
		{name: "a lane field missing", lane: &broken, reader: true, tree: treeSHA,
			wantReason: noGateReason + ": running the paid path; no tree key (lane digest: test command is empty: want the command the GPU job runs (input test-command))" + noKey},
		{name: "tree unreadable", lane: &good, reader: true, treeErr: errors.New("502 Bad Gateway"), wantReads: 1,
			wantReason: noGateReason + ": running the paid path; no tree key (read the tree of " + merge + ": 502 Bad Gateway)" + noKey},
		{name: "tree not a SHA", lane: &good, reader: true, tree: "main", wantReads: 1,
			wantReason: noGateReason + ": running the paid path; no tree key (tree key: tree \"main\": want a full lowercase tree SHA)" + noKey},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := &fakeGitHub{prs: []*github.PullRequest{pullRequest()}, roles: map[string]string{"alice": "maintain", "bob": "admin"}}
			var gh PullRequests = base
			tg := &treeGitHub{fakeGitHub: base, tree: tc.tree, treeErr: tc.treeErr}
			if tc.reader {
				gh = tg
			}

			a, err := Authorize(context.Background(), gh, AuthorizeRequest{Repository: repo, PRNumber: 7, ExpectedHeadSHA: head, Actor: "bob",
				Reuse: gatecheck.ReuseQuery{AppID: ourApp}, Lane: tc.lane})

			assert.NilError(t, err)
			assert.Equal(t, a.Outcome, OutcomeRun)
			assert.DeepEqual(t, a.TreeKey, tc.wantKey)
			assert.Equal(t, a.Reason, tc.wantReason)
			assert.Equal(t, len(tg.reads), tc.wantReads)
			wantOut := ""
			if tc.wantKey != nil {
				wantOut = tc.wantKey.String()
			}
			assert.Equal(t, a.Outputs().TreeKey, wantOut)
		})
	}
}

// claimGitHub is a fakeGitHub that can publish check runs (gatecheck.ClaimClient).
type claimGitHub struct {
	*fakeGitHub
	created []ghapi.CheckRunInput
}

func (g *claimGitHub) CreateCheckRun(_ context.Context, in ghapi.CheckRunInput) (*github.CheckRun, error) {
	g.created = append(g.created, in)
	return &github.CheckRun{ID: github.Int64(int64(500 + len(g.created))), ExternalID: github.String(in.ExternalID)}, nil
}

func (g *claimGitHub) UpdateCheckRun(_ context.Context, id int64, _ ghapi.CheckRunInput) (*github.CheckRun, error) {
	return &github.CheckRun{ID: github.Int64(id)}, nil
}

// With ClaimOptions and a client that can publish, Authorize stakes this
// lane's in-progress gate and hands its id on; without ClaimOptions it
// publishes nothing, whatever the client can do.
func TestAuthorizeStakesOnlyWhenAskedTo(t *testing.T) {
	for _, tc := range []struct {
		name        string
		claim       *ClaimOptions
		wantCreated int
		wantOutput  string
	}{
		{name: "claim options: staked", claim: &ClaimOptions{LaneBound: time.Hour, RunURL: "https://github.com/o/r/actions/runs/1"}, wantCreated: 1, wantOutput: "501"},
		{name: "no claim options: nothing published", wantCreated: 0, wantOutput: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gh := &claimGitHub{fakeGitHub: &fakeGitHub{prs: []*github.PullRequest{pullRequest()}, roles: map[string]string{"alice": "maintain", "bob": "admin"}}}

			a, err := Authorize(context.Background(), gh, AuthorizeRequest{Repository: repo, PRNumber: 7, ExpectedHeadSHA: head, Actor: "bob",
				Reuse: gatecheck.ReuseQuery{AppID: ourApp}, Claim: tc.claim})

			assert.NilError(t, err)
			assert.Equal(t, a.Outcome, OutcomeRun)
			assert.Equal(t, len(gh.created), tc.wantCreated)
			assert.Equal(t, a.Outputs().GateCheckRunID, tc.wantOutput)
			if tc.wantCreated > 0 {
				assert.Equal(t, gh.created[0].Status, "in_progress")
				assert.Equal(t, a.GateCheckRunID, int64(501))
			}
		})
	}
}

// A fork PR's reason names the approval exactly: who added which label at
// which head, or who dispatched which SHA.
func TestAuthorizeForkApprovalReason(t *testing.T) {
	fork := func(p *github.PullRequest) {
		p.Head.Repo.FullName = github.String("mallory/gpu-project")
		p.Labels = []*github.Label{{Name: github.String(ApprovalLabel)}}
	}
	for _, tc := range []struct {
		name     string
		approval ForkApproval
		want     string
	}{
		{name: "label", approval: ForkApproval{Via: ApprovedByLabel, SHA: head, Approver: "bob", Label: ApprovalLabel},
			want: "fork PR approved (label gpu-approved added by bob at head " + head + "); no earlier gate"},
		{name: "dispatch", approval: ForkApproval{Via: ApprovedByDispatch, SHA: head, Approver: "bob"},
			want: "fork PR approved (dispatch by bob with approved-fork-sha " + head + "); no earlier gate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeGitHub{prs: []*github.PullRequest{pullRequest(fork)}, roles: map[string]string{"bob": "admin"}}
			approval := tc.approval

			a, err := Authorize(context.Background(), f, AuthorizeRequest{Repository: repo, PRNumber: 7, ExpectedHeadSHA: head, Actor: "bob",
				Reuse: gatecheck.ReuseQuery{AppID: ourApp}, ForkApproval: &approval})

			assert.NilError(t, err)
			assert.Equal(t, a.Outcome, OutcomeRun)
			assert.Check(t, strings.HasPrefix(a.Reason, tc.want), a.Reason)
			assert.Equal(t, a.ApproverRole, "admin")
		})
	}
}
