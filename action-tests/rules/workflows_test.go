package rules

// The workflows in .github/workflows are checked three ways: actionlint (as a
// library, shellcheck and pyflakes off) over every file; this suite's own check
// of every step that uses one of its actions, local (./actions/x) or published
// (org/runpod-gpu/actions/x@ref), against that action's action.yml — which
// actionlint cannot do for a published reference; and the lane's cost and
// security invariants (the paid lock, the per-head group, cleanup that always
// runs, bounded setup, pinned third-party actions, least privilege).

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
	"gopkg.in/yaml.v3"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// metaWorkflowsDir holds the workflows, seen from this package.
var metaWorkflowsDir = filepath.Join(metaRepoRoot, ".github", "workflows")

// metaWorkflow is the part of a workflow file these checks read.
type metaWorkflow struct {
	Name        string             `yaml:"name"`
	On          any                `yaml:"on"` // a string, a list or a map
	Permissions any                `yaml:"permissions"`
	Concurrency any                `yaml:"concurrency"`
	Jobs        map[string]metaJob `yaml:"jobs"`
}

type metaJob struct {
	Name           string            `yaml:"name"`
	Needs          any               `yaml:"needs"`
	If             string            `yaml:"if"`
	RunsOn         any               `yaml:"runs-on"`
	Uses           string            `yaml:"uses"`
	Permissions    any               `yaml:"permissions"`
	Concurrency    any               `yaml:"concurrency"`
	TimeoutMinutes any               `yaml:"timeout-minutes"`
	Outputs        map[string]string `yaml:"outputs"`
	Strategy       any               `yaml:"strategy"`
	Steps          []metaStep        `yaml:"steps"`
}

type metaStep struct {
	ID             string            `yaml:"id"`
	Name           string            `yaml:"name"`
	If             string            `yaml:"if"`
	Uses           string            `yaml:"uses"`
	Run            string            `yaml:"run"`
	With           map[string]string `yaml:"with"`
	Env            map[string]string `yaml:"env"`
	TimeoutMinutes any               `yaml:"timeout-minutes"`
}

// metaWorkflowFiles reads every workflow, by file name.
func metaWorkflowFiles(t *testing.T) map[string]string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(metaWorkflowsDir, "*.yml"))
	assert.NilError(t, err)
	files := map[string]string{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		assert.NilError(t, err)
		files[filepath.Base(p)] = string(data)
	}
	assert.Assert(t, len(files) > 0)
	return files
}

func metaParseWorkflow(t *testing.T, name, text string) metaWorkflow {
	t.Helper()
	var wf metaWorkflow
	assert.NilError(t, yaml.Unmarshal([]byte(text), &wf), name)
	return wf
}

// metaLinter lints with the repository as the project, so ./actions/x
// resolves to this tree's action.yml files and .github/actionlint.yaml, the
// configuration stock actionlint reads, ignores its two known false positives
// (TestActionlintConfigIgnoresOnlyKnownFalsePositives keeps it narrow).
func metaLinter(t *testing.T) (*actionlint.Linter, *actionlint.Project) {
	t.Helper()
	root, err := filepath.Abs(metaRepoRoot)
	assert.NilError(t, err)
	linter, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{
		Shellcheck: "", Pyflakes: "", // neither is installed where the tests run; .ci/run shellchecks what it must
		WorkingDir: root,
	})
	assert.NilError(t, err)
	project, err := actionlint.NewProject(root)
	assert.NilError(t, err)
	return linter, project
}

// metaLintPath names a workflow that Lint takes as content, relative to the
// repository root as actionlint's command names the files it finds, so that
// the configuration's paths apply to it.
func metaLintPath(name string) string { return filepath.Join(".github", "workflows", name) }

func metaFormatLint(errs []*actionlint.Error) string {
	lines := make([]string, 0, len(errs))
	for _, e := range errs {
		lines = append(lines, e.Error())
	}
	return strings.Join(lines, "\n  ")
}

