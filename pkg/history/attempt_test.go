package history

import (
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/gatecheck"
)

const (
	refA = "1111111111111111111111111111111111111111"
	refB = "2222222222222222222222222222222222222222"
)

func TestEvidencePrecedence(t *testing.T) {
	start := t0.Add(time.Minute)
	report := acceptedReport("pod1", "NVIDIA L4", 0.36, start, 600)
	short := acceptedReport("pod1", "NVIDIA L4", 0.36, start, 300)
	unconfirmed := report
	unconfirmed.Window.End = cost.Window{}.End
	acceptedLine := cost.AttemptLine(acceptedAttempt(2, "pod1", "NVIDIA L4", 0.36, 60)).Format()
	rejectedLine := cost.AttemptLine(rejectedAttempt(1, "pod0", "NVIDIA RTX A4000", 0.25, 144)).Format()

	tests := []struct {
		name          string
		logs          []string // provision job log lines, one second apart from t0
		artifact      *cost.Report
		wantPod       string
		wantSource    Source
		wantSeconds   string
		wantDollars   string
		wantCandidate string
		wantWarnings  int
		wantNote      string
	}{
		{
			name:     "the artifact beats a cost line and an attempt line",
			logs:     []string{acceptedLine, cost.CostLine(short).Format()},
			artifact: &report,
			wantPod:  "pod1", wantSource: SourceArtifact, wantSeconds: "600", wantDollars: "$0.0600",
			wantCandidate: "live-2", // filled in from the attempt line
		},
		{
			name:    "a cost line beats an attempt line",
			logs:    []string{acceptedLine, cost.CostLine(short).Format()},
			wantPod: "pod1", wantSource: SourceCostLine, wantSeconds: "300", wantDollars: "$0.0300",
		},
		{
			name:    "a rejected pod's attempt line holds its paid seconds",
			logs:    []string{rejectedLine},
			wantPod: "pod0", wantSource: SourceAttemptLine, wantSeconds: "144", wantDollars: "$0.0100",
		},
		{
			name: "an accepted pod without a report is estimated from the log window",
			// accepted at t0 after 60 s of startup, the last line at t0+540s: 600 s
			logs:    append([]string{acceptedLine}, noise(540)...),
			wantPod: "pod1", wantSource: SourceLogWindow, wantSeconds: "600", wantDollars: "$0.0600",
			wantNote: "estimated from log timestamps",
		},
		{
			name:    "an unconfirmed deletion is unknown, not zero",
			logs:    []string{cost.CostLine(unconfirmed).Format()},
			wantPod: "pod1", wantSource: SourceCostLine, wantSeconds: "unknown", wantDollars: "unknown",
			wantNote: "deletion not confirmed",
		},
		{
			name:    "a duplicated cost line counts once, with a warning",
			logs:    []string{cost.CostLine(report).Format(), cost.CostLine(report).Format()},
			wantPod: "pod1", wantSource: SourceCostLine, wantSeconds: "600", wantDollars: "$0.0600", wantWarnings: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			saved := savedAttempt{rec: completedAttempt(7, 1, "pull_request", t0),
				logs: map[string]string{provisionLog: logText(t0, tc.logs...)}}
			if tc.artifact != nil {
				saved.artifacts = []cost.Artifact{artifactOf(7, 1, cost.TriggerAutomatic, refA, *tc.artifact)}
			}
			writeSaved(t, dir, saved)
			a := readSaved(t, dir, saved.rec.Key())

			assert.Equal(t, a.Decision, DecisionPaid)
			assert.Assert(t, is.Len(a.Pods, 1), "%+v", a.Pods)
			p := a.Pods[0]
			assert.Equal(t, p.ID, tc.wantPod)
			assert.Equal(t, p.Source, tc.wantSource)
			assert.Equal(t, p.Seconds.String(), tc.wantSeconds)
			assert.Equal(t, p.Dollars.String(), tc.wantDollars)
			if tc.wantCandidate != "" {
				assert.Equal(t, p.Candidate, tc.wantCandidate)
			}
			assert.Check(t, is.Len(a.Warnings, tc.wantWarnings), "%q", a.Warnings)
			if tc.wantNote != "" {
				assert.Check(t, is.Contains(strings.Join(p.Notes, "\n"), tc.wantNote))
			}
		})
	}
}

