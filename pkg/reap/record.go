package reap

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/mdtable"
	"github.com/org/runpod-gpu/pkg/wire"
)

// RecordVersion is the version of the decision record's JSON shape.
const RecordVersion = 1

// DefaultRecordPath is where the action writes the record, relative to the
// workspace so that a later upload-artifact step finds it (a container
// action sees the workspace, not the runner's temporary directory).
const DefaultRecordPath = "runpod-gpu-reap-record.json"

// maxSummaryRows bounds the job summary's table; the record has every pod.
const maxSummaryRows = 200

// Record is the decision record of one sweep, written for upload as an
// artifact: the independent evidence of what the reaper did. It holds pod
// and run identity, decisions, deletion times and cost estimates — never a
// pod's environment or any credential.
type Record struct {
	Version    int       `json:"version"`
	CheckedAt  time.Time `json:"checkedAt"`
	Execute    bool      `json:"execute"`
	Event      string    `json:"event,omitempty"`
	Repository string    `json:"repository"`
	// Error is why the sweep could not decide at all (e.g. the listing failed).
	Error string      `json:"error,omitempty"`
	Pods  []PodRecord `json:"pods"`
	// Serverless are the Serverless lane's attempts the sweep found (ServerlessSweeper).
	Serverless []ServerlessRecord `json:"serverless,omitempty"`
}

// PodRecord is the decision about one listed pod and what came of it.
type PodRecord struct {
	PodID  string `json:"podId"`
	Name   string `json:"name"`
	Status string `json:"status"`
	// RunID and Attempt are the owning run attempt; 0 for pods that are not
	// provably this repository's (their tags are not repeated here).
	RunID    int64    `json:"runId,omitempty"`
	Attempt  int      `json:"attempt,omitempty"`
	Decision Decision `json:"decision"`
	Reason   Reason   `json:"reason"`
	Detail   string   `json:"detail,omitempty"`
	// AgeSeconds is the pod's age at CheckedAt, measured from AgeFrom; null when unknown.
	AgeSeconds *int64   `json:"ageSeconds"`
	AgeFrom    AgeBasis `json:"ageFrom,omitempty"`
	// DeletedAt is the confirmed deletion; null in a dry run or when unconfirmed.
	DeletedAt wire.Time `json:"deletedAt"`
	// DeleteError is why a reclaim's deletion was not confirmed.
	DeleteError string `json:"deleteError,omitempty"`
	// Cost is the reclaimed pod's estimated cost, after confirmed deletion.
	Cost *cost.Report `json:"cost,omitempty"`
	// RunCancellation says what happened to the owning run after a lifetime
	// reclaim: cancelled, or why it was not.
	RunCancellation string `json:"runCancellation,omitempty"`
	// CancelError is why cancelling the owning run failed.
	CancelError string `json:"cancelError,omitempty"`
}

// Failed reports whether the pod makes the sweep fail: undecidable, or a
// reclaim or cancellation that did not complete.
func (p PodRecord) Failed() bool {
	return p.Decision == DecisionError || p.DeleteError != "" || p.CancelError != ""
}

func newPodRecord(v PodView, verdict Verdict, now time.Time) PodRecord {
	rec := PodRecord{PodID: v.ID, Name: v.Name, Status: string(v.Status), Decision: verdict.Decision, Reason: verdict.Reason, Detail: verdict.Detail}
	if v.Foreign == "" {
		rec.RunID, rec.Attempt = v.Tags.RunID, v.Tags.Attempt
	}
	if age, basis := v.Age(now); basis != AgeUnknown {
		seconds := int64(age / time.Second)
		rec.AgeSeconds, rec.AgeFrom = &seconds, basis
	}
	return rec
}

// Count returns how many pods got decision d.
func (r *Record) Count(d Decision) int {
	return countOf(r.Pods, func(p PodRecord) bool { return p.Decision == d })
}

// countOf counts the items of list that is holds for.
func countOf[T any](list []T, is func(T) bool) int {
	n := 0
	for _, v := range list {
		if is(v) {
			n++
		}
	}
	return n
}