func TestMetaWorkflowsLint(t *testing.T) {
	linter, project := metaLinter(t)
	errs, err := linter.LintDir(project.WorkflowsDir(), project)
	assert.NilError(t, err)
	assert.Check(t, len(errs) == 0, "actionlint:\n  %s", metaFormatLint(errs))
}

// TestMetaActionlintDetectsPlantedMistakes proves the lint is live: each
// planted mistake in a workflow that uses this repository's actions is found.
func TestMetaActionlintDetectsPlantedMistakes(t *testing.T) {
	const head = "on: workflow_dispatch\njobs:\n  j:\n    runs-on: ubuntu-latest\n    steps:\n"
	tests := []struct {
		name    string
		steps   string
		wantErr string
	}{
		{
			name:  "valid",
			steps: "      - uses: ./actions/reap\n        with:\n          runpod-api-key: x\n",
		},
		{
			name:    "unknown input of a local action",
			steps:   "      - uses: ./actions/provision\n        with:\n          runpod-api-key: x\n          runpod_api_url: y\n",
			wantErr: `input "runpod_api_url" is not defined in action "RunPod GPU provision"`,
		},
		{
			name:    "required input missing",
			steps:   "      - uses: ./actions/provision\n        with:\n          config-path: c.yml\n",
			wantErr: `missing input "runpod-api-key" which is required by action "RunPod GPU provision"`,
		},
		{
			name:    "output the action does not declare",
			steps:   "      - id: p\n        uses: ./actions/provision\n        with:\n          runpod-api-key: x\n      - run: echo ${{ steps.p.outputs.pod_id }}\n",
			wantErr: `property "pod_id" is not defined in object type`,
		},
		{
			name:    "bad expression",
			steps:   "      - run: echo ${{ github.event.pull_request.head.sha ) }}\n",
			wantErr: "parser did not reach end of input",
		},
	}
	linter, project := metaLinter(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := metaLintPath("planted.yml") // never written: Lint takes the content
			errs, err := linter.Lint(path, []byte(head+tc.steps), project)
			assert.NilError(t, err)
			if tc.wantErr == "" {
				assert.Check(t, len(errs) == 0, "actionlint:\n  %s", metaFormatLint(errs))
				return
			}
			assert.Check(t, is.Contains(metaFormatLint(errs), tc.wantErr))
		})
	}
}

// metaActionRefRE matches a use of one of this repository's actions, local or published.
var (
	metaActionRefRE  = regexp.MustCompile(`^(?:\./actions/|org/runpod-gpu/actions/)([a-z0-9-]+)(@\S+)?$`)
	metaStepOutputRE = regexp.MustCompile(`steps\.([A-Za-z0-9_-]+)\.outputs\.([A-Za-z0-9_-]+)`)
)

// metaLoadActions reads every action.yml, by directory name.
func metaLoadActions(t *testing.T) map[string]metaActionYML {
	t.Helper()
	actions := map[string]metaActionYML{}
	for _, name := range metaActionDirs(t) {
		data, err := os.ReadFile(filepath.Join(metaRepoRoot, "actions", name, "action.yml"))
		assert.NilError(t, err)
		a, err := metaLoadActionYML(data)
		assert.NilError(t, err, name)
		actions[name] = a
	}
	return actions
}

