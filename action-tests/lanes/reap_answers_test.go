package lanes

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/reap"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

// reapBareWorld is a simulated cloud with no pods whose virtual clock starts
// `back` before the real now; the reaper binary reads the wall clock, so a
// pod created at the start is `back` old when it sweeps.
func reapBareWorld(t *testing.T, back time.Duration) *reapWorld {
	t.Helper()
	clock := simclock.NewVirtual(time.Now().UTC().Add(-back).Truncate(time.Second))
	market := testMarket(testHost("h1", reapGPU, true))
	market.Hosts[0].GPUCount = 64
	c, err := cloud.Start(cloud.Options{
		Clock: clock, Market: market, Balance: 1e6,
		Hosts: runpodsim.NewModelRunner(clock, runpodsim.ModelConfig{ProofTime: time.Second}),
	})
	assert.NilError(t, err)
	t.Cleanup(c.Close)
	return &reapWorld{Cloud: c, clock: clock, rp: runpod.New(c.RunPodURL, cloud.RunPodKey), workspace: t.TempDir(), want: map[string]string{}}
}

// simAnswer is the simulated GitHub's own answer to GET path (relative to the repository).
func (w *reapWorld) simAnswer(t *testing.T, path string) []byte {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, w.GitHubURL+"/repos/"+cloud.Repository+path, nil)
	assert.NilError(t, err)
	req.Header.Set("Authorization", "Bearer "+cloud.GitHubToken)
	resp, err := http.DefaultClient.Do(req)
	assert.NilError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	assert.NilError(t, err)
	assert.Equal(t, resp.StatusCode, http.StatusOK, string(body))
	return body
}

// answerFor makes GitHub answer every GET of path (relative to the
// repository) with body: another run's record, a wrong-but-valid answer.
func (w *reapWorld) answerFor(path string, body []byte) {
	w.GitHub.AddRewrite(githubsim.Rewrite{Method: http.MethodGet, Path: "/repos/" + cloud.Repository + path,
		Body: func(int, []byte) []byte { return body }})
}

func reapPodRecord(t *testing.T, rec reap.Record, podID string) reap.PodRecord {
	t.Helper()
	i := slices.IndexFunc(rec.Pods, func(p reap.PodRecord) bool { return p.PodID == podID })
	assert.Assert(t, i >= 0, "pod %s is in the record", podID)
	return rec.Pods[i]
}

// GitHub answering with another run's record decides nothing.
func TestReapRunAnswerAboutAnotherRunIsNotTrusted(t *testing.T) {
	w := reapBareWorld(t, 3*time.Hour)
	// old's attempt 1 has a pod three hours old; old is now at attempt 2, in progress.
	old := w.run(t)
	oldPod := w.owned(t, w.tags(old, 1, 1))
	w.clock.Advance(2*time.Hour + 20*time.Minute)
	assert.NilError(t, w.GitHub.SetRunStatus(cloud.Repository, old, "completed", "failure"))
	_, err := w.GitHub.RerunWorkflowRun(cloud.Repository, old, nil)
	assert.NilError(t, err)
	assert.NilError(t, w.GitHub.SetRunStatus(cloud.Repository, old, "in_progress", ""))

	// mine is in progress with a young pod; done is another run, completed long ago.
	mine, done, active := w.run(t), w.run(t), w.run(t)
	minePod := w.owned(t, w.tags(mine, 1, 1))
	assert.NilError(t, w.GitHub.SetRunStatus(cloud.Repository, done, "completed", "success"))
	w.clock.Advance(30 * time.Minute)

	// GitHub answers mine with done's record (completed 30 minutes ago: the
	// pod would be deleted), and old with active's (attempt 1 in progress:
	// old's newer attempt 2 would be cancelled).
	w.answerFor(fmt.Sprintf("/actions/runs/%d", mine), w.simAnswer(t, fmt.Sprintf("/actions/runs/%d", done)))
	w.answerFor(fmt.Sprintf("/actions/runs/%d", old), w.simAnswer(t, fmt.Sprintf("/actions/runs/%d", active)))

	res := harness.RunStep(t, w.step("schedule", nil))
	rec, raw := w.record(t, res)
	assert.Equal(t, reapDecisions(rec)[minePod], string(reap.DecisionKeep)+" "+string(reap.ReasonRunMismatch), res.Stdout)
	mineRec := reapPodRecord(t, rec, minePod)
	assert.Check(t, is.Contains(mineRec.Detail, fmt.Sprintf("asked for run %d", mine)))
	assert.Check(t, is.Contains(mineRec.Detail, fmt.Sprintf("answered with run %d", done)))
	assert.Check(t, is.Contains(mineRec.Detail, "left to the 2h0m0s backstop"))
	assert.Check(t, !slices.Contains(w.deleted(), minePod), "another run's state never deletes a pod")

	// The old pod is past the backstop: reclaimed whatever the answer, but
	// its run is not cancelled on another run's state, and the sweep says so.
	oldRec := reapPodRecord(t, rec, oldPod)
	assert.Equal(t, string(oldRec.Decision)+" "+string(oldRec.Reason), string(reap.DecisionReclaim)+" "+string(reap.ReasonLifetime))
	assert.DeepEqual(t, w.deleted(), []string{oldPod})
	assert.Check(t, is.Len(w.GitHub.Cancellations(), 0), "no run is cancelled on another run's record")
	assert.Check(t, is.Contains(oldRec.CancelError, fmt.Sprintf("answered with run %d", active)))
	assert.Equal(t, res.ExitCode, 1, "an untrusted answer fails the sweep visibly")
	assert.Check(t, is.Contains(res.Stdout, "deleted, but the owning run's cancellation failed: "+oldPod))
	reapAssertNoLeaks(t, w, res, raw)
}

