package githubsim

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
)

const prPath = "/repos/octo/gpu-lib/pulls/1"

func TestFaultKinds(t *testing.T) {
	tests := []struct {
		name  string
		fault Fault
		check func(t *testing.T, err error)
	}{
		{
			name:  "429 with Retry-After",
			fault: Fault{Kind: FaultTooManyRequests, RetryAfter: 30 * time.Second},
			check: func(t *testing.T, err error) {
				var er *github.ErrorResponse
				assert.Assert(t, errors.As(err, &er), "go-github v66 reports a 429 as a plain ErrorResponse")
				assert.Equal(t, er.Response.StatusCode, http.StatusTooManyRequests)
				assert.Equal(t, er.Response.Header.Get("Retry-After"), "30")
			},
		},
		{
			name:  "403 primary rate limit",
			fault: Fault{Kind: FaultPrimaryRateLimit, RetryAfter: 10 * time.Minute},
			check: func(t *testing.T, err error) {
				var rl *github.RateLimitError
				assert.Assert(t, errors.As(err, &rl), "got %T %v", err, err)
				assert.Equal(t, rl.Rate.Remaining, 0)
				assert.Check(t, rl.Rate.Reset.Time.Equal(start.Add(10*time.Minute)))
			},
		},
		{
			name:  "403 secondary rate limit",
			fault: Fault{Kind: FaultSecondaryRateLimit, RetryAfter: 90 * time.Second},
			check: func(t *testing.T, err error) {
				var abuse *github.AbuseRateLimitError
				assert.Assert(t, errors.As(err, &abuse), "got %T %v", err, err)
				assert.Equal(t, abuse.GetRetryAfter(), 90*time.Second)
			},
		},
		{
			name:  "5xx",
			fault: Fault{Kind: FaultServerError, Status: http.StatusBadGateway},
			check: func(t *testing.T, err error) {
				assert.Equal(t, statusOf(err), http.StatusBadGateway)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, WithFault(tt.fault))
			_, err := f.srv.AddPullRequest(repoName, PullRequestSpec{HeadRef: "x", HeadSHA: sha('a')})
			assert.NilError(t, err)
			_, _, err = f.app.PullRequests.Get(ctx, "octo", "gpu-lib", 1)
			tt.check(t, err)
		})
	}
}

func TestFaultForNCallsOnAPath(t *testing.T) {
	f := newFixture(t)
	_, err := f.srv.AddPullRequest(repoName, PullRequestSpec{HeadRef: "x", HeadSHA: sha('a')})
	assert.NilError(t, err)
	f.srv.AddFault(Fault{Kind: FaultServerError, Method: "GET", Path: "/repos/*/*/pulls/*", Skip: 1, Times: 2, Status: 503})

	var got []int
	for range 5 {
		_, resp, _ := f.app.PullRequests.Get(ctx, "octo", "gpu-lib", 1)
		got = append(got, resp.StatusCode)
	}
	assert.DeepEqual(t, got, []int{200, 503, 503, 200, 200})
	_, _, err = f.app.Repositories.GetPermissionLevel(ctx, "octo", "gpu-lib", "octo")
	assert.NilError(t, err, "other paths are untouched")
	assert.Equal(t, f.srv.CountRequests("GET", prPath), 5)
}

func TestFaultedRequestChangesNothing(t *testing.T) {
	f := newFixture(t, WithFault(Fault{Kind: FaultServerError, Method: "POST", Path: "/repos/*/*/check-runs"}))
	_, _, err := f.app.Checks.CreateCheckRun(ctx, "octo", "gpu-lib", gateOptions(sha('a')))
	assert.Equal(t, statusOf(err), http.StatusInternalServerError)
	assert.Equal(t, len(f.srv.CheckRuns(repoName, sha('a'))), 0)

	f.srv.ClearFaults()
	_, _, err = f.app.Checks.CreateCheckRun(ctx, "octo", "gpu-lib", gateOptions(sha('a')))
	assert.NilError(t, err)
}

// statusSequence runs 40 calls against a server whose faults fire with probability ½.
func statusSequence(t *testing.T, seed uint64) []int {
	f := newFixture(t, WithSeed(seed), WithFault(Fault{Kind: FaultServerError, Path: prPath, Probability: 0.5}))
	_, err := f.srv.AddPullRequest(repoName, PullRequestSpec{HeadRef: "x", HeadSHA: sha('a')})
	assert.NilError(t, err)
	var statuses []int
	for range 40 {
		_, resp, _ := f.app.PullRequests.Get(ctx, "octo", "gpu-lib", 1)
		statuses = append(statuses, resp.StatusCode)
	}
	return statuses
}

func TestProbabilisticFaultsFollowTheSeed(t *testing.T) {
	first := statusSequence(t, 7)
	assert.DeepEqual(t, statusSequence(t, 7), first)
	assert.Check(t, func() bool {
		failures := 0
		for _, s := range first {
			if s == http.StatusInternalServerError {
				failures++
			}
		}
		return failures > 5 && failures < 35
	}(), "about half fail: %v", first)
	assert.Check(t, len(first) == 40)
}
