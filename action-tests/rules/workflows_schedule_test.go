package rules

// A copy of this repository (a fork, or the copy an adopter publishes) runs
// this repository's scheduled workflows as they are, usually with no GPU
// lane and no RunPod key: none of them may fire more than once an hour
// there. The reaper's callers in the README, which run where a lane does,
// sweep every 15 minutes.

import (
	"strconv"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// metaCronAtMostHourly reports whether a cron line fires at most once an
// hour: its minute field is one minute, not a list, range or step.
func metaCronAtMostHourly(cron string) bool {
	fields := strings.Fields(cron)
	if len(fields) != 5 {
		return false
	}
	minute, err := strconv.Atoi(fields[0])
	return err == nil && minute >= 0 && minute < 60
}

// metaSchedules returns the cron lines of a workflow's on.schedule.
func metaSchedules(t *testing.T, name, text string) []string {
	t.Helper()
	wf := metaParseWorkflow(t, name, text)
	on, _ := wf.On.(map[string]any)
	list, _ := on["schedule"].([]any)
	var crons []string
	for _, item := range list {
		entry, _ := item.(map[string]any)
		cron, _ := entry["cron"].(string)
		crons = append(crons, cron)
	}
	return crons
}

func TestScheduledWorkflowsRunAtMostHourlyInACopy(t *testing.T) {
	scheduled := 0
	for name, text := range metaWorkflowFiles(t) {
		for _, cron := range metaSchedules(t, name, text) {
			scheduled++
			assert.Check(t, metaCronAtMostHourly(cron), "%s: schedule %q fires more than once an hour in every copy of the repository", name, cron)
		}
	}
	assert.Check(t, scheduled >= 2, "the reaper and the cost history are scheduled")
	reap := metaSchedules(t, "reap.yml", metaWorkflowFiles(t)["reap.yml"])
	assert.Check(t, is.Len(reap, 1), "reap.yml is scheduled once")
}

func TestCronAtMostHourly(t *testing.T) {
	for cron, want := range map[string]bool{
		"23 * * * *": true, "17 6 * * *": true, "0 */2 * * *": true,
		"*/15 * * * *": false, "0,30 * * * *": false, "* * * * *": false, "0-5 * * * *": false, "0 * * *": false,
	} {
		assert.Check(t, metaCronAtMostHourly(cron) == want, cron)
	}
}