// PodIDs returns the ids of the pods that got decision d, in listing order.
func (r *Record) PodIDs(d Decision) []string {
	var ids []string
	for _, p := range r.Pods {
		if p.Decision == d {
			ids = append(ids, p.PodID)
		}
	}
	return ids
}

// JSON renders the record, indented, with a final newline.
func (r *Record) JSON() ([]byte, error) { return encodeRecord(r) }

// WriteFile writes the record's JSON to path.
func (r *Record) WriteFile(path string) error { return writeRecord(path, r) }

// encodeRecord renders a decision record (a repository's or an
// organization's), indented, with a final newline.
func encodeRecord(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("reap: encode decision record: %w", err)
	}
	return append(b, '\n'), nil
}

// writeRecord writes a decision record's JSON to path.
func writeRecord(path string, v any) error {
	b, err := encodeRecord(v)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("reap: write decision record: %w", err)
	}
	return nil
}

// Markdown renders the record for the job summary.
func (r *Record) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "### RunPod reaper (%s)\n\n", sweepMode(r.Execute))
	fmt.Fprintf(&b, "Checked at %s: %d pod(s) listed — %d reclaim, %d keep, %d skip-foreign, %d error.\n\n",
		r.CheckedAt.UTC().Format(time.RFC3339), len(r.Pods), r.Count(DecisionReclaim), r.Count(DecisionKeep),
		r.Count(DecisionSkipForeign), r.Count(DecisionError))
	if r.Error != "" {
		fmt.Fprintf(&b, "**Sweep failed, nothing was decided:** %s\n\n", cell(r.Error))
	}
	if len(r.Pods) == 0 {
		return b.String()
	}
	tb := mdtable.New("Pod", "Name", "Run", "Attempt", "Decision", "Reason", "Deleted at", "Estimated cost", "Run cancellation").
		AlignRight(2, 3, 7)
	for i, p := range r.Pods {
		if i == maxSummaryRows {
			break
		}
		cancellation := p.RunCancellation
		if p.CancelError != "" {
			cancellation = "**failed:** " + p.CancelError
		}
		tb.Row(slices.Concat([]string{cell(p.PodID), cell(p.Name)}, p.decisionCells(), []string{cell(cancellation)})...)
	}
	b.WriteString(tb.String())
	if len(r.Pods) > maxSummaryRows {
		fmt.Fprintf(&b, "\n%d more pod(s) are in the decision record.\n", len(r.Pods)-maxSummaryRows)
	}
	if r.Count(DecisionReclaim) > 0 && r.Execute {
		b.WriteString("\n> " + cost.Disclaimer + "\n")
	}
	return b.String()
}

// sweepMode is how a summary's title names the sweep: executed, or a dry run
// and how to make it real.
func sweepMode(execute bool) string {
	if execute {
		return "executed"
	}
	return "dry run — nothing deleted; dispatch with execute: true to reclaim"
}

// decisionCells are the summary's cells for what the sweep decided about p
// and did: run, attempt, decision, reason, deleted at and estimated cost.
func (p PodRecord) decisionCells() []string {
	run, attempt, deleted, dollars := "", "", "", ""
	if p.RunID > 0 {
		run, attempt = fmt.Sprint(p.RunID), fmt.Sprint(p.Attempt)
	}
	if t, ok := p.DeletedAt.Get(); ok {
		deleted = t.Format(time.RFC3339)
	} else if p.DeleteError != "" {
		deleted = "**unconfirmed:** " + p.DeleteError
	}
	if p.Cost != nil {
		dollars = p.Cost.Dollars().String()
	}
	reason := string(p.Reason)
	if p.Detail != "" {
		reason += ": " + p.Detail
	}
	return []string{run, attempt, string(p.Decision), cell(reason), cell(deleted), dollars}
}

// cell makes outside text safe inside one Markdown table cell.
func cell(s string) string { return mdtable.Cell(s) }
