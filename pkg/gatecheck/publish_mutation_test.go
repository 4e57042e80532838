package gatecheck

// Exact edges of the published gate's content. Self-contained (exported API
// only), so it can move with the gate protocol.

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/ghapi"
)

var (
	pmHead  = strings.Repeat("a", 40)
	pmMerge = strings.Repeat("b", 40)
	pmNote  = "\n\n… (truncated to fit GitHub's 65535-byte limit)"
)

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

// A marker that does not parse is quoted whole up to 120 characters, and cut
// with an ellipsis beyond.
func TestParseExternalIDQuotesAtMost120Characters(t *testing.T) {
	at120 := strings.Repeat("x", 120)
	_, err := ParseExternalID(at120)
	assert.Error(t, err, `gate external_id "`+at120+`": want prefix "runpod-gpu-gate:v1:"`)

	_, err = ParseExternalID(at120 + "y")
	assert.Error(t, err, `gate external_id "`+at120+`…": want prefix "runpod-gpu-gate:v1:"`)
}

// pmLister records the page bound of each listing.
type pmLister struct{ pages []int }

func (l *pmLister) ListCheckRunsForRef(_ context.Context, _, _ string, maxPages int) ([]*github.CheckRun, error) {
	l.pages = append(l.pages, maxPages)
	return nil, nil
}

// The reuse lookup reads at most MaxPages pages, DefaultMaxPages when unset.
func TestDecideReusePageBound(t *testing.T) {
	for _, tc := range []struct{ given, want int }{{0, DefaultMaxPages}, {-1, DefaultMaxPages}, {2, 2}} {
		l := &pmLister{}
		d := DecideReuse(context.Background(), l, ReuseQuery{HeadSHA: pmHead, TestedRef: pmMerge, MaxPages: tc.given})
		assert.Equal(t, d.Reuse, false)
		assert.DeepEqual(t, l.pages, []int{tc.want})
	}
}
