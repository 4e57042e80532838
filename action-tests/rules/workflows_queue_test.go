package rules

// The global paid lock is gone (issue 37): lanes of different trees create
// pods at the same time, and the claim, the budget's re-check after each
// create and max_concurrent_pods guard the spend instead. These checks keep
// it gone: no workflow of the suite holds the runpod-gpu-paid group, which
// would serialise every lane again. actionlint 1.7.12 does not know
// concurrency's `queue` key either, so a queue key, should one come back, is
// checked here to be well formed.

import (
	"fmt"
	"testing"

	"gopkg.in/yaml.v3"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// metaPaidLockGroup is the concurrency group every pod creation ran in
// before creation became parallel.
const metaPaidLockGroup = "runpod-gpu-paid"

// metaQueueProblems checks one workflow's concurrency settings: no group is
// the removed paid lock, and a queue key anywhere is "max" beside a false or
// absent cancel-in-progress (GitHub refuses a queue with cancel-in-progress).
// It returns the paid locks it found, by job.
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
		m, _ := c.(map[string]any)
		group, _ := metaGroup(c)
		queue, hasQueue := m["queue"]
		if group == metaPaidLockGroup {
			locks = append(locks, where)
			problems = append(problems, fmt.Sprintf("%s: holds %s, the removed global paid lock: every lane would create its pod one after another again "+
				"(the claim, the budget's re-check and max_concurrent_pods guard parallel creation)", where, group))
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

// TestMetaNoPaidLock: no workflow of the suite holds the removed global paid
// lock, and every queue key is well formed.
func TestMetaNoPaidLock(t *testing.T) {
	var locks []string
	files := metaWorkflowFiles(t)
	for _, name := range metaSortedKeys(files) {
		found, problems := metaQueueProblems(name, files[name])
		locks = append(locks, found...)
		assert.Check(t, is.Len(problems, 0), "%v", problems)
	}
	assert.Check(t, is.Len(locks, 0), "the paid lock is held by %v", locks)
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
		{name: "paid lock comes back", text: job("      group: runpod-gpu-paid\n      cancel-in-progress: false\n      queue: max\n"),
			want: []string{"w.yml: job provision: holds runpod-gpu-paid, the removed global paid lock: every lane would create its pod one after another again " +
				"(the claim, the budget's re-check and max_concurrent_pods guard parallel creation)"}},
		{name: "paid lock as a string", text: "on: workflow_dispatch\njobs:\n  provision:\n    concurrency: runpod-gpu-paid\n",
			want: []string{"w.yml: job provision: holds runpod-gpu-paid, the removed global paid lock: every lane would create its pod one after another again " +
				"(the claim, the budget's re-check and max_concurrent_pods guard parallel creation)"}},
		{name: "wrong queue value", text: job("      group: runpod-gpu-x\n      queue: 5\n"),
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
