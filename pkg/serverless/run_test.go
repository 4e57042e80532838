package serverless

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/serverless/jobwire"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// TestCheckJobRefusesAJobThatCannotPass: each refusal names the value and
// what is wanted, before anything is created or submitted.
func TestCheckJobRefusesAJobThatCannotPass(t *testing.T) {
	dir := t.TempDir()
	full := filepath.Join(dir, "full")
	assert.NilError(t, os.MkdirAll(full, 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(full, "junit.xml"), []byte("old"), 0o644))
	file := filepath.Join(dir, "file")
	assert.NilError(t, os.WriteFile(file, nil, 0o644))
	empty := filepath.Join(dir, "empty")
	assert.NilError(t, os.MkdirAll(empty, 0o755))
	ok := jobwire.JobInput{TestCommand: "pytest -q", Smoke: jobwire.SmokeArgs{MinCUDA: "12.6"}}
	cases := []struct {
		name    string
		command string
		minCUDA string
		output  string
		value   string
		want    string
	}{
		{name: "fine", command: ok.TestCommand, minCUDA: "12.6", output: filepath.Join(dir, "new")},
		{name: "an empty results directory is fine", command: ok.TestCommand, output: empty},
		{name: "no test command", output: filepath.Join(dir, "new"), value: TestCommandValue, want: "an empty one could never pass"},
		{name: "a blank test command", command: " \t\n", output: filepath.Join(dir, "new"), value: TestCommandValue, want: "a bash command"},
		{name: "min-cuda without a minor", command: "t", minCUDA: "12", output: filepath.Join(dir, "new"), value: MinCUDAValue, want: "major.minor"},
		{name: "min-cuda with a v", command: "t", minCUDA: "v12.6", output: filepath.Join(dir, "new"), value: MinCUDAValue, want: "major.minor"},
		{name: "min-cuda out of range", command: "t", minCUDA: "12.100", output: filepath.Join(dir, "new"), value: MinCUDAValue, want: "major.minor"},
		{name: "results over earlier ones", command: "t", output: full, value: OutputValue, want: "it holds 1 entries (junit.xml…)"},
		{name: "results into a file", command: "t", output: file, value: OutputValue, want: "not a directory"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckJob(jobwire.JobInput{TestCommand: tc.command, Smoke: jobwire.SmokeArgs{MinCUDA: tc.minCUDA}}, tc.output)
			if tc.want == "" {
				assert.NilError(t, err)
				return
			}
			var bad *ValueError
			assert.Assert(t, errors.As(err, &bad), "%v", err)
			assert.Check(t, is.Equal(bad.Name, tc.value))
			assert.Check(t, is.ErrorContains(err, tc.want))
		})
	}
}