// metaCheckActionRefs checks every step of wf that uses one of this
// repository's actions against its action.yml: the action exists, every
// with: key is a declared input, every required input without a default is
// given, and every steps.<id>.outputs.<name> the job reads is declared.
func metaCheckActionRefs(wf metaWorkflow, actions map[string]metaActionYML) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	for _, jobID := range metaSortedKeys(wf.Jobs) {
		job := wf.Jobs[jobID]
		stepAction := map[string]string{} // step id → action
		for i, st := range job.Steps {
			m := metaActionRefRE.FindStringSubmatch(st.Uses)
			if m == nil {
				continue
			}
			where := fmt.Sprintf("jobs.%s.steps[%d] (%s)", jobID, i, st.Uses)
			a, ok := actions[m[1]]
			if !ok {
				add("%s: there is no actions/%s/action.yml", where, m[1])
				continue
			}
			if !strings.HasPrefix(st.Uses, "./") && m[2] == "" { // published, whatever the owner
				add("%s: a published action needs a ref (@v1)", where)
			}
			if st.ID != "" {
				stepAction[st.ID] = m[1]
			}
			for _, key := range metaSortedKeys(st.With) {
				if _, ok := a.Inputs[key]; !ok {
					add("%s: input %q is not declared by actions/%s", where, key, m[1])
				}
			}
			for _, key := range metaSortedKeys(a.Inputs) {
				if in := a.Inputs[key]; in.Required && in.Default == nil {
					if _, ok := st.With[key]; !ok {
						add("%s: required input %q is missing", where, key)
					}
				}
			}
		}
		// Outputs are read in later steps and in the job's outputs.
		var texts []string
		for _, st := range job.Steps {
			texts = append(texts, st.If, st.Run)
			for _, v := range st.With {
				texts = append(texts, v)
			}
			for _, v := range st.Env {
				texts = append(texts, v)
			}
		}
		for _, v := range job.Outputs {
			texts = append(texts, v)
		}
		for _, m := range metaStepOutputRE.FindAllStringSubmatch(strings.Join(texts, "\n"), -1) {
			name, ok := stepAction[m[1]]
			if !ok {
				continue
			}
			if _, ok := actions[name].Outputs[m[2]]; !ok {
				add("jobs.%s: steps.%s.outputs.%s is not an output of actions/%s", jobID, m[1], m[2], name)
			}
		}
	}
	return problems
}

func TestMetaWorkflowsUseActionsAsDeclared(t *testing.T) {
	actions := metaLoadActions(t)
	for name, text := range metaWorkflowFiles(t) {
		problems := metaCheckActionRefs(metaParseWorkflow(t, name, text), actions)
		assert.Check(t, len(problems) == 0, "%s:\n  %s", name, strings.Join(problems, "\n  "))
	}
}

// TestMetaActionRefCheckDetectsMistakes plants mistakes in a published
// reference, which actionlint cannot see into.
func TestMetaActionRefCheckDetectsMistakes(t *testing.T) {
	const wf = `on: workflow_call
jobs:
  j:
    runs-on: ubuntu-latest
    outputs:
      pod: ${{ steps.p.outputs.pod_id }}
    steps:
      - id: p
        uses: org/runpod-gpu/actions/provision@v1
        with:
          config-path: c.yml
          runpod-api-url-typo: x
      - uses: org/runpod-gpu/actions/no-such-action@v1
      - uses: org/runpod-gpu/actions/reap
        with:
          runpod-api-key: x
`
	var parsed metaWorkflow
	assert.NilError(t, yaml.Unmarshal([]byte(wf), &parsed))
	problems := metaCheckActionRefs(parsed, metaLoadActions(t))
	assert.DeepEqual(t, problems, []string{
		`jobs.j.steps[0] (org/runpod-gpu/actions/provision@v1): input "runpod-api-url-typo" is not declared by actions/provision`,
		`jobs.j.steps[0] (org/runpod-gpu/actions/provision@v1): required input "runpod-api-key" is missing`,
		`jobs.j.steps[1] (org/runpod-gpu/actions/no-such-action@v1): there is no actions/no-such-action/action.yml`,
		`jobs.j.steps[2] (org/runpod-gpu/actions/reap): a published action needs a ref (@v1)`,
		`jobs.j: steps.p.outputs.pod_id is not an output of actions/provision`,
	})
}

// TestMetaSelfTestUsesEveryAction keeps self-test.yml complete: it is where
// actionlint sees every action's inputs and outputs through ./actions/<name>.
func TestMetaSelfTestUsesEveryAction(t *testing.T) {
	wf := metaParseWorkflow(t, "self-test.yml", metaWorkflowFiles(t)["self-test.yml"])
	used := map[string]bool{}
	for _, job := range wf.Jobs {
		for _, st := range job.Steps {
			if name, ok := strings.CutPrefix(st.Uses, "./actions/"); ok {
				used[name] = true
			}
		}
	}
	for _, name := range metaActionDirs(t) {
		assert.Check(t, used[name], "self-test.yml has no step with uses: ./actions/%s", name)
	}
}

