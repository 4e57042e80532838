package cloud_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/poll"

	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/smoke/smoketest"
)

// syncBuffer is a bytes.Buffer that RunCLI writes while the test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

var printedRE = regexp.MustCompile(`(?m)^([a-z0-9-]+): +(.*)$`)

func TestRunCLIServesUntilCancelled(t *testing.T) {
	tests := []struct {
		name          string
		args          []string
		wantMode      string
		wantRunnerDir bool
	}{
		{name: "model mode", args: []string{"-seed", "7", "-env", filepath.Join(t.TempDir(), "simcloud.env")}, wantMode: "model (seed 7, real clock)"},
		{name: "process mode", args: []string{"-mode", "process", "-env", filepath.Join(t.TempDir(), "simcloud.env")}, wantMode: "process (seed 1, real clock)", wantRunnerDir: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var out syncBuffer
			done := make(chan error, 1)
			go func() { done <- cloud.RunCLI(ctx, tt.args, &out) }()

			var early error
			poll.WaitOn(t, func(poll.LogT) poll.Result {
				select {
				case early = <-done:
					return poll.Success()
				default:
				}
				if strings.Contains(out.String(), "simcloud: serving") {
					return poll.Success()
				}
				return poll.Continue("waiting for the URLs")
			}, poll.WithTimeout(60*time.Second), poll.WithDelay(10*time.Millisecond))
			if errors.Is(early, smoketest.ErrNoCompiler) {
				t.Skipf("skipping: %v", early)
			}
			assert.NilError(t, early, "run returned before serving:\n%s", out.String())
			assert.Assert(t, is.Contains(out.String(), "simcloud: serving"), "run returned before serving")

			printed := map[string]string{}
			for _, m := range printedRE.FindAllStringSubmatch(out.String(), -1) {
				printed[m[1]] = m[2]
			}
			assert.Check(t, is.Equal(printed["mode"], tt.wantMode))
			assert.Check(t, is.Equal(printed["repository"], cloud.Repository))
			assert.Check(t, is.Equal(printed["github-token"], cloud.GitHubToken))
			assert.Check(t, is.Equal(printed["runner-dir"] != "", tt.wantRunnerDir))
			// The printed URL and key reach the simulated RunPod.
			gpus, err := runpod.New(printed["runpod-api-url"], printed["runpod-api-key"]).ListGPUTypes(ctx, runpod.GPUQuery{})
			assert.NilError(t, err)
			assert.Check(t, len(gpus) > 0)
			// And the Serverless job host like the rest: an unknown endpoint is a 404, not a missing route.
			_, err = runpod.NewJobClient(printed["runpod-job-url"], printed["runpod-api-key"]).Health(ctx, "nosuchendpoint")
			assert.Check(t, errors.Is(err, runpod.ErrNotFound), "%v", err)
			env, err := os.ReadFile(printed["env"])
			assert.NilError(t, err)
			assert.Check(t, is.Contains(string(env), "export RUNPOD_JOB_URL="+printed["runpod-job-url"]+"\n"))
			assert.Check(t, is.Contains(string(env), "export RUNPOD_API_KEY="+cloud.RunPodKey+"\n"))

			cancel()
			assert.NilError(t, <-done)
		})
	}
}

func TestRunCLIRejectsBadArguments(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "unknown mode", args: []string{"-mode", "virtual"}, wantErr: `-mode "virtual": want model or process`},
		{name: "unknown flag", args: []string{"-fast"}, wantErr: "flag provided but not defined: -fast"},
		{name: "stray argument", args: []string{"serve"}, wantErr: `unexpected argument "serve"`},
		{name: "bad seed", args: []string{"-seed", "-1"}, wantErr: `invalid value "-1" for flag -seed`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := cloud.RunCLI(context.Background(), tt.args, &out)
			assert.Check(t, is.ErrorContains(err, tt.wantErr))
			assert.Check(t, !strings.Contains(out.String(), "simcloud: serving"))
		})
	}
}
