package gatecheck

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/golden"

	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/money"
)

func TestContentGolden(t *testing.T) {
	pod := &PodEvidence{ID: "pod7h9k2m4n6p", GPU: "NVIDIA RTX A6000", Tier: "ampere", PricePerHour: money.PerHour(0.49), StartupSeconds: 95, Attempts: 2, CostMarkdown: "cost report"}
	sls := &ServerlessEvidence{PayloadSHA256: payloadSHA, WorkerSHA256: strings.Repeat("e", 64), JobID: "job-1", JobStatus: "COMPLETED", GPUPool: "AMPERE_16", CUDAExecuted: true}
	cases := map[Kind]Evidence{
		KindPaid:        {Pod: pod},
		KindReused:      {ReusedCheckURL: "https://github.com/o/r/runs/99"},
		KindFailed:      {Pod: pod, Reason: "tests exited 1", RunID: 12345},
		KindNotRequired: {},
		KindLocal:       {LocalEvidenceURL: "https://github.com/o/r/pull/7#issuecomment-1"},
		KindSkipped:     {Reason: "the PR is closed"},
		KindServerless:  {Serverless: sls},
	}
	for _, k := range Kinds {
		t.Run(string(k), func(t *testing.T) {
			e := cases[k]
			e.Kind, e.HeadSHA, e.TestedRef, e.RunURL, e.CompletedAt = k, head, merge, "https://github.com/o/r/actions/runs/12345", t0
			in, err := Content(e)
			assert.NilError(t, err)
			got := fmt.Sprintf("name: %s\nconclusion: %s\nexternal_id: %s\ntitle: %s\n---\n%s---\n%s\n", in.Name, in.Conclusion, in.ExternalID, in.Title, in.Summary, in.Text)
			golden.Assert(t, got, "content-"+string(k)+".golden")
		})
	}
	_, err := Content(Evidence{Kind: KindReused, HeadSHA: head, TestedRef: merge})
	assert.ErrorContains(t, err, "must link the earlier check")
	_, err = Content(Evidence{Kind: KindPaid, HeadSHA: head, TestedRef: merge})
	assert.ErrorContains(t, err, "must name the accepted pod")
	_, err = Content(Evidence{Kind: KindPaid, HeadSHA: "main", TestedRef: merge, Pod: pod})
	assert.ErrorContains(t, err, "head SHA")
}

// TestServerlessContent: a serverless success stands on the payload's
// checksum and the CUDA proof; a failure of the lane still records the payload.
func TestServerlessContent(t *testing.T) {
	good := ServerlessEvidence{PayloadSHA256: payloadSHA, JobID: "job-1", JobStatus: "COMPLETED", GPUPool: "AMPERE_16", CUDAExecuted: true}
	with := func(f func(*ServerlessEvidence)) *ServerlessEvidence { s := good; f(&s); return &s }
	tests := []struct {
		name        string
		kind        Kind
		sls         *ServerlessEvidence
		wantErr     string
		wantSummary []string
		wantTitle   string
	}{
		{name: "success records the payload", kind: KindServerless, sls: &good, wantTitle: "GPU tests passed in one Serverless job on AMPERE_16",
			wantSummary: []string{"Payload SHA-256: `" + payloadSHA + "`", "| `job-1` | COMPLETED | AMPERE_16 | true |"}},
		{name: "success without evidence", kind: KindServerless, wantErr: "a serverless gate must name its job"},
		{name: "success without payload", kind: KindServerless, sls: with(func(s *ServerlessEvidence) { s.PayloadSHA256 = "" }), wantErr: "must record the payload SHA-256"},
		{name: "success with a short payload sum", kind: KindServerless, sls: with(func(s *ServerlessEvidence) { s.PayloadSHA256 = "abc" }), wantErr: `"abc" is not 64 lowercase hex`},
		{name: "success without the CUDA proof", kind: KindServerless, sls: with(func(s *ServerlessEvidence) { s.CUDAExecuted = false }), wantErr: "needs the worker's CUDA proof"},
		{name: "failure records the payload", kind: KindFailed, sls: with(func(s *ServerlessEvidence) { s.JobStatus, s.CUDAExecuted = "FAILED", false }),
			wantTitle: "GPU tests failed", wantSummary: []string{"Payload SHA-256: `" + payloadSHA + "`", "| FAILED |"}},
		{name: "failure before any payload", kind: KindFailed, sls: &ServerlessEvidence{}, wantTitle: "GPU tests failed",
			wantSummary: []string{"Payload SHA-256: `(no payload was built)`"}},
		{name: "failure with an upper-case payload sum", kind: KindFailed, sls: with(func(s *ServerlessEvidence) { s.PayloadSHA256 = strings.ToUpper(payloadSHA) }),
			wantErr: "want 64 lowercase hex digits"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in, err := Content(Evidence{Kind: tc.kind, HeadSHA: head, TestedRef: merge, Serverless: tc.sls, CompletedAt: t0})
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, in.Title, tc.wantTitle)
			assert.Equal(t, in.ExternalID, ExternalIDPrefix+merge+":"+string(tc.kind))
			for _, want := range tc.wantSummary {
				assert.Check(t, is.Contains(in.Summary, want))
			}
		})
	}
}

