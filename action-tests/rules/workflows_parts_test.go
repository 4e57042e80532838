package rules

// Your own GPU job: the lane's parts (gpu-lane-authorize.yml,
// gpu-lane-provision.yml, gpu-lane-watchdog.yml, gpu-lane-finish.yml) run
// gpu-lane.yml's jobs around a GPU job the caller writes. go generate writes
// them from gpu-lane.yml (pkg/lanegen, whose TestLaneYAMLIsGenerated keeps
// them so), their headers from templates that copy the lane's settings by
// name; the checks here hold those headers and the parts' callers to the lane.

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// metaLaneParts maps each part of the lane to the gpu-lane.yml jobs it runs.
// The provision part runs provision-again (the lane's first provisioning and
// a host-fault re-run alike), under the id provision (metaPartJob).
var metaLaneParts = map[string][]string{
	"gpu-lane-authorize.yml": {"authorize", "reputation"},
	"gpu-lane-provision.yml": {"provision-again"},
	"gpu-lane-watchdog.yml":  {"watchdog"},
	"gpu-lane-finish.yml":    {"gate", "cleanup"},
}

// metaPartJob is the part's own id of a gpu-lane.yml job it runs.
var metaPartJob = map[string]string{"provision-again": "provision"}

// metaRawJobs reads a workflow's jobs as plain values.
func metaRawJobs(t *testing.T, name, text string) (jobs map[string]map[string]any, call map[string]any) {
	t.Helper()
	var doc struct {
		On   map[string]map[string]any `yaml:"on"`
		Jobs map[string]map[string]any `yaml:"jobs"`
	}
	assert.NilError(t, yaml.Unmarshal([]byte(text), &doc), name)
	return doc.Jobs, doc.On["workflow_call"]
}

// TestMetaLanePartsTakeTheLanesSettings: gpu-lane-authorize.yml takes every
// setting of gpu-lane.yml (the GPU job's own timeout aside, which the caller's
// job sets) with the same type and default, plus the GPU job's name and test
// step; the other parts take the lane record and the environment, and each
// part's lane output carries its own jobs' outputs on top of what it got.
func TestMetaLanePartsTakeTheLanesSettings(t *testing.T) {
	files := metaWorkflowFiles(t)
	_, laneCall := metaRawJobs(t, "gpu-lane.yml", files["gpu-lane.yml"])
	_, authCall := metaRawJobs(t, "gpu-lane-authorize.yml", files["gpu-lane-authorize.yml"])
	laneInputs, _ := laneCall["inputs"].(map[string]any)
	authInputs, _ := authCall["inputs"].(map[string]any)
	for name, v := range laneInputs {
		want, _ := v.(map[string]any)
		got, ok := authInputs[name].(map[string]any)
		switch {
		case name == "test-timeout-minutes":
			assert.Check(t, !ok, "the GPU job's timeout is the caller's job's own timeout-minutes")
		case !ok:
			t.Errorf("gpu-lane-authorize.yml has no input %s (gpu-lane.yml's)", name)
		default:
			assert.Check(t, is.Equal(got["type"], want["type"]), "input %s", name)
			if name != "test-command" { // optional in a part: no text, no tree key
				assert.Check(t, is.Equal(got["default"], want["default"]), "input %s", name)
			}
		}
	}
	for _, name := range []string{"gpu-job-name", "test-step-name"} {
		_, ok := authInputs[name]
		assert.Check(t, ok, "gpu-lane-authorize.yml has no input %s", name)
	}
	for part, jobs := range metaLaneParts {
		_, call := metaRawJobs(t, part, files[part])
		inputs, _ := call["inputs"].(map[string]any)
		if part != "gpu-lane-authorize.yml" {
			_, ok := inputs["lane"]
			assert.Check(t, ok, "%s takes no lane", part)
		}
		outputs, _ := call["outputs"].(map[string]any)
		lane, ok := outputs["lane"].(map[string]any)
		if part == "gpu-lane-finish.yml" {
			assert.Check(t, !ok, "%s ends the lane; it passes no lane on", part)
			continue
		}
		value, _ := lane["value"].(string)
		for _, id := range jobs {
			id = cmpOr(metaPartJob[id], id)
			assert.Check(t, is.Contains(value, `"`+id+`":{{"outputs":{`), "%s: lane output", part)
			assert.Check(t, is.Contains(value, "toJSON(jobs."+id+".outputs)"), "%s: lane output", part)
		}
	}
}

