package lanes

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// stallingGitHub fronts the simulated GitHub and holds the nth GET whose path
// is path until the client gives up, as a hung connection does; every other
// request reaches the simulator.
func stallingGitHub(t *testing.T, simURL, path string, nth int) string {
	t.Helper()
	target, err := url.Parse(simURL)
	assert.NilError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var mu sync.Mutex
	seen := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		stall := false
		if r.Method == http.MethodGet && r.URL.Path == path {
			seen++
			stall = seen == nth
		}
		mu.Unlock()
		if stall {
			<-r.Context().Done()
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestAuthorizeDeadline runs the real authorize binary against a GitHub whose
// answer to one read never comes: the step ends within the read deadline
// (github-timeout-seconds), unauthorized, with no decision output and a
// summary saying nothing was spent; a stalled reuse lookup answers run.
func TestAuthorizeDeadline(t *testing.T) {
	const config = fastConfig + "gpu_paths: [\"src/**\"]\n"
	repoPath := "/repos/" + cloud.Repository
	tests := []struct {
		name         string
		path         func(pr int) string
		nth          int
		wantErr      string
		wantDecision string
	}{
		{name: "actor's role", path: func(int) string { return repoPath + "/collaborators/bob/permission" }, nth: 1,
			wantErr: "read the role of triggering actor bob: GitHub did not answer within the 1s read deadline"},
		{name: "PR", path: func(pr int) string { return fmt.Sprintf("%s/pulls/%d", repoPath, pr) }, nth: 1,
			wantErr: "read PR #%d: GitHub did not answer within the 1s read deadline"},
		{name: "author's role", path: func(int) string { return repoPath + "/collaborators/alice/permission" }, nth: 1,
			wantErr: "read the role of PR author alice: GitHub did not answer within the 1s read deadline"},
		{name: "files", path: func(pr int) string { return fmt.Sprintf("%s/pulls/%d/files", repoPath, pr) }, nth: 1,
			wantErr: "list files of PR #%d: GitHub did not answer within the 1s read deadline"},
		{name: "PR re-read", path: func(pr int) string { return fmt.Sprintf("%s/pulls/%d", repoPath, pr) }, nth: 2,
			wantErr: "re-read PR #%d: GitHub did not answer within the 1s read deadline"},
		{name: "reuse lookup fails open", path: func(int) string { return repoPath + "/commits/" + harness.HeadSHA + "/check-runs" }, nth: 1,
			wantDecision: "run"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startCloud(t, testMarket(), runpodsim.Faults{}, config)
			pr, err := s.GitHub.AddPullRequest(cloud.Repository, githubsim.PullRequestSpec{Author: "alice", HeadSHA: harness.HeadSHA,
				HeadRef: "feature", MergeCommitSHA: harness.MergeSHA, Files: []string{"src/kernels/add.cu"}})
			assert.NilError(t, err)
			st := s.AuthorizeStep(pr, "bob")
			st.Env["GITHUB_API_URL"] = stallingGitHub(t, s.GitHubURL, tc.path(pr), tc.nth)
			st.Inputs["github-timeout-seconds"] = "1"

			start := time.Now()
			res := harness.RunStep(t, st)
			took := time.Since(start)

			// The step's own start and reads take well under the margin;
			// without a deadline it would run until harness.RunStep's 90 s guard.
			assert.Check(t, took < 30*time.Second, "authorize took %s", took)
			assertNoSecrets(t, s, res)
			if tc.wantDecision != "" {
				assert.Equal(t, res.ExitCode, 0, res.Stdout)
				assert.Check(t, is.Equal(res.Outputs["decision"], tc.wantDecision))
				assert.Check(t, is.Contains(res.Outputs["reason"], "reuse lookup failed"))
				return
			}
			assert.Equal(t, res.ExitCode, 1, res.Stdout)
			want := tc.wantErr
			if strings.Contains(want, "%d") {
				want = fmt.Sprintf(want, pr)
			}
			assert.Check(t, is.Contains(res.Stdout, "::error::"+want))
			assert.Check(t, is.Contains(res.Summary, "**Not authorized**"))
			assert.Check(t, is.Contains(res.Summary, "Nothing was spent"))
			assert.Check(t, is.Len(res.Outputs, 0), "no decision: no later job may spend")
		})
	}
}