// metaGroup reads a concurrency setting: its group and cancel-in-progress.
func metaGroup(c any) (group string, cancel any) {
	switch c := c.(type) {
	case string:
		return c, nil
	case map[string]any:
		g, _ := c["group"].(string)
		return g, c["cancel-in-progress"]
	}
	return "", nil
}

// TestMetaGPULaneInvariants checks what keeps the reusable lane cheap and
// safe: one paid lane per PR head, one global paid lock around creation, a
// hosted watchdog, tests on the accepted pod's label with every setup step
// bounded, and a gate and a cleanup that run whatever happened before them.
func TestMetaGPULaneInvariants(t *testing.T) {
	wf := metaParseWorkflow(t, "gpu-lane.yml", metaWorkflowFiles(t)["gpu-lane.yml"])
	on, _ := wf.On.(map[string]any)
	_, called := on["workflow_call"]
	assert.Check(t, called, "gpu-lane.yml must be a reusable workflow (on: workflow_call)")

	group, cancel := metaGroup(wf.Concurrency)
	assert.Check(t, strings.HasPrefix(group, "runpod-gpu-prepare-${{"), "workflow concurrency group %q: want runpod-gpu-prepare-<head sha>", group)
	assert.Check(t, cancel == false, "workflow concurrency must not cancel a lane in progress")

	for _, id := range []string{"authorize", "provision", "watchdog", "gpu-tests", "provision-again", "watchdog-again", "gpu-tests-again", "gate", "cleanup"} {
		_, ok := wf.Jobs[id]
		assert.Assert(t, ok, "gpu-lane.yml has no job %q", id)
	}
	// The lane's pods, and a host-fault re-run's: each provisioning inside the
	// global paid lock, each pod bounded from a hosted runner beside its GPU job.
	for _, round := range []struct{ provision, watchdog, tests string }{{"provision", "watchdog", "gpu-tests"}, {"provision-again", "watchdog-again", "gpu-tests-again"}} {
		metaCheckRound(t, wf, round.provision, round.watchdog, round.tests)
	}

	for _, id := range []string{"gate", "cleanup"} {
		assert.Check(t, strings.Contains(wf.Jobs[id].If, "always()"), "job %s must run whatever happened before it (if: always() …), got %q", id, wf.Jobs[id].If)
		for _, tests := range []string{"gpu-tests", "gpu-tests-again"} {
			assert.Check(t, slices.Contains(metaNeeds(wf.Jobs[id]), tests), "%s waits for %s", id, tests)
		}
	}
	assert.Check(t, slices.Contains(metaNeeds(wf.Jobs["gate"]), "cleanup"), "the gate's rows come from cleanup")
}