// metaOwnJobCaller is what the own-job checks read of a caller.
type metaOwnJobCaller struct {
	Concurrency any                `yaml:"concurrency"`
	Jobs        map[string]metaJob `yaml:"jobs"`
}

// metaCallerJobOf returns the id of the caller's (first) job that calls the part.
func metaCallerJobOf(c metaOwnJobCaller, part string) string {
	if ids := metaCallerJobsOf(c, part); len(ids) > 0 {
		return ids[0]
	}
	return ""
}

// metaCallerJobsOf returns the ids of the caller's jobs that call the part,
// the lane's first call first (a host-fault re-run's ids are longer).
func metaCallerJobsOf(c metaOwnJobCaller, part string) []string {
	var ids []string
	for _, id := range metaSortedKeys(c.Jobs) {
		if m := metaSuiteWorkflowRE.FindStringSubmatch(c.Jobs[id].Uses); m != nil && m[1] == part {
			ids = append(ids, id)
		}
	}
	slices.SortStableFunc(ids, func(a, b string) int { return len(a) - len(b) })
	return ids
}

// metaWith reads a calling job's with: value (the suite's parts take strings).
func metaWith(t *testing.T, block, job, key string) string {
	t.Helper()
	var doc struct {
		Jobs map[string]struct {
			With map[string]string `yaml:"with"`
		} `yaml:"jobs"`
	}
	assert.NilError(t, yaml.Unmarshal([]byte(block), &doc))
	return doc.Jobs[job].With[key]
}

// metaGPUJobOf is the caller's job that runs on prov's pods: on its
// runner-label, or one job per pod of its pods output (a matrix).
func metaGPUJobOf(c metaOwnJobCaller, prov string) (id string, perPod bool) {
	for _, id := range metaSortedKeys(c.Jobs) {
		job := c.Jobs[id]
		runsOn, _ := job.RunsOn.(string)
		strategy, _ := job.Strategy.(map[string]any)
		matrix, _ := strategy["matrix"].(map[string]any)
		switch {
		case runsOn == "${{ needs."+prov+".outputs.runner-label }}":
			return id, false
		case runsOn == "${{ matrix.pod.runner-label }}" && matrix["pod"] == "${{ fromJSON(needs."+prov+".outputs.pods) }}":
			return id, true
		}
	}
	return "", false
}

// metaOwnJobProblems checks a caller of the lane's parts: the four parts in
// order around a GPU job on the runner label (or one per pod), that job named
// as the watchdog knows it, with the test step the watchdog waits for, every
// step before it bounded, its archive downloaded with one bounded retry and
// built by a hosted job that overlaps provision, and finish running whatever
// happened with the last part's lane; with a host-fault re-run, the re-run's
// parts fed by the watchdog's lane and its GPU job the first one's steps.
func metaOwnJobProblems(t *testing.T, block string) []string {
	t.Helper()
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	var c metaOwnJobCaller
	assert.NilError(t, yaml.Unmarshal([]byte(block), &c))
	auth, prov := metaCallerJobOf(c, "gpu-lane-authorize.yml"), metaCallerJobOf(c, "gpu-lane-provision.yml")
	watch, finish := metaCallerJobOf(c, "gpu-lane-watchdog.yml"), metaCallerJobOf(c, "gpu-lane-finish.yml")
	if auth == "" || prov == "" || watch == "" || finish == "" {
		return []string{fmt.Sprintf("the caller does not call all four parts: authorize %q, provision %q, watchdog %q, finish %q", auth, prov, watch, finish)}
	}
	gpu, perPod := metaGPUJobOf(c, prov)
	if gpu == "" {
		return []string{"no job runs-on ${{ needs." + prov + ".outputs.runner-label }} (or, one per pod, ${{ matrix.pod.runner-label }} over ${{ fromJSON(needs." + prov + ".outputs.pods) }})"}
	}
	problems = append(problems, metaGPUJobProblems(t, block, c, auth, prov, gpu, perPod)...)
	if !slices.Contains(metaNeeds(c.Jobs[watch]), prov) || !slices.Contains(metaNeeds(c.Jobs[gpu]), prov) {
		add("the watchdog and the GPU job both need %s (the runner label), and run beside each other", prov)
	}
	lanes := []string{watch, prov, auth}
	results := map[string]string{"gpu-job-result": "${{ needs." + gpu + ".result }}", "provision-result": "${{ needs." + prov + ".result }}"}
	if provs, watches := metaCallerJobsOf(c, "gpu-lane-provision.yml"), metaCallerJobsOf(c, "gpu-lane-watchdog.yml"); len(provs) > 1 || len(watches) > 1 {
		again, watchAgain, gpuAgain, more := metaRerunProblems(t, block, c, watch, gpu, provs, watches)
		problems = append(problems, more...)
		lanes = append([]string{watchAgain, again}, lanes...)
		results["rerun-gpu-job-result"] = "${{ needs." + gpuAgain + ".result }}"
	}
	fin := c.Jobs[finish]
	if !strings.Contains(fin.If, "always()") || !slices.Contains(metaNeeds(fin), gpu) {
		add("%s must need the GPU job and run whatever happened (if: always() && …), got needs %v, if %q", finish, metaNeeds(fin), fin.If)
	}
	var lane []string
	for _, id := range lanes {
		lane = append(lane, "needs."+id+".outputs.lane")
		if !slices.Contains(metaNeeds(fin), id) {
			add("%s must need %s, whose lane it may read", finish, id)
		}
	}
	results["lane"] = "${{ " + strings.Join(lane, " || ") + " }}"
	for key, want := range results {
		if got := metaWith(t, block, finish, key); got != want {
			add("%s passes %s %q: want %q (the last part's lane: the watchdog's carries its host faults)", finish, key, got, want)
		}
	}
	if group, cancel := metaGroup(c.Concurrency); !strings.HasPrefix(group, "runpod-gpu-prepare-") || cancel != false {
		add("the caller holds no workflow concurrency runpod-gpu-prepare-<head> with cancel-in-progress: false (got %v)", c.Concurrency)
	}
	return problems
}

