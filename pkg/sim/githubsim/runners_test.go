package githubsim

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func newJITRequest(name string, labels ...string) *github.GenerateJITConfigRequest {
	return &github.GenerateJITConfigRequest{Name: name, RunnerGroupID: 1, Labels: labels}
}

func TestGenerateRepoJITConfig(t *testing.T) {
	f := newFixture(t)

	jit, resp, err := f.app.Actions.GenerateRepoJITConfig(ctx, "octo", "gpu-lib", newJITRequest("rp-1-c1", "self-hosted", "rp-1-c1"))
	assert.NilError(t, err)
	assert.Equal(t, resp.StatusCode, http.StatusCreated)
	assert.Equal(t, jit.GetRunner().GetName(), "rp-1-c1")
	assert.Equal(t, jit.GetRunner().GetStatus(), "offline", "a minted runner exists, offline, until it connects")
	assert.Equal(t, jit.GetRunner().GetBusy(), false)
	var labels []string
	for _, l := range jit.GetRunner().Labels {
		labels = append(labels, l.GetName())
		assert.Equal(t, l.GetType(), "custom")
	}
	assert.DeepEqual(t, labels, []string{"self-hosted", "rp-1-c1"})

	raw, err := base64.StdEncoding.DecodeString(jit.GetEncodedJITConfig())
	assert.NilError(t, err, "the encoded config is base64")
	var payload jitPayload
	assert.NilError(t, json.Unmarshal(raw, &payload), "of JSON")
	assert.Equal(t, payload.RunnerID, jit.GetRunner().GetID())
	assert.Check(t, len(payload.Secret) >= 32, "the secret is long and random")
	assert.Check(t, !strings.Contains(payload.Secret, "rp-1-c1"))
	assert.Equal(t, payload.ConnectURL, f.ts.URL+"/_sim/runners/connect")
}

func TestGenerateOrgJITConfig(t *testing.T) {
	f := newFixture(t)

	jit, _, err := f.app.Actions.GenerateOrgJITConfig(ctx, "octo", newJITRequest("shared-name", "gpu"))
	assert.NilError(t, err)
	_, _, err = f.app.Actions.GenerateRepoJITConfig(ctx, "octo", "gpu-lib", newJITRequest("shared-name", "gpu"))
	assert.NilError(t, err, "names are unique per scope, and org and repo are different scopes")

	orgRunners, _, err := f.app.Actions.ListOrganizationRunners(ctx, "octo", nil)
	assert.NilError(t, err)
	assert.Equal(t, orgRunners.TotalCount, 1)
	assert.Equal(t, orgRunners.Runners[0].GetID(), jit.GetRunner().GetID())

	_, _, err = f.app.Actions.GenerateOrgJITConfig(ctx, "nobody", newJITRequest("x", "gpu"))
	assert.Equal(t, statusOf(err), http.StatusNotFound)
}

func TestGenerateJITConfigRefusals(t *testing.T) {
	tooMany := make([]string, 101)
	for i := range tooMany {
		tooMany[i] = fmt.Sprintf("l%d", i)
	}
	tests := []struct {
		name       string
		body       any
		wantStatus int
		wantMsg    string
	}{
		{
			name:       "runner_group_id missing",
			body:       map[string]any{"name": "r", "labels": []string{"gpu"}},
			wantStatus: http.StatusUnprocessableEntity,
			wantMsg:    "missing required key: runner_group_id",
		},
		{
			name:       "unknown runner group",
			body:       map[string]any{"name": "r", "runner_group_id": 0, "labels": []string{"gpu"}},
			wantStatus: http.StatusNotFound,
			wantMsg:    "Not Found",
		},
		{
			name:       "no labels",
			body:       map[string]any{"name": "r", "runner_group_id": 1, "labels": []string{}},
			wantStatus: http.StatusUnprocessableEntity,
			wantMsg:    "labels must have between 1 and 100 items, got 0",
		},
		{
			name:       "101 labels",
			body:       map[string]any{"name": "r", "runner_group_id": 1, "labels": tooMany},
			wantStatus: http.StatusUnprocessableEntity,
			wantMsg:    "labels must have between 1 and 100 items, got 101",
		},
		{
			name:       "name missing",
			body:       map[string]any{"runner_group_id": 1, "labels": []string{"gpu"}},
			wantStatus: http.StatusUnprocessableEntity,
			wantMsg:    "missing required key: name",
		},
		{
			name:       "not JSON",
			body:       "nope",
			wantStatus: http.StatusBadRequest,
			wantMsg:    "Problems parsing JSON",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			_, err := f.raw(t, f.app, "POST", "repos/octo/gpu-lib/actions/runners/generate-jitconfig", tt.body, nil)
			var er *github.ErrorResponse
			assert.Assert(t, errors.As(err, &er))
			assert.Equal(t, er.Response.StatusCode, tt.wantStatus)
			assert.Equal(t, er.Message, tt.wantMsg)
			assert.Equal(t, len(f.srv.Runners()), 0, "a refused mint registers nothing")
		})
	}
}

