package localgate

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

const (
	owner    = "octo"
	repoName = "gpu-lib"
	repoFull = owner + "/" + repoName

	// Tokens the simulated GitHub accepts: the relay's GITHUB_TOKEN and a maintainer's own.
	actionsToken    = "ghs_relay_token"
	maintainerToken = "ghp_maintainer_token"
	writerToken     = "ghp_writer_token"
)

var (
	ctx     = context.Background()
	headSHA = strings.Repeat("a", 40)
	pushSHA = strings.Repeat("b", 40) // a later push to the PR
	baseSHA = strings.Repeat("0", 40)
	start   = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
)

// fixture is a simulated GitHub with one repository whose users have every role.
type fixture struct {
	srv   *githubsim.Server
	ts    *httptest.Server
	clock *simclock.Virtual
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	clock := simclock.NewVirtual(start)
	srv := githubsim.New(
		githubsim.WithClock(clock),
		githubsim.WithSeed(7),
		githubsim.WithToken(actionsToken, githubsim.ActionsIdentity()),
		githubsim.WithToken(maintainerToken, githubsim.Identity{Login: "maint"}),
		githubsim.WithToken(writerToken, githubsim.Identity{Login: "writer"}),
	)
	assert.NilError(t, srv.AddRepo(githubsim.Repo{Owner: owner, Name: repoName, DefaultBranchSHA: baseSHA}))
	for login, role := range map[string]string{
		"maint": "maintain", "admin2": "admin", "writer": "write", "triager": "triage", "reader": "read", "nobody": "none",
	} {
		assert.NilError(t, srv.SetRole(repoFull, login, role))
	}
	_, err := srv.AddWorkflow(repoFull, ".github/workflows/"+DefaultWorkflow, "Local GPU gate relay")
	assert.NilError(t, err)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return &fixture{srv: srv, ts: ts, clock: clock}
}

// client is a ghapi client acting with token; it never retries, so an
// injected fault fails at once instead of backing off.
func (f *fixture) client(t *testing.T, token string) *ghapi.Client {
	t.Helper()
	c, err := ghapi.New(ctx, ghapi.Options{
		BaseURL: f.ts.URL, Token: token, Owner: owner, Repo: repoName,
		Policy: reqpolicy.New(reqpolicy.WithMaxAttempts(1)),
	})
	assert.NilError(t, err)
	return c
}

// addLabelledPR opens a same-repository PR at headSHA carrying the local label.
func (f *fixture) addLabelledPR(t *testing.T) int {
	t.Helper()
	n, err := f.srv.AddPullRequest(repoFull, githubsim.PullRequestSpec{
		Title: "Faster kernels", Author: "maint", HeadRef: "feature", HeadSHA: headSHA,
		MergeCommitSHA: strings.Repeat("c", 40), Labels: []string{gatecheck.LocalLabel},
	})
	assert.NilError(t, err)
	return n
}

func (f *fixture) updatePR(t *testing.T, number int, update func(*githubsim.PullRequestSpec)) {
	t.Helper()
	assert.NilError(t, f.srv.UpdatePullRequest(repoFull, number, update))
}

// sampleEvidence is a well-formed validation of sha.
func sampleEvidence(sha string) Evidence {
	return Evidence{
		SHA: sha, GPUName: "NVIDIA GeForce RTX 4090", Driver: "550.54.14", CUDAVersion: "12.4",
		Duration: 12*time.Minute + 3*time.Second, LogSHA256: strings.Repeat("d", 64), Command: "make gpu-test",
	}
}

func mustComment(t *testing.T, e Evidence) string {
	t.Helper()
	body, err := e.Comment()
	assert.NilError(t, err)
	return body
}