// metaGPUJobProblems checks the GPU job: named as the watchdog knows it
// (per tier when one per pod), its test step there, every step before it
// bounded, its archive downloaded with one bounded retry and uploaded by a
// hosted job that does not wait for the pods.
func metaGPUJobProblems(t *testing.T, block string, c metaOwnJobCaller, auth, prov, gpu string, perPod bool) []string {
	t.Helper()
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	job := c.Jobs[gpu]
	name := cmpOr(job.Name, gpu)
	base := cmpOr(metaWith(t, block, auth, "gpu-job-name"), "GPU tests")
	want := base
	if perPod {
		want = fmt.Sprintf("${{ matrix.pod.tier && format('%s ({0})', matrix.pod.tier) || '%s' }}", base, base)
	}
	if name != want {
		add("the GPU job is named %q, but the watchdog knows it as %q: it would take it for another job and delete the pod", name, want)
	}
	testStep := cmpOr(metaWith(t, block, auth, "test-step-name"), "Run GPU tests")
	at := -1
	for i, st := range job.Steps {
		if st.Name == testStep {
			at = i
		}
	}
	if at < 0 {
		add("the GPU job has no step %q (test-step-name): its pod would always be deleted at the setup deadline", testStep)
		at = len(job.Steps)
	}
	download := ""
	for i, st := range job.Steps[:at] {
		if st.TimeoutMinutes == nil {
			add("the GPU job's step %q runs before the tests without timeout-minutes", cmpOr(st.Name, st.Uses+st.Run))
		}
		if strings.HasPrefix(st.Uses, "actions/download-artifact@") {
			switch {
			case download == "" && st.ID != "" && fmt.Sprint(metaStepField(t, block, gpu, i, "continue-on-error")) == "true":
				download = st.ID
			case download != "" && strings.Contains(st.If, "steps."+download+".outcome == 'failure'"):
				download = "retried"
			}
		}
	}
	if download != "retried" {
		add("the GPU job does not download its archive with one bounded retry (a first download with an id and continue-on-error, a second if it failed)")
	}
	// No step follows the tests: it would hold the run's runtime token within
	// reach of what the pull request's code left running (SECURITY.md).
	if at < len(job.Steps)-1 { // at is len(job.Steps) without a test step
		add("the GPU job has steps after its tests (%q first): results go to the log or the step summary", cmpOr(job.Steps[at+1].Name, job.Steps[at+1].Uses+job.Steps[at+1].Run))
	}
	for _, id := range metaSortedKeys(c.Jobs) {
		builds := slices.ContainsFunc(c.Jobs[id].Steps, func(st metaStep) bool { return strings.HasPrefix(st.Uses, "actions/upload-artifact@") })
		if id != gpu && builds && slices.Contains(metaNeeds(c.Jobs[id]), prov) {
			add("job %s builds the archive after provision: it would run while the pod bills; make it need %s only", id, auth)
		}
	}
	return problems
}

