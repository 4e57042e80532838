package devcli

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

// recorder fails every request and remembers where it went.
type recorder struct {
	mu   sync.Mutex
	hits []string
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hits = append(r.hits, req.Method+" "+req.URL.Redacted())
	return nil, errors.New("recorder: no network")
}

// The command line and doctor refuse a plain-http or user-info API URL
// before any client exists: the RunPod key and the GitHub token are never
// sent to it, and the error names the variable and the value (user info
// hidden). Loopback http is the simulated cloud's and stays allowed.
func TestCLIRefusesPlainHTTPAndUserInfoAPIURLs(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		wantErr string
	}{
		{name: "ls, plain http", args: []string{"ls"}, env: map[string]string{"RUNPOD_API_URL": "http://api.runpod.example"},
			wantErr: `RUNPOD_API_URL="http://api.runpod.example": want an https:// URL without user info, query or fragment (http:// only on a loopback host, for simulators and tests), not scheme http on api.runpod.example`},
		{name: "ls, user info", args: []string{"ls"}, env: map[string]string{"RUNPOD_API_URL": "https://me:hunter2@api.runpod.io"},
			wantErr: `RUNPOD_API_URL="https://***@api.runpod.io": want an https:// URL`},
		{name: "up, plain http", args: []string{"up", "--name", "dev", "--gpus", "L4"}, env: map[string]string{"RUNPOD_API_URL": "http://10.0.0.5:8080"},
			wantErr: `RUNPOD_API_URL="http://10.0.0.5:8080": want an https:// URL`},
		{name: "down, user info on loopback", args: []string{"down", "dev", "--yes"}, env: map[string]string{"RUNPOD_API_URL": "http://me:pw@127.0.0.1:9"},
			wantErr: `RUNPOD_API_URL="http://***@127.0.0.1:9": want an https:// URL without user info, query or fragment (http:// only on a loopback host, for simulators and tests), not user info`},
		{name: "doctor, GitHub over plain http", args: []string{"doctor", "--repo", "org/app"},
			env:     map[string]string{"GH_TOKEN": "ghp_ADMINtokenNEVERsent", "GITHUB_API_URL": "http://github.example/api/v3"},
			wantErr: `GITHUB_API_URL="http://github.example/api/v3": want an https:// URL`},
		{name: "doctor, RunPod with user info", args: []string{"doctor", "--repo", "org/app"},
			env:     map[string]string{"GH_TOKEN": "ghp_ADMINtokenNEVERsent", "RUNPOD_API_URL": "https://u:p@api.runpod.io"},
			wantErr: `RUNPOD_API_URL="https://***@api.runpod.io": want an https:// URL`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"RUNPOD_API_KEY": testKey}
			for k, v := range tc.env {
				env[k] = v
			}
			rec := &recorder{}
			clock := simclock.NewVirtual(runpodsim.Epoch)
			var stdout, stderr bytes.Buffer
			code := Main(context.Background(), Env{Args: tc.args, Getenv: func(k string) string { return env[k] }, Stdout: &stdout, Stderr: &stderr,
				Stdin: strings.NewReader(""), HTTPClient: &http.Client{Transport: rec}, Home: t.TempDir(), User: "alice",
				Clock: clock, Sleep: clock.Sleep})
			assert.Check(t, is.Equal(code, ExitUsage), stderr.String())
			assert.Check(t, is.Contains(stderr.String(), tc.wantErr))
			assert.Check(t, is.Len(rec.hits, 0), "a request left before the URL was checked")
			for _, secret := range []string{"hunter2", ":pw@", ":p@", testKey, "ghp_ADMINtokenNEVERsent"} {
				assert.Check(t, !strings.Contains(stdout.String()+stderr.String(), secret), "%q printed", secret)
			}
		})
	}
}