// A pod whose run answers 404 is reclaimed once past the
// backstop; the backstop decides before any run lookup.
func TestReapRunNotFoundIsReclaimedPastTheBackstop(t *testing.T) {
	w := reapBareWorld(t, 3*time.Hour)
	const goneOld, goneYoung = int64(880001), int64(880002) // runs this repository never had
	oldPod := w.owned(t, w.tags(goneOld, 1, 1))
	w.clock.Advance(2*time.Hour + 30*time.Minute)
	youngPod := w.owned(t, w.tags(goneYoung, 1, 1))
	w.clock.Advance(20 * time.Minute)

	res := harness.RunStep(t, w.step("schedule", nil))
	rec, raw := w.record(t, res)
	assert.DeepEqual(t, reapDecisions(rec), map[string]string{
		oldPod:   string(reap.DecisionReclaim) + " " + string(reap.ReasonLifetime),
		youngPod: string(reap.DecisionError) + " " + string(reap.ReasonRunNotFound),
	})
	assert.DeepEqual(t, w.deleted(), []string{oldPod})
	old := reapPodRecord(t, rec, oldPod)
	assert.Check(t, old.DeletedAt.Known() && old.Cost != nil)
	assert.Equal(t, old.RunCancellation, fmt.Sprintf("not cancelled: run %d was not found", goneOld))
	assert.Equal(t, old.CancelError, "")
	assert.Check(t, is.Contains(reapPodRecord(t, rec, youngPod).Detail, "reclaimed once active over the 2h0m0s backstop"))
	// The young pod still fails the sweep visibly; the old one does not.
	assert.Equal(t, res.ExitCode, 1, res.Stdout)
	assert.Equal(t, res.Outputs["error-pod-ids"], youngPod)
	assert.Equal(t, res.Outputs["reclaim-pod-ids"], oldPod)
	// Past the backstop the run is not looked up to decide; only the
	// cancellation re-reads it.
	assert.Equal(t, w.GitHub.CountRequests(http.MethodGet, fmt.Sprintf("/repos/%s/actions/runs/%d", cloud.Repository, goneOld)), 1)
	reapAssertNoLeaks(t, w, res, raw)
}

// retainedWorld has one completed keep-failed run whose two retained pods
// are 30 and 10 hours old at the sweep.
func retainedWorld(t *testing.T) (w *reapWorld, runID int64, oldPod, youngPod string) {
	w = reapBareWorld(t, 30*time.Hour)
	runID = w.run(t)
	kept := func(candidate int) ownership.Tags {
		tags := w.tags(runID, 1, candidate)
		tags.KeepFailed = true
		return tags
	}
	oldPod = w.owned(t, kept(1))
	w.clock.Advance(20 * time.Hour)
	youngPod = w.owned(t, kept(2))
	w.clock.Advance(10 * time.Minute)
	assert.NilError(t, w.GitHub.SetRunStatus(cloud.Repository, runID, "completed", "failure"))
	name, err := ownership.FormatRetentionName(runID, 1, []string{oldPod, youngPod})
	assert.NilError(t, err)
	_, err = w.GitHub.AddArtifact(cloud.Repository, runID, githubsim.ArtifactSpec{Name: name, Files: map[string]string{"pods.txt": name}})
	assert.NilError(t, err)
	w.clock.Advance(9*time.Hour + 49*time.Minute)
	return w, runID, oldPod, youngPod
}