// metaRerunProblems checks a caller's host-fault re-run: provision called
// again with the watchdog's lane when it names host faults, whatever the
// first round's jobs concluded (but not after a cancel); the watchdog again
// beside it; and the GPU job again on its pods with the first one's steps.
func metaRerunProblems(t *testing.T, block string, c metaOwnJobCaller, watch, gpu string, provs, watches []string) (again, watchAgain, gpuAgain string, problems []string) {
	t.Helper()
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if len(provs) != 2 || len(watches) != 2 {
		add("a host-fault re-run calls gpu-lane-provision.yml and gpu-lane-watchdog.yml once more each, got %v and %v", provs, watches)
		return "", "", "", problems
	}
	again, watchAgain = provs[1], watches[1]
	if got := metaWith(t, block, again, "lane"); got != "${{ needs."+watch+".outputs.lane }}" {
		add("%s takes lane %q: want the watchdog's (${{ needs.%s.outputs.lane }}), which names the lost pods", again, got, watch)
	}
	if cond := c.Jobs[again].If; !strings.Contains(cond, "!cancelled()") || !strings.Contains(cond, "needs."+watch+".outputs.host-faults") {
		add("%s must run when the watchdog names host faults, whatever the GPU job concluded, and not after a cancel (if: ${{ !cancelled() && … host-faults … }}), got %q", again, cond)
	}
	if got := metaWith(t, block, watchAgain, "lane"); got != "${{ needs."+again+".outputs.lane }}" {
		add("%s takes lane %q: want %s's", watchAgain, got, again)
	}
	gpuAgain, _ = metaGPUJobOf(c, again)
	if gpuAgain == "" {
		add("no GPU job runs on %s's pods", again)
		return again, watchAgain, gpuAgain, problems
	}
	first, _ := yaml.Marshal(c.Jobs[gpu].Steps)
	second, _ := yaml.Marshal(c.Jobs[gpuAgain].Steps)
	if string(first) != string(second) || c.Jobs[gpu].Name != c.Jobs[gpuAgain].Name {
		add("the re-run's GPU job %s is not %s again (the same name and steps: an anchor &gpu-steps and *gpu-steps keeps them one)", gpuAgain, gpu)
	}
	return again, watchAgain, gpuAgain, problems
}

