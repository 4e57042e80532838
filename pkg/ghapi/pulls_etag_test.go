package ghapi

import (
	"context"
	"net/http"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// TestGetPullRequestIsConditional: a re-read sends the last usable answer's
// ETag; a 304 returns that answer (GitHub charges no rate limit for it), a 200
// replaces it, and an answer that was never usable is never revived by a 304.
func TestGetPullRequestIsConditional(t *testing.T) {
	const (
		open   = `{"number":7,"state":"open","head":{"sha":"0123456789abcdef0123456789abcdef01234567"},"labels":[{"name":"x"}]}`
		closed = `{"number":7,"state":"closed","head":{"sha":"0123456789abcdef0123456789abcdef01234567"}}`
	)
	notModified := func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNotModified) }
	type read struct {
		answer      http.HandlerFunc
		wantIfMatch string // the If-None-Match the read must send ("" none)
		wantState   string // "" when the read fails
		wantErr     string
	}
	tests := []struct {
		name  string
		reads []read
	}{
		{name: "unchanged: 304 returns the cached answer", reads: []read{
			{answer: respond(http.StatusOK, open, "ETag", `"e1"`), wantState: "open"},
			{answer: notModified, wantIfMatch: `"e1"`, wantState: "open"},
			{answer: notModified, wantIfMatch: `"e1"`, wantState: "open"},
		}},
		{name: "changed: the new answer and its ETag", reads: []read{
			{answer: respond(http.StatusOK, open, "ETag", `"e1"`), wantState: "open"},
			{answer: respond(http.StatusOK, closed, "ETag", `"e2"`), wantIfMatch: `"e1"`, wantState: "closed"},
			{answer: notModified, wantIfMatch: `"e2"`, wantState: "closed"},
		}},
		{name: "no ETag: never conditional", reads: []read{
			{answer: respond(http.StatusOK, open), wantState: "open"},
			{answer: respond(http.StatusOK, open), wantState: "open"},
		}},
		{name: "an unusable answer is not cached", reads: []read{
			{answer: respond(http.StatusOK, `{"number":7}`, "ETag", `"bad"`), wantErr: "unusable answer"},
			{answer: respond(http.StatusOK, open, "ETag", `"e1"`), wantState: "open"},
		}},
		{name: "a 304 without a cached answer is a failure", reads: []read{
			{answer: notModified, wantErr: "304"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newTestEnv(t)
			for i, rd := range tc.reads {
				env.fake.on("GET", "repos/acme/widgets/pulls/7", func(w http.ResponseWriter, r *http.Request) {
					assert.Check(t, is.Equal(r.Header.Get("If-None-Match"), rd.wantIfMatch), "read %d", i)
					rd.answer(w, r)
				})
				pr, err := env.client.GetPullRequest(context.Background(), 7)
				if rd.wantErr != "" {
					assert.Check(t, is.ErrorContains(err, rd.wantErr), "read %d", i)
					continue
				}
				assert.NilError(t, err, "read %d", i)
				assert.Check(t, is.Equal(pr.GetState(), rd.wantState), "read %d", i)
				pr.Labels = nil // a caller's change must not reach the cache
			}
		})
	}
}
