package ghapi

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

const jitPath = "repos/acme/widgets/actions/runners/generate-jitconfig"

func TestGenerateJITConfigCreated(t *testing.T) {
	tests := []struct {
		name     string
		req      JITRequest
		path     string
		wantBody string
	}{
		{
			name:     "repo scope",
			req:      JITRequest{Name: "gpu-c1", Labels: []string{"gpu-c1"}, RunnerGroupID: 1},
			path:     jitPath,
			wantBody: `{"name":"gpu-c1","runner_group_id":1,"labels":["gpu-c1"]}`,
		},
		{
			name:     "org scope with work folder",
			req:      JITRequest{Name: "gpu-c1", Labels: []string{"self-hosted", "gpu-c1"}, RunnerGroupID: 3, WorkFolder: "_gpu", Scope: ScopeOrg},
			path:     "orgs/acme/actions/runners/generate-jitconfig",
			wantBody: `{"name":"gpu-c1","runner_group_id":3,"labels":["self-hosted","gpu-c1"],"work_folder":"_gpu"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newTestEnv(t)
			env.fake.on("POST", tt.path, expectJSONBody(t, tt.wantBody, respondFile(t, http.StatusCreated, "jit_config_created.json")))

			cfg, err := env.client.GenerateJITConfig(context.Background(), tt.req)
			assert.NilError(t, err)
			const encoded = "eyJULkpJVC5jb25maWciOiJzZWNyZXQtcnVubmVyLWNyZWRlbnRpYWxzIn0="
			assert.DeepEqual(t, *cfg, JITConfig{RunnerID: 23, Name: "gpu-c1", EncodedConfig: encoded})
			assert.Equal(t, env.client.Redactor().Redact("RUNNER_JIT_CONFIG="+encoded), "RUNNER_JIT_CONFIG=***")
		})
	}
}

func TestGenerateJITConfigConflictLooksRunnerUp(t *testing.T) {
	tests := []struct {
		name       string
		lookup     func(t *testing.T, f *fakeGitHub)
		wantRunner int64 // 0: no runner in the error
		wantLookup string
	}{
		{
			name: "found on the second page",
			lookup: func(t *testing.T, f *fakeGitHub) {
				f.on("GET", "repos/acme/widgets/actions/runners?name=gpu-c1&per_page=100&page=1",
					withNextPage(2, 2, respondFile(t, http.StatusOK, "runners_page1.json")))
				f.on("GET", "repos/acme/widgets/actions/runners?name=gpu-c1&per_page=100&page=2",
					respondFile(t, http.StatusOK, "runners_page2.json"))
			},
			wantRunner: 23,
		},
		{
			name: "gone by the time of the lookup",
			lookup: func(t *testing.T, f *fakeGitHub) {
				f.on("GET", "repos/acme/widgets/actions/runners?name=gpu-c1", respondFile(t, http.StatusOK, "runners_empty.json"))
			},
		},
		{
			name: "lookup fails",
			lookup: func(t *testing.T, f *fakeGitHub) {
				f.on("GET", "repos/acme/widgets/actions/runners?name=gpu-c1", respond(http.StatusForbidden, `{"message":"Resource not accessible by integration"}`))
			},
			wantLookup: "find runner gpu-c1: GET ",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newTestEnv(t)
			// Exactly one POST: the stub registry fails the test on a second.
			env.fake.on("POST", jitPath, respondFile(t, http.StatusConflict, "jit_config_conflict.json"))
			tt.lookup(t, env.fake)

			cfg, err := env.client.GenerateJITConfig(context.Background(), JITRequest{Name: "gpu-c1", Labels: []string{"gpu-c1"}, RunnerGroupID: 1})
			assert.Check(t, is.Nil(cfg))
			assert.ErrorIs(t, err, ErrRunnerExists)
			assert.ErrorContains(t, err, `generate JIT config: runner "gpu-c1" already exists`)
			var exists *RunnerExistsError
			assert.Assert(t, errors.As(err, &exists))
			assert.Equal(t, exists.Runner.GetID(), tt.wantRunner)
			if tt.wantLookup == "" {
				assert.NilError(t, exists.LookupErr)
			} else {
				assert.ErrorContains(t, exists.LookupErr, tt.wantLookup)
			}
		})
	}
}

func TestGenerateJITConfigIsNeverRetried(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		wantErr string
	}{
		{name: "502", handler: respond(http.StatusBadGateway, `{"message":"Server Error"}`), wantErr: "502 Server Error"},
		{name: "no config in answer", handler: respond(http.StatusCreated, `{"runner":{"id":23,"name":"gpu-c1"}}`), wantErr: "no encoded_jit_config"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newTestEnv(t)
			env.fake.on("POST", jitPath, tt.handler)
			_, err := env.client.GenerateJITConfig(context.Background(), JITRequest{Name: "gpu-c1", Labels: []string{"gpu-c1"}, RunnerGroupID: 1})
			assert.ErrorContains(t, err, "generate JIT config: ")
			assert.ErrorContains(t, err, tt.wantErr)
			assert.Check(t, !errors.Is(err, ErrRunnerExists))
		})
	}
}

func TestGenerateJITConfigRejectsBadRequests(t *testing.T) {
	tests := []struct {
		name    string
		req     JITRequest
		noOrg   bool
		wantErr string
	}{
		{name: "no name", req: JITRequest{Labels: []string{"x"}, RunnerGroupID: 1}, wantErr: "JIT runner name is empty"},
		{name: "control character", req: JITRequest{Name: "gpu\n", Labels: []string{"x"}, RunnerGroupID: 1}, wantErr: "contains a control character"},
		{name: "no group", req: JITRequest{Name: "gpu", Labels: []string{"x"}}, wantErr: "runner group id is 0"},
		{name: "no labels", req: JITRequest{Name: "gpu", RunnerGroupID: 1}, wantErr: "has 0 labels; want 1 to 100"},
		{name: "too many labels", req: JITRequest{Name: "gpu", RunnerGroupID: 1, Labels: make([]string, 101)}, wantErr: "has 101 labels"},
		{name: "empty label", req: JITRequest{Name: "gpu", RunnerGroupID: 1, Labels: []string{"a", ""}}, wantErr: "JIT label 2 is empty"},
		{name: "comma label", req: JITRequest{Name: "gpu", RunnerGroupID: 1, Labels: []string{"a,b"}}, wantErr: `JIT label "a,b" contains a comma`},
		{name: "unknown scope", req: JITRequest{Name: "gpu", RunnerGroupID: 1, Labels: []string{"a"}, Scope: "enterprise"}, wantErr: `scope "enterprise": want "repo" or "org"`},
		{name: "org scope without org", req: JITRequest{Name: "gpu", RunnerGroupID: 1, Labels: []string{"a"}, Scope: ScopeOrg}, noOrg: true, wantErr: `scope "org" needs Options.Org`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newTestEnv(t, func(o *Options) {
				if tt.noOrg {
					o.Org = ""
				}
			})
			_, err := env.client.GenerateJITConfig(context.Background(), tt.req)
			assert.ErrorContains(t, err, tt.wantErr)
		})
	}
}

func TestRunnerByName(t *testing.T) {
	tests := []struct {
		name   string
		scope  Scope
		stubs  func(t *testing.T, f *fakeGitHub)
		wantID int64
	}{
		{
			name: "exact match on a later page",
			stubs: func(t *testing.T, f *fakeGitHub) {
				f.on("GET", "repos/acme/widgets/actions/runners?name=gpu-c1&page=1", withNextPage(2, 2, respondFile(t, http.StatusOK, "runners_page1.json")))
				f.on("GET", "repos/acme/widgets/actions/runners?name=gpu-c1&page=2", respondFile(t, http.StatusOK, "runners_page2.json"))
			},
			wantID: 23,
		},
		{
			name: "only a longer name matches the filter",
			stubs: func(t *testing.T, f *fakeGitHub) {
				f.on("GET", "repos/acme/widgets/actions/runners?name=gpu-c1", respondFile(t, http.StatusOK, "runners_page1.json"))
			},
		},
		{
			name:  "org scope",
			scope: ScopeOrg,
			stubs: func(t *testing.T, f *fakeGitHub) {
				f.on("GET", "orgs/acme/actions/runners?name=gpu-c1&per_page=100", respondFile(t, http.StatusOK, "runners_page2.json"))
			},
			wantID: 23,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newTestEnv(t)
			tt.stubs(t, env.fake)
			runner, found, err := env.client.RunnerByName(context.Background(), "gpu-c1", tt.scope)
			assert.NilError(t, err)
			assert.Equal(t, found, tt.wantID != 0)
			assert.Equal(t, runner.GetID(), tt.wantID)
		})
	}
}

func TestDeleteRunner(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		wantErr string
	}{
		{name: "deleted", handler: func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }},
		{name: "already gone", handler: respond(http.StatusNotFound, `{"message":"Not Found"}`)},
		{name: "busy", handler: respond(http.StatusUnprocessableEntity, `{"message":"Bad request - Runner \"gpu-c1\" is still running a job\""}`), wantErr: "delete runner 23: DELETE "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newTestEnv(t)
			env.fake.on("DELETE", "repos/acme/widgets/actions/runners/23", tt.handler)
			err := env.client.DeleteRunner(context.Background(), 23, ScopeRepo)
			if tt.wantErr == "" {
				assert.NilError(t, err)
				return
			}
			assert.ErrorContains(t, err, tt.wantErr)
			assert.ErrorContains(t, err, "still running a job")
		})
	}
}
