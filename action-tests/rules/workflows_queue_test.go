package rules

// actionlint 1.7.12 does not know concurrency's `queue` key, and its message
// is ignored by .github/actionlint.yaml. These checks stand in for it:
// the global paid lock queues its waiters (queue: max), and any queue key in
// the suite's workflows is well formed.

import (
	"fmt"
	"slices"
	"testing"

	"gopkg.in/yaml.v3"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// metaPaidLockGroup is the concurrency group every pod creation runs in.
const metaPaidLockGroup = "runpod-gpu-paid"

// metaQueueProblems checks one workflow's concurrency settings: a group that
// is the paid lock queues its waiters with queue: max and never cancels, and
// a queue key anywhere is "max" beside a false or absent cancel-in-progress
// (GitHub refuses a queue with cancel-in-progress). It returns the paid
// locks it found, by job.
func metaQueueProblems(name, text string) (locks []string, problems []string) {
	var wf struct {
		Concurrency any `yaml:"concurrency"`
		Jobs        map[string]struct {
			Concurrency any `yaml:"concurrency"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal([]byte(text), &wf); err != nil {
		return nil, []string{fmt.Sprintf("%s: %v", name, err)}
	}
	check := func(where string, c any) {
		m, isMap := c.(map[string]any)
		group, _ := metaGroup(c)
		queue, hasQueue := m["queue"]
		if group == metaPaidLockGroup {
			locks = append(locks, where)
			if !isMap || !hasQueue {
				problems = append(problems, fmt.Sprintf("%s: the paid lock %s has no queue: max, so a third lane waiting cancels the one already waiting", where, group))
			}
		}
		if !hasQueue {
			return
		}
		if queue != "max" {
			problems = append(problems, fmt.Sprintf("%s: concurrency queue is %v: want max", where, queue))
		}
		if cancel, ok := m["cancel-in-progress"]; ok && cancel != false {
			problems = append(problems, fmt.Sprintf("%s: concurrency queue with cancel-in-progress %v: want false or absent", where, cancel))
		}
	}
	if wf.Concurrency != nil {
		check(name, wf.Concurrency)
	}
	for _, id := range metaSortedKeys(wf.Jobs) {
		if c := wf.Jobs[id].Concurrency; c != nil {
			check(name+": job "+id, c)
		}
	}
	return locks, problems
}

// TestMetaPaidLockQueues: the lane's provision job holds the global paid
// lock with queue: max, and so does every other holder of that lock.
func TestMetaPaidLockQueues(t *testing.T) {
	var locks []string
	files := metaWorkflowFiles(t)
	for _, name := range metaSortedKeys(files) {
		found, problems := metaQueueProblems(name, files[name])
		locks = append(locks, found...)
		assert.Check(t, is.Len(problems, 0), "%v", problems)
	}
	assert.Check(t, slices.Contains(locks, "gpu-lane.yml: job provision"), "gpu-lane.yml's provision holds no paid lock; found %v", locks)
}

// TestMetaQueueCheckDetectsMistakes plants each mistake the check exists for.
func TestMetaQueueCheckDetectsMistakes(t *testing.T) {
	job := func(concurrency string) string {
		return "on: workflow_dispatch\njobs:\n  provision:\n    runs-on: ubuntu-latest\n    concurrency:\n" + concurrency
	}
	tests := []struct {
		name, text string
		want       []string
	}{
		{name: "queued paid lock", text: job("      group: runpod-gpu-paid\n      cancel-in-progress: false\n      queue: max\n")},
		{name: "paid lock without queue", text: job("      group: runpod-gpu-paid\n      cancel-in-progress: false\n"),
			want: []string{"w.yml: job provision: the paid lock runpod-gpu-paid has no queue: max, so a third lane waiting cancels the one already waiting"}},
		{name: "paid lock as a string", text: "on: workflow_dispatch\njobs:\n  provision:\n    concurrency: runpod-gpu-paid\n",
			want: []string{"w.yml: job provision: the paid lock runpod-gpu-paid has no queue: max, so a third lane waiting cancels the one already waiting"}},
		{name: "wrong queue value", text: job("      group: runpod-gpu-paid\n      queue: 5\n"),
			want: []string{"w.yml: job provision: concurrency queue is 5: want max"}},
		{name: "queue that cancels", text: "on: workflow_dispatch\nconcurrency: {group: g, cancel-in-progress: true, queue: max}\njobs: {}\n",
			want: []string{"w.yml: concurrency queue with cancel-in-progress true: want false or absent"}},
		{name: "other group needs no queue", text: job("      group: runpod-gpu-reap\n")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, got := metaQueueProblems("w.yml", tc.text)
			if tc.want == nil {
				assert.Check(t, is.Len(got, 0), "%v", got)
				return
			}
			assert.Check(t, is.DeepEqual(got, tc.want))
		})
	}
}
