package lanes

import (
	"context"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/reap"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/serverless"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

// TestReapServerlessOrphans runs the real reap binary over Serverless
// attempts of every age: the one past its 30-minute deadline (its runner was
// lost, its run still shows in progress) and the one whose run completed are
// reclaimed and confirmed gone; a fresh running attempt and another
// repository's are untouched.
func TestReapServerlessOrphans(t *testing.T) {
	t.Parallel()
	clock := simclock.NewVirtual(time.Now().UTC().Add(-2 * time.Hour).Truncate(time.Second))
	c, err := cloud.Start(cloud.Options{Clock: clock})
	assert.NilError(t, err)
	t.Cleanup(c.Close)
	policy := reqpolicy.New(reqpolicy.WithClock(clock), reqpolicy.WithSleeper(clock.Sleep))
	rp := runpod.New(c.RunPodURL, cloud.RunPodKey, runpod.WithPolicy(policy))
	w := &reapWorld{Cloud: c, clock: clock, rp: rp, workspace: t.TempDir()}
	setup := func(repository string, runID int64) string {
		name, err := ownership.ServerlessAttemptName(repository, runID, 1)
		assert.NilError(t, err)
		env, err := serverless.TemplateEnv("https://example.com/serverless-worker", slsWorkerSHA, repository, name)
		assert.NilError(t, err)
		// The lane's own requests, as a lost runner's attempt leaves them (the
		// lane runs one attempt of a repository at a time).
		s := serverless.DefaultSettings()
		tpl, err := rp.CreateTemplate(context.Background(), s.TemplateRequest(name+"-tpl", serverless.BootstrapArgs, env))
		assert.NilError(t, err)
		_, err = rp.CreateEndpoint(context.Background(), s.EndpointRequest(name, tpl.ID, nil))
		assert.NilError(t, err)
		return name
	}
	lost := setup(cloud.Repository, w.run(t))   // two hours old, run still in progress
	foreign := setup("org/other-project", 4242) // never this repository's
	clock.Advance(2*time.Hour - 5*time.Minute)
	fresh := setup(cloud.Repository, w.run(t)) // five minutes old, running
	doneRun := w.run(t)
	done := setup(cloud.Repository, doneRun)
	assert.NilError(t, c.GitHub.SetRunStatus(cloud.Repository, doneRun, "completed", "success"))

	res := harness.RunStep(t, w.step("schedule", nil))
	assert.Equal(t, res.ExitCode, 0, res.Stdout)
	rec, raw := w.record(t, res)
	got := map[string]string{}
	for _, r := range rec.Serverless {
		got[r.Attempt] = string(r.Decision) + " " + string(r.Reason)
		if r.Decision == reap.DecisionReclaim {
			assert.Check(t, r.Confirmed, "%s: deletion not confirmed", r.Attempt)
		}
	}
	assert.DeepEqual(t, got, map[string]string{
		lost: "reclaim deadline", done: "reclaim run-over", fresh: "keep run-active",
	})
	live := map[string]bool{}
	for _, r := range c.RunPod.ServerlessResources() {
		if !r.Deleted {
			live[r.Name] = true
		}
	}
	assert.DeepEqual(t, live, map[string]bool{fresh: true, fresh + "-tpl": true, foreign: true, foreign + "-tpl": true})
	assert.Check(t, is.Contains(res.Summary, "### Serverless endpoints and templates"))
	assert.Check(t, is.Contains(res.Summary, "| reclaim | deadline: created"))
	for _, line := range strings.Split(raw+"\n"+res.Stdout, "\n") {
		assert.Check(t, !strings.Contains(line, "RPG_BOOTSTRAP_B64") && (strings.HasPrefix(line, "::add-mask::") || !strings.Contains(line, cloud.RunPodKey)), "leaked: %s", line)
	}
}
