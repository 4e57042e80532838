package ghapi

import (
	"context"
	"net/http"
	"testing"
	"time"

	"gotest.tools/v3/assert"
)

// A create POST answered with a rate limit — a 429, a 403 secondary limit
// or a 403 with the quota spent — was refused unprocessed: the request policy
// sends it again after the wait GitHub asked for, with the same body, so a
// transient limit does not fail the runner mint or the gate's check run.
// Any other failure of such a POST is still not retried (see
// TestGenerateJITConfigIsNeverRetried, TestCreateCheckRunIsNotRetried).
func TestCreatePostsAreRetriedAfterARateLimit(t *testing.T) {
	limits := []struct {
		name     string
		limit    func(now time.Time) http.HandlerFunc
		wantWait time.Duration
	}{
		{name: "429", limit: func(time.Time) http.HandlerFunc { return limited(429, tooManyBody, "", time.Time{}, "5") }, wantWait: 5 * time.Second},
		{name: "403 secondary limit", limit: func(time.Time) http.HandlerFunc { return limited(403, secondaryLimitBody, "", time.Time{}, "30") },
			wantWait: 30 * time.Second},
		{name: "403 secondary limit without hints", limit: func(time.Time) http.HandlerFunc { return limited(403, secondaryLimitBody, "", time.Time{}, "") },
			wantWait: time.Minute},
		{name: "403 quota spent", limit: func(now time.Time) http.HandlerFunc {
			return limited(403, primaryLimitBody, "0", now.Add(42*time.Second), "")
		},
			wantWait: 42 * time.Second},
	}
	const jitBody = `{"name":"gpu-c1","runner_group_id":1,"labels":["gpu-c1"]}`
	tests := []struct {
		name string
		path string
		call func(context.Context, *Client) error
		body string
		ok   func(*testing.T) http.HandlerFunc
	}{
		{
			name: "JIT config", path: jitPath, body: jitBody,
			call: func(ctx context.Context, c *Client) error {
				_, err := c.GenerateJITConfig(ctx, JITRequest{Name: "gpu-c1", Labels: []string{"gpu-c1"}, RunnerGroupID: 1})
				return err
			},
			ok: func(t *testing.T) http.HandlerFunc {
				return respondFile(t, http.StatusCreated, "jit_config_created.json")
			},
		},
		{
			name: "check run", path: "repos/acme/widgets/check-runs", body: `{"name":"CI GPU gate","head_sha":"` + headSHA + `"}`,
			call: func(ctx context.Context, c *Client) error {
				_, err := c.CreateCheckRun(ctx, CheckRunInput{Name: "CI GPU gate", HeadSHA: headSHA})
				return err
			},
			ok: func(t *testing.T) http.HandlerFunc {
				return respondFile(t, http.StatusCreated, "check_run_created.json")
			},
		},
	}
	for _, tt := range tests {
		for _, l := range limits {
			t.Run(tt.name+"/"+l.name, func(t *testing.T) {
				env := newTestEnv(t)
				env.fake.on("POST", tt.path, expectJSONBody(t, tt.body, l.limit(env.clock.Now())))
				env.fake.on("POST", tt.path, expectJSONBody(t, tt.body, tt.ok(t)))

				assert.NilError(t, tt.call(context.Background(), env.client))
				assert.DeepEqual(t, env.recordedWaits(), []time.Duration{l.wantWait})
			})
		}
	}
}