// metaCheckRound checks one round of pods: provision in no concurrency
// group (lanes create pods at the same time),
// the watchdog on a hosted runner beside the GPU jobs, one GPU job per pod on
// its runner label, named as the watchdog knows it, every step before the
// tests bounded.
func metaCheckRound(t *testing.T, wf metaWorkflow, provision, watchdog, testsID string) {
	t.Helper()
	assert.Check(t, wf.Jobs[provision].Concurrency == nil, "%s holds a concurrency group (%v): want none, lanes create pods at the same time", provision, wf.Jobs[provision].Concurrency)

	runsOn, _ := wf.Jobs[watchdog].RunsOn.(string)
	assert.Check(t, strings.HasPrefix(runsOn, "ubuntu-"), "%s runs on a hosted runner, got %v", watchdog, wf.Jobs[watchdog].RunsOn)
	assert.Check(t, slices.Contains(metaNeeds(wf.Jobs[watchdog]), provision))

	tests := wf.Jobs[testsID]
	assert.Check(t, is.Equal(tests.RunsOn, "${{ matrix.pod.runner-label }}"), "%s runs on its pod's runner", testsID)
	strategy, _ := tests.Strategy.(map[string]any)
	matrix, _ := strategy["matrix"].(map[string]any)
	assert.Check(t, is.Equal(matrix["pod"], "${{ fromJSON(needs."+provision+".outputs.pods) }}"), "%s: one job per pod of %s", testsID, provision)
	assert.Check(t, is.Equal(strategy["fail-fast"], false), "%s: every tier's result, not the first failure's", testsID)
	testStep := slices.IndexFunc(tests.Steps, func(s metaStep) bool { return s.Name == "Run GPU tests" })
	assert.Assert(t, testStep >= 0, `%s has no step named "Run GPU tests" (the watchdog and the cost report look for it)`, testsID)
	for _, st := range tests.Steps[:testStep] {
		assert.Check(t, st.TimeoutMinutes != nil, "%s step %q runs before the tests without timeout-minutes", testsID, st.Name+st.Uses)
	}
	// The watchdog knows each GPU job by its name, "<gpu-job-name> (<tier>)"
	// per tier: the one job that may run on that pod's runner.
	for _, st := range wf.Jobs[watchdog].Steps {
		if name, ok := st.With["gpu-job-name"]; ok {
			want := fmt.Sprintf("${{ matrix.pod.tier && format('%s ({0})', matrix.pod.tier) || '%s' }}", name, name)
			assert.Check(t, is.Equal(tests.Name, want), "the %s job's name is not the watchdog's gpu-job-name per tier", testsID)
		}
		if step, ok := st.With["test-step-name"]; ok {
			assert.Check(t, is.Equal(step, "Run GPU tests"), "the watchdog's test-step-name is not the GPU job's test step")
		}
	}
}

// The head SHA that decides obsolescence is the one authorize pinned: a
// manual dispatch has no head-sha input, and an empty one never sees a moved
// head.
func TestMetaPaidJobsGetThePinnedHead(t *testing.T) {
	wf := metaParseWorkflow(t, "gpu-lane.yml", metaWorkflowFiles(t)["gpu-lane.yml"])
	for _, job := range []string{"provision", "watchdog"} {
		found := false
		for _, st := range wf.Jobs[job].Steps {
			if head, ok := st.With["expected-head-sha"]; ok {
				found = true
				assert.Check(t, is.Equal(head, "${{ needs.authorize.outputs.head-sha }}"), "job %s step %q", job, st.Name)
			}
		}
		assert.Check(t, found, "job %s passes no expected-head-sha", job)
		assert.Check(t, slices.Contains(metaNeeds(wf.Jobs[job]), "authorize"), "job %s must need authorize for its pinned head", job)
	}
}

func metaNeeds(j metaJob) []string {
	switch n := j.Needs.(type) {
	case string:
		return []string{n}
	case []any:
		var out []string
		for _, v := range n {
			s, _ := v.(string)
			out = append(out, s)
		}
		return out
	}
	return nil
}

// TestMetaJobsAreBoundedAndLeastPrivileged: every job has a timeout and
// permissions are declared (per job, or for the whole workflow).
func TestMetaJobsAreBoundedAndLeastPrivileged(t *testing.T) {
	for name, text := range metaWorkflowFiles(t) {
		wf := metaParseWorkflow(t, name, text)
		for _, id := range metaSortedKeys(wf.Jobs) {
			job := wf.Jobs[id]
			if job.Uses == "" { // a called workflow bounds its own jobs
				assert.Check(t, job.TimeoutMinutes != nil, "%s: job %s has no timeout-minutes", name, id)
			}
			assert.Check(t, wf.Permissions != nil || job.Permissions != nil, "%s: job %s runs with the default token permissions; declare them", name, id)
		}
	}
}

var metaPinnedRE = regexp.MustCompile(`^[^@]+@[0-9a-f]{40}$`)