// TestRunIsNeverSentTwice: /run goes out once whatever it answers; an
// unclear answer is looked into (the endpoint's health), never repeated.
func TestRunIsNeverSentTwice(t *testing.T) {
	const run = "POST /v2/{endpoint}/run"
	lost := func(status int, body []byte) []byte { return []byte(`{"error":"upstream timed out"}`) }
	cases := []struct {
		name string
		api  runpodsim.Faults
		jobs int
		want string
	}{
		{name: "a 429", api: runpodsim.Faults{RateLimits: []runpodsim.RateLimitFault{{Match: runpodsim.Match{Route: run}, When: runpodsim.Trigger{First: 1}}}},
			want: "0 queued, 0 running"},
		{name: "a 503 before the job host took it", api: runpodsim.Faults{ServerErrors: []runpodsim.ServerErrorFault{{Match: runpodsim.Match{Route: run}, When: runpodsim.Trigger{First: 1}, Status: 503}}},
			want: "0 queued, 0 running"},
		{name: "an answer lost after the job was queued", jobs: 1, api: runpodsim.Faults{Rewrites: []runpodsim.RewriteFault{{Match: runpodsim.Match{Route: run},
			When: runpodsim.Trigger{First: 1}, Status: 502, Body: lost}}}, want: "1 queued"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newSimWorld(t, simConfig{api: tc.api, faults: runpodsim.ServerlessFaults{StuckJobs: tc.jobs > 0}})
			_, err := w.setup()
			assert.NilError(t, err)
			_, err = w.run(context.Background())
			assert.Check(t, is.ErrorContains(err, "the job is never submitted again"))
			assert.Check(t, is.ErrorContains(err, tc.want))
			_, again := w.run(context.Background())
			assert.Check(t, is.ErrorContains(again, "a job is never resubmitted"))
			assert.Check(t, is.Equal(w.requests()[run], 1), "exactly one submission")
			assert.Check(t, is.Len(w.sim.Jobs(), tc.jobs))
			r, err := LoadReceipt(w.lane.Receipt)
			assert.NilError(t, err)
			assert.Check(t, is.Contains(r.Job.Status, "submission answer unclear"))

			// Cleanup deletes the endpoint, which ends whatever job there is.
			_, err = w.lane.Cleanup(context.Background())
			assert.NilError(t, err)
			for id, state := range w.sim.Jobs() {
				assert.Check(t, is.Equal(state, "CANCELLED"), "job %s", id)
			}
		})
	}
}

// TestRunFollowsARecordedJobByItsID: a run interrupted after its submission
// leaves the job's id in the receipt; the next run follows that job by its
// status and never submits another.
func TestRunFollowsARecordedJobByItsID(t *testing.T) {
	w := newSimWorld(t, simConfig{})
	r, err := w.setup()
	assert.NilError(t, err)
	st, err := w.lane.Jobs.Run(context.Background(), r.Endpoint.ID, jobwire.JobInput{TestCommand: "true"}, runpod.JobPolicy{})
	assert.NilError(t, err)
	r.Job = &JobRecord{Intent: true, ID: st.ID, Status: string(st.Status), SubmittedAt: w.clock.Now()}
	assert.NilError(t, SaveReceipt(w.lane.Receipt, r))

	res, err := w.run(context.Background())
	assert.NilError(t, err)
	assert.Check(t, is.Equal(res.JobID, st.ID))
	assert.Check(t, is.Equal(res.State, runpod.JobCompleted))
	assert.Check(t, is.Equal(w.requests()["POST /v2/{endpoint}/run"], 1), "the job was followed, never submitted again")
	assert.Check(t, is.Contains(w.logs.String(), "following job "+st.ID+" of this attempt by its id"))
}

// TestRunCancelsAJobThatNeverEndsOnce: a job the provider never ends is
// cancelled once at the TTL bound, never resubmitted, and the provider's
// last answer is kept as for a finished job.
func TestRunCancelsAJobThatNeverEndsOnce(t *testing.T) {
	w := newSimWorld(t, simConfig{faults: runpodsim.ServerlessFaults{StuckJobs: true}})
	_, err := w.setup()
	assert.NilError(t, err)
	start := w.clock.Now()
	res, err := w.run(context.Background())
	assert.Check(t, is.ErrorContains(err, "no result within the job TTL 20m0s (job cancelled; never resubmitted)"))
	assert.Check(t, is.Equal(res.State, runpod.JobInProgress))
	elapsed := w.clock.Now().Sub(start)
	assert.Check(t, elapsed >= w.lane.Settings.JobTTL && elapsed < w.lane.Settings.JobTTL+time.Minute, "cancelled at its bound, after %s", elapsed)
	got := w.requests()
	assert.Check(t, is.Equal(got["POST /v2/{endpoint}/cancel/{job}"], 1), "cancelled once")
	assert.Check(t, is.Equal(got["POST /v2/{endpoint}/run"], 1), "never resubmitted")
	for _, state := range w.sim.Jobs() {
		assert.Check(t, is.Equal(state, "CANCELLED"))
	}
	kept := providerResponse(t, w)
	assert.Check(t, is.Equal(kept["status"], "IN_PROGRESS"))
	assert.Check(t, is.Contains(kept["lane_error"], "no result within the job TTL"))
	r, err := LoadReceipt(w.lane.Receipt)
	assert.NilError(t, err)
	assert.Check(t, !r.Job.CancelledAt.IsZero())
}