// metaStepField reads a field of a job's step that metaStep does not keep.
func metaStepField(t *testing.T, block, job string, step int, key string) any {
	t.Helper()
	var doc struct {
		Jobs map[string]struct {
			Steps []map[string]any `yaml:"steps"`
		} `yaml:"jobs"`
	}
	assert.NilError(t, yaml.Unmarshal([]byte(block), &doc))
	return doc.Jobs[job].Steps[step][key]
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// metaReadmeOwnJobCallers are the README's callers of the lane's parts:
// one GPU job on one pod, then one per pod with a host-fault re-run.
func metaReadmeOwnJobCallers(t *testing.T) []string {
	t.Helper()
	var callers []string
	for _, block := range metaReadmeCallerBlocks(t) {
		if strings.Contains(block, "/.github/workflows/gpu-lane-authorize.yml@") {
			callers = append(callers, block)
		}
	}
	assert.Assert(t, is.Len(callers, 2), "the workflows page: want the own-job caller and the one per pod with a re-run")
	return callers
}

// metaReadmeOwnJobCaller is the README's first caller of the lane's parts.
func metaReadmeOwnJobCaller(t *testing.T) string { return metaReadmeOwnJobCallers(t)[0] }

// TestReadmeOwnJobCaller: the README's own-job callers are the complete
// pattern (the concurrency group, the runner's one job, the signal, the
// archive; one job per pod and the host-fault re-run in the second).
func TestReadmeOwnJobCaller(t *testing.T) {
	for i, block := range metaReadmeOwnJobCallers(t) {
		assert.Check(t, is.Len(metaOwnJobProblems(t, block), 0), "caller %d", i+1)
		var c metaOwnJobCaller
		assert.NilError(t, yaml.Unmarshal([]byte(block), &c))
		group, _ := metaGroup(c.Concurrency)
		metaCheckGroupByHead(t, "the README's own-job caller", group)
		_, perPod := metaGPUJobOf(c, metaCallerJobOf(c, "gpu-lane-provision.yml"))
		assert.Check(t, perPod == (i == 1), "caller %d: one GPU job per pod only in the second", i+1)
	}
}

// TestPerPodCallerCheckDetectsMistakes plants each re-run mistake in the
// README's caller of one GPU job per pod.
func TestPerPodCallerCheckDetectsMistakes(t *testing.T) {
	block := metaReadmeOwnJobCallers(t)[1]
	tests := []struct {
		name, old, new, want string
		problems             int // 0 means one
	}{
		{name: "a job per pod named without its tier", old: "    name: ${{ matrix.pod.tier && format('GPU tests ({0})', matrix.pod.tier) || 'GPU tests' }}\n    needs: [build, provision]\n",
			new: "    name: GPU tests\n    needs: [build, provision]\n", want: `the GPU job is named "GPU tests", but the watchdog knows it as`, problems: 2},
		{name: "the re-run fed provision's lane", old: "    with: {lane: \"${{ needs.watchdog.outputs.lane }}\"}\n",
			new: "    with: {lane: \"${{ needs.provision.outputs.lane }}\"}\n", want: "provision-again takes lane"},
		{name: "the re-run only after a success", old: "    if: ${{ !cancelled() && contains(needs.watchdog.outputs.host-faults, 'pod-id') }}\n",
			new: "    if: contains(needs.watchdog.outputs.host-faults, 'pod-id')\n", want: "whatever the GPU job concluded"},
		{name: "the re-run's own steps", old: "    steps: *gpu-steps\n", new: "    steps: [{name: Run GPU tests, run: make}]\n", want: "is not gpu again"},
		{name: "finish without the re-run's result", old: "      rerun-gpu-job-result: ${{ needs.gpu-again.result }}\n", new: "", want: "passes rerun-gpu-job-result"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Assert(t, strings.Contains(block, tc.old), "the caller no longer contains %q; update this case", tc.old)
			problems := metaOwnJobProblems(t, strings.Replace(block, tc.old, tc.new, 1))
			assert.Check(t, is.Len(problems, max(tc.problems, 1)), "%v", problems)
			assert.Check(t, is.Contains(strings.Join(problems, "\n"), tc.want))
		})
	}
}

// TestOwnJobCallerCheckDetectsMistakes plants each mistake in the README's caller.
func TestOwnJobCallerCheckDetectsMistakes(t *testing.T) {
	block := metaReadmeOwnJobCaller(t)
	tests := []struct{ name, old, new, want string }{
		{name: "the GPU job renamed", old: "    name: GPU tests\n", new: "    name: Tests on the GPU\n", want: `the GPU job is named "Tests on the GPU"`},
		{name: "no test step", old: "      - name: Run GPU tests\n", new: "      - name: Test\n", want: `the GPU job has no step "Run GPU tests"`},
		{name: "unbounded set-up", old: "        timeout-minutes: 5\n        run: tar", new: "        run: tar", want: `step "Unpack the test archive" runs before the tests without timeout-minutes`},
		{name: "no retry", old: "        if: steps.download.outcome == 'failure'\n", new: "", want: "one bounded retry"},
		{name: "an upload after the tests", old: "&& cat results.xml   # results in the job's log\n",
			new:  "\n      - name: Upload the results\n        if: always()\n        uses: actions/upload-artifact@ea165f8d65b6e75b540449e92b4886f43607fa02 # v4.6.2\n        with: {name: gpu-test-results, path: results.xml}\n",
			want: `the GPU job has steps after its tests ("Upload the results" first)`},
		{name: "built in the paid window", old: "  build:   # hosted, at the tested ref, while the pod starts: nothing is built in the paid window\n    needs: authorize\n",
			new: "  build:\n    needs: [authorize, provision]\n", want: "job build builds the archive after provision"},
		{name: "finish only on success", old: "    if: always() && needs.authorize.result == 'success'\n", new: "    if: needs.authorize.result == 'success'\n", want: "run whatever happened"},
		{name: "no concurrency", old: "  cancel-in-progress: false\n", new: "  cancel-in-progress: true\n", want: "holds no workflow concurrency"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Assert(t, strings.Contains(block, tc.old), "the caller no longer contains %q; update this case", tc.old)
			problems := metaOwnJobProblems(t, strings.Replace(block, tc.old, tc.new, 1))
			assert.Check(t, is.Len(problems, 1), "%v", problems)
			assert.Check(t, is.Contains(strings.Join(problems, "\n"), tc.want))
		})
	}
}