// Debug-retained pods are reclaimed past the retention cap, with the reason said.
func TestReapRetentionCapReclaimsDebugPods(t *testing.T) {
	w, runID, oldPod, youngPod := retainedWorld(t)

	res := harness.RunStep(t, w.step("schedule", nil))
	assert.Equal(t, res.ExitCode, 0, res.Stdout)
	rec, raw := w.record(t, res)
	assert.DeepEqual(t, reapDecisions(rec), map[string]string{
		oldPod:   string(reap.DecisionReclaim) + " " + string(reap.ReasonRetentionCap),
		youngPod: string(reap.DecisionKeep) + " " + string(reap.ReasonRetained),
	})
	assert.DeepEqual(t, w.deleted(), []string{oldPod})
	// The pod started seconds after its creation, 30 hours before the sweep.
	wantDetail := fmt.Sprintf(`kept for inspection by run %d attempt 1, active (29h59m|30h0m)\d+s \(since startedAt\), past the 24h0m0s retention cap`, runID)
	assert.Check(t, is.Regexp("^"+wantDetail+"$", reapPodRecord(t, rec, oldPod).Detail))
	assert.Check(t, is.Regexp(`\| reclaim \| retention-cap-exceeded: `+wantDetail+` \|`, res.Summary), "the summary says why")
	assert.Check(t, is.Contains(reapPodRecord(t, rec, youngPod).Detail, "until the 24h0m0s retention cap"))
	reapAssertNoLeaks(t, w, res, raw)

	// A shorter configured cap reclaims the younger pod too.
	res = harness.RunStep(t, w.step("schedule", map[string]string{"retention-cap-hours": "8"}))
	assert.Equal(t, res.ExitCode, 0, res.Stdout)
	rec, raw = w.record(t, res)
	assert.Equal(t, reapDecisions(rec)[youngPod], string(reap.DecisionReclaim)+" "+string(reap.ReasonRetentionCap))
	assert.Check(t, is.Contains(reapPodRecord(t, rec, youngPod).Detail, "past the 8h0m0s retention cap"))
	both := []string{oldPod, youngPod}
	slices.Sort(both)
	assert.DeepEqual(t, w.deleted(), both)
	reapAssertNoLeaks(t, w, res, raw)
}

// A bad retention cap stops the step before any API call, naming the input, the value and what is expected.
func TestReapRetentionCapInputIsValidated(t *testing.T) {
	w := reapBareWorld(t, time.Hour)
	for _, value := range []string{"0", "721", "1.5", "24h", "-3", "lots"} {
		t.Run(value, func(t *testing.T) {
			res := harness.RunStep(t, w.step("schedule", map[string]string{"retention-cap-hours": value}))
			assert.Equal(t, res.ExitCode, 1, res.Stdout)
			assert.Check(t, is.Contains(res.Stdout, fmt.Sprintf("input retention-cap-hours = %q: want an integer from 1 to 720", value)))
		})
	}
	assert.Equal(t, len(w.GitHub.Requests()), 0, "no GitHub call")
	assert.Equal(t, len(w.RunPod.Requests()), 0, "no RunPod call")
}

// Sibling of TestReapRunAnswerAboutAnotherRunIsNotTrusted: an artifact listing
// that holds another run's artifacts does not prove a debug pod has no
// retention record.
func TestReapArtifactListOfAnotherRunIsNotTrusted(t *testing.T) {
	w, runID, oldPod, youngPod := retainedWorld(t)
	// The reaper reads every run's records from one listing of the
	// repository: another run's artifact named for runID is in it.
	other := w.run(t)
	name, err := ownership.FormatRetentionName(runID, 1, []string{youngPod})
	assert.NilError(t, err)
	_, err = w.GitHub.AddArtifact(cloud.Repository, other, githubsim.ArtifactSpec{Name: name, Files: map[string]string{"pods.txt": name}})
	assert.NilError(t, err)

	res := harness.RunStep(t, w.step("schedule", nil))
	rec, raw := w.record(t, res)
	assert.DeepEqual(t, reapDecisions(rec), map[string]string{
		// Past the cap the records do not matter; under it, unknown is an error, never a deletion.
		oldPod:   string(reap.DecisionReclaim) + " " + string(reap.ReasonRetentionCap),
		youngPod: string(reap.DecisionError) + " " + string(reap.ReasonRetentionLookupFailed),
	})
	assert.Check(t, is.Contains(reapPodRecord(t, rec, youngPod).Detail, fmt.Sprintf("belongs to run %d", other)))
	assert.DeepEqual(t, w.deleted(), []string{oldPod})
	assert.Equal(t, res.ExitCode, 1, res.Stdout)
	reapAssertNoLeaks(t, w, res, raw)
}
