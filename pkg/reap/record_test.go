package reap

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/golden"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/wire"
)

// sampleRecord is a sweep's record with one pod of each outcome, built the
// way Sweep builds it: from views and verdicts, never from pods.
func sampleRecord() *Record {
	facts := Facts{Now: decisionNow, Runs: map[int64]RunInfo{testRun: runInfo("in_progress", 1, 0)}}
	rec := &Record{Version: RecordVersion, CheckedAt: decisionNow, Execute: true, Event: "schedule", Repository: testRepo}
	add := func(p runpod.Pod, edit func(*PodRecord)) {
		v := View(p, testScope)
		pr := newPodRecord(v, Decide(v, facts), decisionNow)
		if edit != nil {
			edit(&pr)
		}
		rec.Pods = append(rec.Pods, pr)
	}
	old := ownedPod(testTags(), 3*time.Hour)
	add(old, func(pr *PodRecord) {
		deleted := decisionNow.Add(2 * time.Second)
		pr.DeletedAt = wire.KnownTime(deleted)
		pr.Cost = &cost.Report{PodID: old.ID, GPU: old.GPU.ID, Price: cost.KnownPrice(money.PerHour(0.25), "v2 cost in the reaper's listing"),
			Window: cost.Window{Start: old.StartedAt, End: wire.KnownTime(deleted)}}
		pr.RunCancellation = "cancelled run 9001 attempt 1"
	})
	second := testTags()
	second.Candidate = 2
	add(ownedPod(second, 3*time.Hour), func(pr *PodRecord) { pr.DeleteError = "deletion of pod pod2 unconfirmed after 5 DELETE(s)" })
	young := testTags()
	young.Candidate = 3
	add(ownedPod(young, 10*time.Minute), nil)
	add(runpod.Pod{ID: "nb1", Name: "notebook | <b>", Status: runpod.PodExited, Env: map[string]string{"HF_TOKEN": "hf_x"}}, nil)
	return rec
}

func TestRecordGolden(t *testing.T) {
	rec := sampleRecord()
	b, err := rec.JSON()
	assert.NilError(t, err)
	golden.Assert(t, string(b), "record.json")
	golden.Assert(t, rec.Markdown(), "record.md")

	var back map[string]any
	assert.NilError(t, json.Unmarshal(b, &back), "the record is JSON any reader can load")
	assert.Check(t, !strings.Contains(string(b), "hf_x") && !strings.Contains(string(b), "jit-secret"))
}

func TestRecordFailed(t *testing.T) {
	rec := sampleRecord()
	var failed []bool
	for _, p := range rec.Pods {
		failed = append(failed, p.Failed())
	}
	assert.DeepEqual(t, failed, []bool{false, true, false, false})
	assert.DeepEqual(t, rec.PodIDs(DecisionReclaim), []string{"pod1", "pod2"})
	assert.Check(t, is.Equal(rec.Count(DecisionSkipForeign), 1))
	err := incomplete(rec)
	assert.Check(t, is.ErrorContains(err, "1 pod(s) deletion unconfirmed (may still be billing): pod2"))
}

func TestRecordMarkdownBoundsTheTable(t *testing.T) {
	rec := &Record{CheckedAt: decisionNow, Repository: testRepo}
	for i := range maxSummaryRows + 5 {
		rec.Pods = append(rec.Pods, PodRecord{PodID: fmt.Sprint("p", i), Decision: DecisionSkipForeign, Reason: ReasonUntagged})
	}
	md := rec.Markdown()
	assert.Check(t, is.Contains(md, "5 more pod(s) are in the decision record."))
	assert.Check(t, !strings.Contains(md, "| p200 |"))
	assert.Check(t, is.Contains(md, "dry run — nothing deleted"))
}

func TestRecordOfAFailedListing(t *testing.T) {
	rec := &Record{Version: RecordVersion, CheckedAt: decisionNow, Repository: testRepo, Error: "list pods: 503", Pods: []PodRecord{}}
	assert.Check(t, is.Contains(rec.Markdown(), "**Sweep failed, nothing was decided:** list pods: 503"))
	b, err := rec.JSON()
	assert.NilError(t, err)
	assert.Check(t, is.Contains(string(b), `"pods": []`))
}

func TestRecordWriteFile(t *testing.T) {
	rec := &Record{Version: RecordVersion, CheckedAt: decisionNow, Repository: testRepo, Pods: []PodRecord{}}
	path := filepath.Join(t.TempDir(), "record.json")
	assert.NilError(t, rec.WriteFile(path))
	data, err := os.ReadFile(path)
	assert.NilError(t, err)
	want, err := rec.JSON()
	assert.NilError(t, err)
	assert.Equal(t, string(data), string(want))
	assert.Check(t, strings.HasSuffix(string(data), "}\n"))

	err = rec.WriteFile(filepath.Join(t.TempDir(), "missing", "record.json"))
	assert.ErrorContains(t, err, "reap: write decision record: open ")
}

// The summary's overflow line counts exactly the pods left out, and the cost
// disclaimer appears only when an executed sweep reclaimed something.
func TestRecordMarkdownCountsAndDisclaimer(t *testing.T) {
	rec := &Record{CheckedAt: decisionNow, Repository: testRepo, Execute: true}
	for i := range maxSummaryRows + 5 {
		rec.Pods = append(rec.Pods, PodRecord{PodID: fmt.Sprint("p", i), Decision: DecisionKeep, Reason: ReasonRunActive})
	}
	md := rec.Markdown()
	assert.Check(t, is.Contains(md, "\n\n5 more pod(s) are in the decision record.\n"))
	assert.Check(t, !strings.Contains(md, "Estimates, not invoices"), "nothing reclaimed: no cost disclaimer")

	rec.Pods[0].Decision, rec.Pods[0].Reason = DecisionReclaim, ReasonLifetime
	assert.Check(t, is.Contains(rec.Markdown(), "Estimates, not invoices"))
	rec.Execute = false
	assert.Check(t, !strings.Contains(rec.Markdown(), "Estimates, not invoices"), "a dry run deletes nothing")
}

// A table of exactly maxSummaryRows pods shows them all and has no overflow line.
func TestRecordMarkdownAtExactlyTheRowBound(t *testing.T) {
	rec := &Record{CheckedAt: decisionNow, Repository: testRepo}
	for i := range maxSummaryRows {
		rec.Pods = append(rec.Pods, PodRecord{PodID: fmt.Sprint("p", i), Decision: DecisionKeep, Reason: ReasonRunActive})
	}
	md := rec.Markdown()
	assert.Check(t, is.Contains(md, fmt.Sprintf("| p%d |", maxSummaryRows-1)))
	assert.Check(t, !strings.Contains(md, "more pod(s)"), "no pod was left out")
}