func TestGenerateJITConfigDuplicateName(t *testing.T) {
	f := newFixture(t)
	first, _, err := f.app.Actions.GenerateRepoJITConfig(ctx, "octo", "gpu-lib", newJITRequest("rp-9-c1", "gpu"))
	assert.NilError(t, err)

	_, _, err = f.app.Actions.GenerateRepoJITConfig(ctx, "octo", "gpu-lib", newJITRequest("rp-9-c1", "gpu"))
	var er *github.ErrorResponse
	assert.Assert(t, errors.As(err, &er))
	assert.Equal(t, er.Response.StatusCode, http.StatusConflict)
	assert.Equal(t, er.Message, "Already exists - A runner with the name rp-9-c1 already exists.")

	// The documented recovery: look the runner up by name.
	found, _, err := f.app.Actions.ListRunners(ctx, "octo", "gpu-lib", &github.ListRunnersOptions{Name: github.String("rp-9-c1")})
	assert.NilError(t, err)
	assert.Equal(t, found.TotalCount, 1)
	assert.Equal(t, found.Runners[0].GetID(), first.GetRunner().GetID())
}

func TestRunnerConnectLifecycle(t *testing.T) {
	f := newFixture(t)
	jit, _, err := f.app.Actions.GenerateRepoJITConfig(ctx, "octo", "gpu-lib", newJITRequest("rp-2-c1", "rp-2-c1"))
	assert.NilError(t, err)
	byName := &github.ListRunnersOptions{Name: github.String("rp-2-c1")}

	r, err := f.srv.RunnerConnect(jit.GetEncodedJITConfig())
	assert.NilError(t, err)
	assert.Check(t, r.Online)
	listed, _, err := f.app.Actions.ListRunners(ctx, "octo", "gpu-lib", byName)
	assert.NilError(t, err)
	assert.Equal(t, listed.Runners[0].GetStatus(), "online")

	_, err = f.srv.RunnerConnect(jit.GetEncodedJITConfig())
	assert.Check(t, errors.Is(err, ErrConflict), "a JIT config is single use: %v", err)
	assert.Check(t, !strings.Contains(err.Error(), jit.GetEncodedJITConfig()), "errors never carry the config")

	assert.NilError(t, f.srv.RunnerDisconnect(jit.GetEncodedJITConfig()))
	listed, _, err = f.app.Actions.ListRunners(ctx, "octo", "gpu-lib", byName)
	assert.NilError(t, err)
	assert.Equal(t, listed.Runners[0].GetStatus(), "offline")
}

