package gate

// Exact edges of the published gate's content. Self-contained (exported API
// only), so it can move with the gate protocol.

import (
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
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
