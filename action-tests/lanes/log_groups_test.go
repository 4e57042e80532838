package lanes

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// logGroup is one ::group:: block of a step's log.
type logGroup struct {
	title string
	lines []string
}

// logGroups returns a step's ::group:: blocks in order, failing the test when
// they are unbalanced: GitHub cannot nest groups, so a group opened inside
// another, an ::endgroup:: without its group, or a group left open would fold
// the wrong lines away.
func logGroups(t *testing.T, stdout string) []logGroup {
	t.Helper()
	var groups []logGroup
	open := false
	for _, l := range strings.Split(stdout, "\n") {
		switch {
		case strings.HasPrefix(l, "::group::"):
			assert.Assert(t, !open, "%q opened inside another group:\n%s", l, stdout)
			groups, open = append(groups, logGroup{title: strings.TrimPrefix(l, "::group::")}), true
		case l == "::endgroup::":
			assert.Assert(t, open, "::endgroup:: without its group:\n%s", stdout)
			open = false
		case open:
			groups[len(groups)-1].lines = append(groups[len(groups)-1].lines, l)
		}
	}
	assert.Assert(t, !open, "the last group never ended:\n%s", stdout)
	return groups
}

// hasLine reports whether one of lines starts with prefix.
func hasLine(lines []string, prefix string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

// TestLongPhasesAreFoldedInGroups: provision's plan and each attempt,
// cleanup's deletion and the reaper's sweep each sit in one balanced
// ::group:: block, so the log reads as a list of phases, each opened on demand.
func TestLongPhasesAreFoldedInGroups(t *testing.T) {
	t.Parallel()
	s := startCloud(t, testMarket(testHost("h1", harness.A4000, false), testHost("h2", harness.A5000, true)), runpodsim.Faults{}, fastConfig)
	prov := harness.RunStep(t, s.ProvisionStep(s.openPR(t)))
	assert.Equal(t, prov.ExitCode, 0, prov.Stdout)

	groups := logGroups(t, prov.Stdout)
	var titles []string
	for _, g := range groups {
		titles = append(titles, g.title)
	}
	assert.DeepEqual(t, titles, []string{
		"plan: the candidates to try, in order",
		"attempt 1 of 3: live-1 (" + harness.A4000 + ")",
		"attempt 2 of 3: live-2 (" + harness.A5000 + ")",
	})
	assert.Check(t, hasLine(groups[0].lines, "plan (3 candidates"), "the plan is inside its group")
	assert.Check(t, hasLine(groups[0].lines, "| 3 | static-ampere-1 |"), "the whole plan table is inside its group")
	assert.Check(t, hasLine(groups[1].lines, "created pod "))
	assert.Check(t, hasLine(groups[1].lines, "attempt 1 live-1: rejected"), "the attempt's outcome is inside its group")
	assert.Check(t, hasLine(groups[1].lines, "runpod-gpu::attempt {"), "the structured line the cost history reads")
	assert.Check(t, hasLine(groups[2].lines, "attempt 2 live-2: accepted"))
	assert.Check(t, is.Contains(prov.Stdout, "paid-path decision: "))
	assert.Check(t, !hasLine(groups[0].lines, "paid-path decision: "), "short steps stay outside the groups")

	clean := harness.RunStep(t, s.cleanupStep(s.RunID, prov.Outputs))
	assert.Equal(t, clean.ExitCode, 0, clean.Stdout)
	cleanGroups := logGroups(t, clean.Stdout)
	assert.Assert(t, is.Len(cleanGroups, 1), clean.Stdout)
	assert.Equal(t, cleanGroups[0].title, "deletion: this run's pods, then their cost")
	assert.Check(t, hasLine(cleanGroups[0].lines, "pod "+prov.Outputs["pod-id"]+": DELETE"), "the deletion is inside its group:\n%s", clean.Stdout)

	reapEnv := s.RunnerEnv()
	reapEnv["GITHUB_EVENT_NAME"] = "workflow_dispatch"
	reaped := harness.RunStep(t, harness.Step{Action: "reap", Workspace: s.Workspace, Env: reapEnv, Event: map[string]any{},
		Inputs: map[string]string{"runpod-api-key": cloud.RunPodKey, "github-token": cloud.GitHubToken, "runpod-api-url": s.RunPodURL}})
	assert.Equal(t, reaped.ExitCode, 0, reaped.Stdout)
	reapGroups := logGroups(t, reaped.Stdout)
	assert.Assert(t, is.Len(reapGroups, 1), reaped.Stdout)
	assert.Equal(t, reapGroups[0].title, "sweep: this repository's pods and Serverless endpoints")
}