func providerResponse(t *testing.T, w *simWorld) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(w.results(), "provider-response.json"))
	assert.NilError(t, err, "provider-response.json is kept")
	var kept map[string]any
	assert.NilError(t, json.Unmarshal(data, &kept))
	return kept
}

// TestRunRefusesHostileResults: a job answer over the bound fails at once
// (not at the TTL), an archive without its checksum and one with a control
// character in a name are refused, and nothing of them is written.
func TestRunRefusesHostileResults(t *testing.T) {
	huge := strings.Repeat("x", 10<<20)
	cases := []struct {
		name string
		edit func(*jobwire.JobOutput)
		want string
	}{
		{"an answer over the bound", func(o *jobwire.JobOutput) { o.Summary = map[string]any{"padding": huge} }, "its answer is larger than 9437184 bytes, refused at once"},
		{"an empty checksum", func(o *jobwire.JobOutput) { o.ResultSHA256 = "" }, `result archive: checksum "": want the worker's 64-hex SHA-256`},
		{"a short checksum", func(o *jobwire.JobOutput) { o.ResultSHA256 = "abc" }, `checksum "abc"`},
		{"a control character in a name", func(o *jobwire.JobOutput) {
			archive := tarGz(t, map[string]string{"junit.xml": "<x/>", "ok\x1b]0;pwned\x07.log": "x"})
			o.ResultB64, o.ResultSHA256 = base64.StdEncoding.EncodeToString(archive), jobwire.SHA256Hex(archive)
		}, "control character"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newSimWorld(t, simConfig{worker: answeringWorker(t, tc.edit)})
			_, err := w.setup()
			assert.NilError(t, err)
			start := w.clock.Now()
			_, err = w.run(context.Background())
			assert.Check(t, is.ErrorContains(err, tc.want))
			assert.Check(t, w.clock.Now().Sub(start) < 2*time.Minute, "it failed at once, not at the TTL")
			_, statErr := os.Stat(filepath.Join(w.results(), "results"))
			assert.Check(t, os.IsNotExist(statErr), "nothing of a refused result is written")
			providerResponse(t, w)
		})
	}
}

// TestRunCancelsAtOnceWhenNoStatusCanComeBeforeTheTTL: a job host that asks
// to wait an hour for the job's status could only answer after the TTL:
// the job is cancelled at once, not polled to its end.
func TestRunCancelsAtOnceWhenNoStatusCanComeBeforeTheTTL(t *testing.T) {
	w := newSimWorld(t, simConfig{faults: runpodsim.ServerlessFaults{StuckJobs: true}, api: runpodsim.Faults{RateLimits: []runpodsim.RateLimitFault{
		{Match: runpodsim.Match{Route: "GET /v2/{endpoint}/status/{job}"}, When: runpodsim.Trigger{First: 1}, RetryAfter: time.Hour}}}})
	_, err := w.setup()
	assert.NilError(t, err)
	start := w.clock.Now()
	_, err = w.run(context.Background())
	assert.Check(t, is.ErrorContains(err, "the job host asks to wait 1h0m0s for its status, past the job's TTL (job cancelled; never resubmitted)"))
	assert.Check(t, w.clock.Now().Sub(start) < time.Minute, "cancelled at once")
	assert.Check(t, is.Equal(w.requests()["POST /v2/{endpoint}/cancel/{job}"], 1), "the cancel went out despite the hour's cooldown")
	for _, state := range w.sim.Jobs() {
		assert.Check(t, is.Equal(state, "CANCELLED"))
	}
}
