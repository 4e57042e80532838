package devcli

import (
	"context"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/runpod"
)

func TestCleanupLegacyIsADryRunFirst(t *testing.T) {
	w := newWorld(t)
	rp := runpod.New(w.url, testKey)
	create := func(name string, env map[string]string) string {
		p, err := rp.CreatePod(context.Background(), runpod.CreatePodRequest{Name: name, Image: "ghcr.io/actions/actions-runner:latest",
			GPU: &runpod.CreateGPU{ID: "NVIDIA L4"}, Env: env})
		assert.NilError(t, err)
		return p.ID
	}
	legacy := create("rgpu-12-1-c1", map[string]string{"RUNNER_JIT_CONFIG": "jit-SECRET"})
	other := create("rgpu-notes", nil) // not the lane's name
	tagged := w.ciPod(t)               // rgpu-77-1-c1 with its tags
	assert.Equal(t, w.run("up", "--name", "dev", "--gpus", "L4").code, ExitOK)
	w.clock.Advance(3 * time.Hour)
	young := create("rgpu-13-1-c1", nil)

	r := w.run("cleanup-legacy")
	assert.Equal(t, r.code, ExitOK, r.stderr)
	assert.Check(t, is.Contains(r.stdout, "would delete (dry run; --execute deletes) "+legacy+" (rgpu-12-1-c1"))
	assert.Check(t, is.Contains(r.stdout, "1 untagged legacy pod(s)"))
	for _, id := range []string{other, tagged, young} {
		assert.Check(t, !strings.Contains(r.stdout, id), "pod %s is not legacy:\n%s", id, r.stdout)
	}
	assert.Check(t, !strings.Contains(r.stdout, "SECRET"))
	assert.Equal(t, len(w.live()), 5, "a dry run deletes nothing")

	r = w.run("cleanup-legacy", "--execute")
	assert.Equal(t, r.code, ExitOK, r.stderr)
	assert.Check(t, is.Contains(r.stdout, "deleted "+legacy))
	assert.Equal(t, len(w.live()), 4, "only the legacy pod is gone")

	r = w.run("cleanup-legacy")
	assert.Check(t, is.Contains(r.stdout, "no untagged pod named like the CI lane's"))

	r = w.run("cleanup-legacy", "--min-age", "10m")
	assert.Equal(t, r.code, ExitUsage)
	assert.Check(t, is.Contains(r.stderr, "--min-age 10m0s: want at least 1h0m0s"))
}