func TestRunnerConnectEndpoint(t *testing.T) {
	f := newFixture(t)
	jit, _, err := f.app.Actions.GenerateRepoJITConfig(ctx, "octo", "gpu-lib", newJITRequest("rp-3-c1", "rp-3-c1"))
	assert.NilError(t, err)
	raw, _ := base64.StdEncoding.DecodeString(jit.GetEncodedJITConfig())
	var payload jitPayload
	assert.NilError(t, json.Unmarshal(raw, &payload))

	post := func(config string) int {
		body := strings.NewReader(fmt.Sprintf(`{"jit_config": %q}`, config))
		resp, err := http.Post(payload.ConnectURL, "application/json", body)
		assert.NilError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	forged, _ := json.Marshal(jitPayload{RunnerID: payload.RunnerID, RunnerName: payload.RunnerName, Secret: "guess"})

	assert.Equal(t, post(base64.StdEncoding.EncodeToString(forged)), http.StatusUnauthorized, "knowing the name is not enough")
	assert.Equal(t, post("not base64!"), http.StatusUnauthorized)
	assert.Equal(t, post(jit.GetEncodedJITConfig()), http.StatusOK)
	assert.Equal(t, post(jit.GetEncodedJITConfig()), http.StatusConflict, "second connect with the same config")
	assert.Check(t, f.srv.Runners()[0].Online)
}

func TestRemoveRunner(t *testing.T) {
	f := newFixture(t)
	jit, _, err := f.app.Actions.GenerateRepoJITConfig(ctx, "octo", "gpu-lib", newJITRequest("rp-4-c1", "rp-4-c1"))
	assert.NilError(t, err)
	id := jit.GetRunner().GetID()

	resp, err := f.app.Actions.RemoveRunner(ctx, "octo", "gpu-lib", id)
	assert.NilError(t, err)
	assert.Equal(t, resp.StatusCode, http.StatusNoContent)
	_, _, err = f.app.Actions.GetRunner(ctx, "octo", "gpu-lib", id)
	assert.Equal(t, statusOf(err), http.StatusNotFound)

	_, err = f.srv.RunnerConnect(jit.GetEncodedJITConfig())
	assert.Check(t, errors.Is(err, ErrGone), "a removed runner's config no longer connects: %v", err)
}

func TestRemoveBusyRunnerRefused(t *testing.T) {
	f := newFixture(t)
	_, err := f.srv.AddWorkflowRun(WorkflowRunSpec{
		Repo: repoName, WorkflowPath: ".github/workflows/gpu.yml",
		Jobs: []JobSpec{{Name: "gpu-tests", Labels: []string{"rp-5-c1"}, Steps: []StepSpec{{Name: "test", Duration: time.Minute}}}},
	})
	assert.NilError(t, err)
	jit, _, err := f.app.Actions.GenerateRepoJITConfig(ctx, "octo", "gpu-lib", newJITRequest("rp-5-c1", "rp-5-c1"))
	assert.NilError(t, err)
	_, err = f.srv.RunnerConnect(jit.GetEncodedJITConfig())
	assert.NilError(t, err)

	_, err = f.app.Actions.RemoveRunner(ctx, "octo", "gpu-lib", jit.GetRunner().GetID())
	assert.Equal(t, statusOf(err), http.StatusUnprocessableEntity)
}

func TestOfflineRunnerIsReapedAfterADay(t *testing.T) {
	f := newFixture(t)
	_, _, err := f.app.Actions.GenerateRepoJITConfig(ctx, "octo", "gpu-lib", newJITRequest("never-started", "gpu"))
	assert.NilError(t, err)

	f.clock.Advance(24 * time.Hour)
	assert.Equal(t, len(f.srv.Runners()), 1, "kept for a day")
	f.clock.Advance(time.Second)
	assert.Equal(t, len(f.srv.Runners()), 0, "an ephemeral runner offline for over a day is removed")
}

func TestListRunnersPagination(t *testing.T) {
	f := newFixture(t)
	var want []string
	for i := range 7 {
		name := fmt.Sprintf("rp-6-c%d", i+1)
		want = append(want, name)
		_, _, err := f.app.Actions.GenerateRepoJITConfig(ctx, "octo", "gpu-lib", newJITRequest(name, name))
		assert.NilError(t, err)
	}

	opts := &github.ListRunnersOptions{ListOptions: github.ListOptions{PerPage: 3}}
	var got []string
	var pages int
	for {
		page, resp, err := f.app.Actions.ListRunners(ctx, "octo", "gpu-lib", opts)
		assert.NilError(t, err)
		assert.Equal(t, page.TotalCount, 7)
		assert.Equal(t, resp.LastPage, map[bool]int{true: 3, false: 0}[resp.NextPage != 0])
		for _, r := range page.Runners {
			got = append(got, r.GetName())
		}
		pages++
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	assert.Equal(t, pages, 3)
	assert.DeepEqual(t, got, want)
}

func TestDecodeJITConfig(t *testing.T) {
	valid := base64.StdEncoding.EncodeToString([]byte(`{"runner_id":5,"runner_name":"a","secret":"s3cret"}`))
	tests := []struct {
		name    string
		encoded string
		wantErr bool
	}{
		{name: "valid", encoded: valid},
		{name: "surrounding whitespace", encoded: "\n" + valid + " "},
		{name: "not base64", encoded: "%%%", wantErr: true},
		{name: "not JSON", encoded: base64.StdEncoding.EncodeToString([]byte("hello")), wantErr: true},
		{name: "no secret", encoded: base64.StdEncoding.EncodeToString([]byte(`{"runner_id":5}`)), wantErr: true},
		{name: "no runner id", encoded: base64.StdEncoding.EncodeToString([]byte(`{"secret":"x"}`)), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := decodeJITConfig(tt.encoded)
			if tt.wantErr {
				assert.Check(t, errors.Is(err, ErrUnauthorized))
				return
			}
			assert.NilError(t, err)
			assert.Check(t, is.Equal(p.Secret, "s3cret"))
		})
	}
}