// noise is n ordinary log lines.
func noise(n int) []string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = "##[group]Run GPU tests"
	}
	return lines
}

func TestAttemptDecisionAndIdentity(t *testing.T) {
	reusedLine := "published " + gatecheck.ExternalIDPrefix + refB + ":reused (https://github.com/org/app/runs/9): reused"
	tests := []struct {
		name         string
		event        string
		logs         map[string]string
		artifact     *cost.Artifact
		wantDecision Decision
		wantTrigger  cost.Trigger
		wantRef      string
		wantNotes    int
		wantPods     int
	}{
		{
			name: "a reused gate", event: "pull_request",
			logs:         map[string]string{gateLog: logText(t0, reusedLine)},
			wantDecision: DecisionReused, wantTrigger: cost.TriggerAutomatic, wantRef: refB,
		},
		{
			name: "no GPU work", event: "pull_request",
			logs:         map[string]string{gateLog: logText(t0, "published "+gatecheck.ExternalIDPrefix+refA+":not-required (x): no GPU path")},
			wantDecision: DecisionNone, wantTrigger: cost.TriggerAutomatic, wantRef: refA,
		},
		{
			name: "a dispatch is a manual confirmation", event: "workflow_dispatch",
			logs:         map[string]string{provisionLog: logText(t0, cost.AttemptLine(rejectedAttempt(1, "p", "G", 0.2, 10)).Format())},
			wantDecision: DecisionPaid, wantTrigger: cost.TriggerManual, wantPods: 1,
		},
		{
			name: "the artifact names trigger and ref", event: "workflow_dispatch",
			logs:         map[string]string{gateLog: logText(t0, reusedLine)},
			artifact:     ptr(artifactOf(7, 1, cost.TriggerAutomatic, refA, acceptedReport("p", "G", 0.2, t0, 60))),
			wantDecision: DecisionPaid, wantTrigger: cost.TriggerAutomatic, wantRef: refA, wantPods: 1,
		},
		{
			name: "a paid gate without pod evidence counts a pod of unknown cost", event: "pull_request",
			logs:         map[string]string{gateLog: logText(t0, "published "+gatecheck.ExternalIDPrefix+refA+":paid (x): passed")},
			wantDecision: DecisionPaid, wantTrigger: cost.TriggerAutomatic, wantRef: refA, wantPods: 1,
		},
		{
			name: "missing logs leave the attempt unknown", event: "pull_request",
			wantDecision: DecisionUnknown, wantTrigger: cost.TriggerAutomatic, wantNotes: 1,
		},
		{
			// The artifact's seal is in the cleanup job's log: until the logs
			// are read, nothing vouches for it, so it counts for nothing.
			name: "missing logs with an artifact: unknown, the artifact unsealed", event: "pull_request",
			artifact:     ptr(artifactOf(7, 1, cost.TriggerAutomatic, refA, acceptedReport("p", "G", 0.2, t0, 60))),
			wantDecision: DecisionUnknown, wantTrigger: cost.TriggerAutomatic, wantNotes: 2, wantPods: 0,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			saved := savedAttempt{rec: completedAttempt(7, 1, tc.event, t0), logs: tc.logs}
			if tc.artifact != nil {
				saved.artifacts = []cost.Artifact{*tc.artifact}
			}
			writeSaved(t, dir, saved)
			a := readSaved(t, dir, saved.rec.Key())
			assert.Equal(t, a.Decision, tc.wantDecision)
			assert.Equal(t, a.Trigger, tc.wantTrigger)
			assert.Equal(t, a.TestedRef, tc.wantRef)
			assert.Check(t, is.Len(a.Notes, tc.wantNotes), "%q", a.Notes)
			assert.Equal(t, a.EvidenceComplete, tc.logs != nil)
			assert.Equal(t, len(a.Pods), tc.wantPods)
			for _, p := range a.Pods {
				assert.Check(t, p.Source != SourceGate || !p.Dollars.Known, "a pod only the gate shows has an unknown cost")
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// readSaved reads one saved attempt back.
func readSaved(t *testing.T, dir string, k AttemptKey) Attempt {
	t.Helper()
	rec, ok, err := store{dir: dir}.load(k)
	assert.NilError(t, err)
	assert.Assert(t, ok)
	return readAttempt(store{dir: dir}, rec, nil)
}