func TestClipKeepsInsideGitHubLimit(t *testing.T) {
	long := strings.Repeat("é", MaxOutputBytes) // two bytes each
	got := clip(long)
	assert.Check(t, len(got) <= MaxOutputBytes, "len %d", len(got))
	assert.Check(t, is.Contains(got, "truncated to fit"))
	assert.Check(t, strings.ToValidUTF8(got, "?") == got, "cut inside a rune")
	assert.Equal(t, clip("short"), "short")
}

// pmNote is the note a clipped check text ends with.
var pmNote = "\n\n… (truncated to fit GitHub's 65535-byte limit)"

func pmFailed(mut func(*Evidence)) Evidence {
	e := Evidence{Kind: KindFailed, HeadSHA: pmHead, TestedRef: pmMerge, CompletedAt: time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)}
	if mut != nil {
		mut(&e)
	}
	return e
}

// A failed gate shows the re-run command only for a known run.
func TestContentRerunCommandNeedsARunID(t *testing.T) {
	for _, tc := range []struct {
		runID int64
		want  bool
	}{{0, false}, {1, true}, {4711, true}} {
		in, err := Content(pmFailed(func(e *Evidence) { e.RunID = tc.runID }))
		assert.NilError(t, err)
		assert.Equal(t, strings.Contains(in.Summary, "gh run rerun"), tc.want, "run id %d", tc.runID)
	}
	in, err := Content(pmFailed(func(e *Evidence) { e.RunID = 4711 }))
	assert.NilError(t, err)
	assert.Check(t, strings.HasSuffix(in.Summary, "To re-run the failed jobs:\n\n```sh\ngh run rerun 4711 --failed\n```\n"), in.Summary)
}

// The check's text is kept whole up to exactly GitHub's limit, cut with a note
// past it, and never split inside a UTF-8 sequence — nor panics on text that
// is no UTF-8 at all.
func TestContentTextLimitEdges(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string
		want string
	}{
		{name: "exactly the limit", text: strings.Repeat("x", MaxOutputBytes), want: strings.Repeat("x", MaxOutputBytes)},
		{name: "one byte over", text: strings.Repeat("x", MaxOutputBytes+1), want: strings.Repeat("x", MaxOutputBytes-len(pmNote)) + pmNote},
		{name: "a rune across the cut", text: strings.Repeat("x", MaxOutputBytes-len(pmNote)-1) + "é" + strings.Repeat("y", 100),
			want: strings.Repeat("x", MaxOutputBytes-len(pmNote)-1) + pmNote},
		{name: "no rune start anywhere", text: strings.Repeat("\x80", MaxOutputBytes+10), want: pmNote},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := Content(pmFailed(func(e *Evidence) { e.Pod = &PodEvidence{ID: "p", CostMarkdown: tc.text} }))
			assert.NilError(t, err)
			assert.Equal(t, len(in.Text), len(tc.want))
			assert.Check(t, in.Text == tc.want)
		})
	}
}

