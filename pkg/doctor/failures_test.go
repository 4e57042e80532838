package doctor

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/runpod"
)

// ghError is a failed read as ghapi returns it, with GitHub's answer.
func ghError(status int, message string, header http.Header) error {
	resp := &http.Response{StatusCode: status, Status: fmt.Sprintf("%d %s", status, http.StatusText(status)), Header: header,
		Request: &http.Request{Method: http.MethodGet}}
	return &ghapi.Error{Op: "read it", StatusCode: status, Err: &github.ErrorResponse{Response: resp, Message: message}}
}

// A failed read says what to do for each kind of failure, naming the
// scope or permission GitHub asks for, and never its status line.
func TestFailureSaysWhatToDo(t *testing.T) {
	r := read{what: "the environment runpod-gpu of o/r", scope: "repo", permission: "Environments: read", missing: "check that the environment exists"}
	reset := time.Date(2026, 12, 7, 20, 0, 0, 0, time.UTC)
	tests := []struct {
		name        string
		err         error
		wantProblem string
		wantTodo    string
	}{
		{"expired token", ghError(http.StatusUnauthorized, "Bad credentials", nil), "GitHub refused the token reading the environment runpod-gpu of o/r: it is invalid or expired", "gh auth refresh"},
		{"missing permission", ghError(http.StatusForbidden, "Resource not accessible by personal access token", nil), "the token may not read the environment runpod-gpu of o/r",
			"the scope repo (gh auth refresh -s repo), or a fine-grained token with Environments: read"},
		{"GitHub names the scopes", ghError(http.StatusForbidden, "Must have admin rights", http.Header{"X-Accepted-Oauth-Scopes": {"admin:org, repo"}}),
			"the token may not read", "the scope admin:org, repo (gh auth refresh -s admin:org)"},
		{"not found", ghError(http.StatusNotFound, "Not Found", nil), "GitHub could not find the environment runpod-gpu of o/r, or the token cannot see that", "check that the environment exists; and that GH_TOKEN"},
		{"server error", ghError(http.StatusServiceUnavailable, "Unavailable", nil), "GitHub did not answer reading the environment runpod-gpu of o/r", "retry later"},
		{"time-out", &ghapi.Error{Op: "read it", Err: context.DeadlineExceeded}, "GitHub did not answer", "retry later"},
		{"rate limit", &ghapi.Error{Op: "read it", StatusCode: http.StatusForbidden, Err: &ghapi.RateLimitError{Kind: ghapi.PrimaryRateLimit, Reset: reset}},
			"GitHub's rate limit stopped reading the environment runpod-gpu of o/r", "wait until 2026-12-07T20:00:00Z, then run doctor again"},
		{"another refusal", ghError(http.StatusUnprocessableEntity, "Validation Failed", nil), `GitHub would not let doctor read the environment runpod-gpu of o/r: it answered "Validation Failed"`,
			"check the environment runpod-gpu of o/r in the repository's settings"},
		{"an answer that does not decode", &ghapi.Error{Op: "read it", Err: fmt.Errorf("%w: no state", ghapi.ErrUnusableAnswer)}, "reading the environment runpod-gpu of o/r failed: read it: unusable answer: no state", "run doctor again"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			problem, todo := failure(tc.err, r)
			assert.Check(t, is.Contains(problem, tc.wantProblem))
			assert.Check(t, is.Contains(todo, tc.wantTodo))
			for _, leak := range []string{"401", "403", "404", "422", "503", "HTTP", "Bad credentials", "Not Found"} {
				assert.Check(t, !strings.Contains(problem+todo, leak), "%q leaked: %s / %s", leak, problem, todo)
			}
		})
	}
}

// A failed RunPod call says what to do with the key, or to retry.
func TestRunPodFailureSaysWhatToDo(t *testing.T) {
	for err, want := range map[error]string{
		runpod.ErrUnauthorized:                    "store it as the secret RUNPOD_API_KEY of the environment gpu",
		runpod.ErrForbidden:                       "give the key read and write access to pods",
		runpod.ErrServer:                          "retry later",
		fmt.Errorf("x: %w", runpod.ErrTransport):  "retry later",
		errors.New("something RunPod never says"): "check RUNPOD_API_URL",
	} {
		_, todo := runpodFailure(err, "gpu")
		assert.Check(t, is.Contains(todo, want), "%v", err)
	}
}