// TestMetaPrivilegedWorkflowsPinActions: a workflow that holds a secret or a
// write permission runs third-party actions only by full commit SHA, since a
// moved tag would run with those credentials.
func TestMetaPrivilegedWorkflowsPinActions(t *testing.T) {
	for name, text := range metaWorkflowFiles(t) {
		if !strings.Contains(text, "secrets.") && !strings.Contains(text, ": write") {
			continue
		}
		wf := metaParseWorkflow(t, name, text)
		for _, id := range metaSortedKeys(wf.Jobs) {
			for _, st := range wf.Jobs[id].Steps {
				if st.Uses == "" || strings.HasPrefix(st.Uses, "./") || metaActionRefRE.MatchString(st.Uses) {
					continue
				}
				assert.Check(t, metaPinnedRE.MatchString(st.Uses), "%s: job %s uses %s: pin it by commit SHA", name, id, st.Uses)
			}
		}
	}
}

// metaReleaseStep returns the run script of a step of release.yml.
func metaReleaseStep(t *testing.T, name string) string {
	t.Helper()
	wf := metaParseWorkflow(t, "release.yml", metaWorkflowFiles(t)["release.yml"])
	for _, st := range wf.Jobs["release"].Steps {
		if st.Name == name {
			return st.Run
		}
	}
	t.Fatalf("release.yml has no step %q", name)
	return ""
}

// TestMetaReleasePinsEveryAction runs the release's pinning script on a copy
// of every action.yml and checks that each now names the pushed digest and
// nothing else changed.
func TestMetaReleasePinsEveryAction(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	script := metaReleaseStep(t, "Pin every action to the pushed image digest")
	digest := "sha256:" + strings.Repeat("0123456789abcdef", 4)
	tests := []struct {
		name       string
		digest     string
		breakImage bool
		wantErr    string
	}{
		{name: "pins", digest: digest},
		{name: "refuses a malformed digest", digest: "sha256:abc", wantErr: "unexpected image digest"},
		{name: "refuses an action it cannot pin", digest: digest, breakImage: true, wantErr: "runs.image was not pinned"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			work := t.TempDir()
			originals := map[string]string{}
			for _, name := range metaActionDirs(t) {
				data, err := os.ReadFile(filepath.Join(metaRepoRoot, "actions", name, "action.yml"))
				assert.NilError(t, err)
				text := string(data)
				if tc.breakImage {
					text = strings.Replace(text, "docker://ghcr.io/org/runpod-gpu:v1", "docker://example.com/other:v1", 1)
				}
				originals[name] = text
				assert.NilError(t, os.MkdirAll(filepath.Join(work, "actions", name), 0o755))
				assert.NilError(t, os.WriteFile(filepath.Join(work, "actions", name, "action.yml"), []byte(text), 0o644))
			}
			cmd := exec.Command("bash", "-c", script)
			cmd.Dir = work
			cmd.Env = append(os.Environ(), "IMAGE=ghcr.io/org/runpod-gpu", "DIGEST="+tc.digest)
			out, err := cmd.CombinedOutput()
			if tc.wantErr != "" {
				assert.Check(t, err != nil, "the script accepted it:\n%s", out)
				assert.Check(t, is.Contains(string(out), tc.wantErr))
				return
			}
			assert.NilError(t, err, "%s", out)
			want := "docker://ghcr.io/org/runpod-gpu@" + digest
			for name, original := range originals {
				data, err := os.ReadFile(filepath.Join(work, "actions", name, "action.yml"))
				assert.NilError(t, err)
				a, err := metaLoadActionYML(data)
				assert.NilError(t, err)
				assert.Check(t, is.Equal(a.Runs.Image, want), "actions/%s", name)
				assert.Check(t, is.Len(metaCheckMetadata(name, a), 0), "actions/%s", name)
				assert.Check(t, is.Equal(string(data), strings.Replace(original, "docker://ghcr.io/org/runpod-gpu:v1", want, 1)), "actions/%s: only the image may change", name)
			}
		})
	}
}