// The in-progress gate, exactly: the default check name, the marker its
// success would carry, the tree line only with a key, the run link only with
// a run.
func TestInProgressContentExact(t *testing.T) {
	key := &TreeKey{Tree: strings.Repeat("7", 40), Lane: strings.Repeat("1", 64)}
	started := time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)
	refLine := "Tested ref: `" + pmMerge + "` (on head `" + pmHead + "`)\n\n"
	body := "This lane is testing this tested ref. Other lanes for the same tree and lane wait for its result instead of paying again.\n"
	for _, tc := range []struct {
		name        string
		e           Evidence
		wantName    string
		wantID      string
		wantSummary string
	}{
		{name: "bare", e: Evidence{HeadSHA: pmHead, TestedRef: pmMerge}, wantName: DefaultCheckName,
			wantID: "runpod-gpu-gate:v1:" + pmMerge + ":paid", wantSummary: refLine + body},
		{name: "named, keyed, linked", e: Evidence{HeadSHA: pmHead, TestedRef: pmMerge, CheckName: "GPU", Key: key, RunURL: "https://github.com/o/r/actions/runs/1"},
			wantName: "GPU", wantID: "runpod-gpu-gate:v2:" + pmMerge + ":paid:" + key.String(),
			wantSummary: refLine + "Tested tree: `" + key.Tree + "`, lane digest `" + key.Lane + "`\n\n" + body + "\nWorkflow run: https://github.com/o/r/actions/runs/1\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := InProgressContent(tc.e, started)
			assert.NilError(t, err)
			assert.Equal(t, in.Name, tc.wantName)
			assert.Equal(t, in.ExternalID, tc.wantID)
			assert.Equal(t, in.Summary, tc.wantSummary)
			assert.Equal(t, in.Status, "in_progress")
			assert.Equal(t, in.StartedAt, started)
			assert.Equal(t, in.DetailsURL, tc.e.RunURL)
		})
	}
}

// pmUpdater completes in-progress gates, or fails to.
type pmUpdater struct {
	err     error
	updated []int64
}

func (u *pmUpdater) CreateCheckRun(context.Context, ghapi.CheckRunInput) (*github.CheckRun, error) {
	return nil, errors.New("unexpected create: an in-progress gate must be completed, not duplicated")
}

func (u *pmUpdater) UpdateCheckRun(_ context.Context, id int64, in ghapi.CheckRunInput) (*github.CheckRun, error) {
	u.updated = append(u.updated, id)
	if u.err != nil {
		return nil, u.err
	}
	return &github.CheckRun{ID: github.Int64(id), Conclusion: github.String(in.Conclusion)}, nil
}

// With CheckRunID, Publish completes that gate and hands it back; a failed
// completion names the gate.
func TestPublishCompletesTheInProgressGate(t *testing.T) {
	u := &pmUpdater{}
	run, err := Publish(context.Background(), u, pmFailed(func(e *Evidence) { e.CheckRunID = 42 }))
	assert.NilError(t, err)
	assert.Equal(t, run.GetID(), int64(42))
	assert.Equal(t, run.GetConclusion(), "failure")
	assert.DeepEqual(t, u.updated, []int64{42})

	u = &pmUpdater{err: errors.New("404 Not Found")}
	run, err = Publish(context.Background(), u, pmFailed(func(e *Evidence) { e.CheckRunID = 42 }))
	assert.Check(t, run == nil)
	assert.Error(t, err, "publish failed gate: complete in-progress gate 42: 404 Not Found")
}
