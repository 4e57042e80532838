package rules

// Security invariants of the workflows that hold the suite's secrets (issue
// 14): every job that references a secret runs in a GitHub environment whose
// deployment branches are the default branch only, the job that runs the PR's
// code holds no secret, callers name each secret instead of inheriting all of
// them, and a release tree calls nothing by a floating reference.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// metaEnvironmentExpr is the environment every secret-holding job of a
// reusable workflow declares: the caller's choice, never empty, since an empty
// name would run the job outside any environment (and so on any branch).
const metaEnvironmentExpr = "${{ inputs.environment || 'runpod-gpu' }}"

// metaSecretRefRE matches a reference to a secret other than the workflow
// token, which is not stored anywhere an environment could protect.
var metaSecretRefRE = regexp.MustCompile(`secrets\.([A-Za-z_][A-Za-z0-9_]*)|secrets\[`)

// metaReferencesSecret reports whether text reads a stored secret.
func metaReferencesSecret(text string) bool {
	for _, m := range metaSecretRefRE.FindAllStringSubmatch(text, -1) {
		if !strings.EqualFold(m[1], "GITHUB_TOKEN") {
			return true
		}
	}
	return false
}

// metaSecJob is the part of a job the security checks read.
type metaSecJob struct {
	RunsOn      any    `yaml:"runs-on"`
	Uses        string `yaml:"uses"`
	Environment any    `yaml:"environment"`
	Secrets     any    `yaml:"secrets"`
}

// metaEnvironmentName reads jobs.<id>.environment: a name or {name, url}.
func metaEnvironmentName(env any) string {
	switch e := env.(type) {
	case string:
		return e
	case map[string]any:
		name, _ := e["name"].(string)
		return name
	}
	return ""
}

// metaHostedRunsOn reports whether runs-on names only a GitHub-hosted image,
// the only machines trusted with a secret; a label computed at run time (the
// pod's JIT runner) runs the pull request's code.
func metaHostedRunsOn(runsOn any) bool {
	s, ok := runsOn.(string)
	return ok && regexp.MustCompile(`^(ubuntu|windows|macos)-[a-z0-9.-]+$`).MatchString(s)
}

// metaSecretJobProblems checks one workflow: every job that references a
// secret runs on a hosted runner in an environment (in a reusable workflow,
// the caller's `environment` input, declared with the default runpod-gpu),
// and no job calls a workflow with `secrets: inherit`.
func metaSecretJobProblems(name, text string) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	var doc struct {
		On   yaml.Node            `yaml:"on"`
		Jobs map[string]yaml.Node `yaml:"jobs"`
	}
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return []string{fmt.Sprintf("%s: %v", name, err)}
	}
	var on struct {
		Call *struct {
			Inputs map[string]struct {
				Type    string `yaml:"type"`
				Default any    `yaml:"default"`
			} `yaml:"inputs"`
		} `yaml:"workflow_call"`
	}
	reusable := doc.On.Kind == yaml.MappingNode && doc.On.Decode(&on) == nil && on.Call != nil
	for _, id := range metaSortedKeys(doc.Jobs) {
		node := doc.Jobs[id]
		var job metaSecJob
		if err := node.Decode(&job); err != nil {
			add("%s: job %s: %v", name, id, err)
			continue
		}
		raw, err := yaml.Marshal(&node)
		if err != nil {
			add("%s: job %s: %v", name, id, err)
			continue
		}
		if job.Uses != "" {
			if s, ok := job.Secrets.(string); ok && s == "inherit" {
				add("%s: job %s calls %s with secrets: inherit; pass each secret it needs by name", name, id, job.Uses)
			}
			continue // a calling job cannot declare an environment; the called jobs do
		}
		env := metaEnvironmentName(job.Environment)
		if !metaHostedRunsOn(job.RunsOn) {
			if metaReferencesSecret(string(raw)) || env != "" {
				add("%s: job %s runs on %v, where the pull request's code runs: it must hold no secret and no environment", name, id, job.RunsOn)
			}
			continue
		}
		if !metaReferencesSecret(string(raw)) {
			continue
		}
		switch {
		case env == "":
			add("%s: job %s references a secret but declares no environment; secrets must live in an environment limited to the default branch", name, id)
		case reusable && env != metaEnvironmentExpr:
			add("%s: job %s: environment %q: want %q (the caller's choice, never empty)", name, id, env, metaEnvironmentExpr)
		}
	}
	if reusable && strings.Contains(text, "inputs.environment") {
		in, ok := on.Call.Inputs["environment"]
		if !ok || in.Type != "string" || in.Default != "runpod-gpu" {
			add("%s: on.workflow_call.inputs.environment: want {type: string, default: runpod-gpu}, got %+v (declared %v)", name, in, ok)
		}
	}
	return problems
}

// TestMetaSecretJobsRunInTheEnvironment: with the secrets stored in the
// runpod-gpu environment, a workflow on any branch but the default one cannot
// read them; that holds only if every job that references one declares it.
func TestMetaSecretJobsRunInTheEnvironment(t *testing.T) {
	files := metaWorkflowFiles(t)
	for _, name := range metaSortedKeys(files) {
		problems := metaSecretJobProblems(name, files[name])
		assert.Check(t, len(problems) == 0, "%s", strings.Join(problems, "\n"))
	}
	// The reusable workflows that hold secrets all take the environment as an input.
	for _, name := range []string{"gpu-lane.yml", "gpu-lane-authorize.yml", "gpu-lane-provision.yml", "gpu-lane-watchdog.yml", "gpu-lane-finish.yml",
		"serverless-lane.yml", "reap.yml", "reap-org.yml", "cost-history.yml"} {
		assert.Check(t, strings.Contains(files[name], "environment: "+metaEnvironmentExpr), "%s declares no job with environment: %s", name, metaEnvironmentExpr)
	}
}

// TestMetaSecretJobCheckDetectsMistakes plants each mistake the check exists for.
func TestMetaSecretJobCheckDetectsMistakes(t *testing.T) {
	const call = "on:\n  workflow_call:\n    inputs:\n      environment: {type: string, default: runpod-gpu}\n    secrets:\n      K: {required: true}\njobs:\n"
	tests := []struct {
		name, text, want string
	}{
		{
			name: "a reusable workflow done right",
			text: call + "  j:\n    runs-on: ubuntu-latest\n    environment: " + metaEnvironmentExpr + "\n    steps:\n      - run: echo\n        env: {K: \"${{ secrets.K }}\"}\n" +
				"  t:\n    runs-on: ${{ needs.p.outputs.label }}\n    steps:\n      - run: echo ${{ github.token }} ${{ secrets.GITHUB_TOKEN }}\n",
		},
		{
			name: "a secret without an environment",
			text: call + "  j:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: org/runpod-gpu/actions/reap@v1\n        with: {runpod-api-key: \"${{ secrets.K }}\"}\n",
			want: "reusable.yml: job j references a secret but declares no environment",
		},
		{
			name: "a secret read by index",
			text: call + "  j:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo\n        env: {K: \"${{ secrets['K'] }}\"}\n",
			want: "job j references a secret but declares no environment",
		},
		{
			name: "a secret in a job-level env",
			text: call + "  j:\n    runs-on: ubuntu-latest\n    env: {HAS: \"${{ secrets.K != '' }}\"}\n    steps:\n      - run: echo\n",
			want: "job j references a secret but declares no environment",
		},
		{
			name: "an environment that can be empty",
			text: call + "  j:\n    runs-on: ubuntu-latest\n    environment: ${{ inputs.environment }}\n    steps:\n      - run: echo ${{ secrets.K }}\n",
			want: `job j: environment "${{ inputs.environment }}": want`,
		},
		{
			name: "a fixed environment in a reusable workflow",
			text: call + "  j:\n    runs-on: ubuntu-latest\n    environment: {name: prod}\n    steps:\n      - run: echo ${{ secrets.K }}\n",
			want: `job j: environment "prod": want`,
		},
		{
			name: "the environment input without its default",
			text: "on:\n  workflow_call:\n    inputs:\n      environment: {type: string}\njobs:\n  j:\n    runs-on: ubuntu-latest\n    environment: " + metaEnvironmentExpr + "\n    steps:\n      - run: echo ${{ secrets.K }}\n",
			want: "on.workflow_call.inputs.environment: want {type: string, default: runpod-gpu}",
		},
		{
			name: "a secret on the pod's runner",
			text: call + "  t:\n    runs-on: ${{ needs.p.outputs.label }}\n    steps:\n      - run: echo ${{ secrets.K }}\n",
			want: "job t runs on ${{ needs.p.outputs.label }}, where the pull request's code runs",
		},
		{
			name: "the environment on the pod's runner",
			text: call + "  t:\n    runs-on: [self-hosted, gpu]\n    environment: " + metaEnvironmentExpr + "\n    steps:\n      - run: echo\n",
			want: "job t runs on [self-hosted gpu], where the pull request's code runs",
		},
		{
			name: "a caller inheriting every secret",
			text: "on: push\njobs:\n  gpu:\n    uses: org/runpod-gpu/.github/workflows/reap.yml@v1\n    secrets: inherit\n",
			want: "job gpu calls org/runpod-gpu/.github/workflows/reap.yml@v1 with secrets: inherit",
		},
		{
			name: "a non-reusable workflow may name its environment",
			text: "on: workflow_dispatch\njobs:\n  j:\n    runs-on: ubuntu-latest\n    environment: runpod-gpu\n    steps:\n      - run: echo ${{ secrets.K }}\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			problems := metaSecretJobProblems("reusable.yml", tc.text)
			if tc.want == "" {
				assert.Check(t, is.Len(problems, 0))
				return
			}
			assert.Check(t, is.Len(problems, 1), "%v", problems)
			assert.Check(t, is.Contains(strings.Join(problems, "\n"), tc.want))
		})
	}
}

// metaReleaseDigest and metaReleaseSHA stand for the pushed image and the
// release's first commit when a test plays the release.
var (
	metaReleaseDigest = "sha256:" + strings.Repeat("0123456789abcdef", 4)
	metaReleaseSHA    = strings.Repeat("0123456789", 4)
)

// metaReleasePinSteps returns, in order, the run scripts of the release's
// steps that rewrite the tree ("Pin …"): what a release commit contains is the
// tree after all of them.
func metaReleasePinSteps(t *testing.T) []string {
	t.Helper()
	wf := metaParseWorkflow(t, "release.yml", metaWorkflowFiles(t)["release.yml"])
	var scripts []string
	for _, st := range wf.Jobs["release"].Steps {
		if strings.HasPrefix(st.Name, "Pin ") {
			scripts = append(scripts, st.Run)
		}
	}
	assert.Assert(t, len(scripts) > 0, "release.yml has no Pin step")
	return scripts
}

// metaBuildReleaseTree copies every action.yml and workflow into a temporary
// directory, lets edit change the workflow texts, and runs the release's
// rewriting steps on it as the release job would. It returns the directory
// and the combined output, and the error of the first step that failed.
func metaBuildReleaseTree(t *testing.T, releaseSHA string, edit func(name, text string) string) (string, string, error) {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	work := t.TempDir()
	for _, name := range metaActionDirs(t) {
		data, err := os.ReadFile(filepath.Join(metaRepoRoot, "actions", name, "action.yml"))
		assert.NilError(t, err)
		assert.NilError(t, os.MkdirAll(filepath.Join(work, "actions", name), 0o755))
		assert.NilError(t, os.WriteFile(filepath.Join(work, "actions", name, "action.yml"), data, 0o644))
	}
	assert.NilError(t, os.MkdirAll(filepath.Join(work, ".github", "workflows"), 0o755))
	for name, text := range metaWorkflowFiles(t) {
		if edit != nil {
			text = edit(name, text)
		}
		assert.NilError(t, os.WriteFile(filepath.Join(work, ".github", "workflows", name), []byte(text), 0o644))
	}
	var out strings.Builder
	for _, script := range metaReleasePinSteps(t) {
		cmd := exec.Command("bash", "-c", script)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "IMAGE=ghcr.io/org/runpod-gpu", "DIGEST="+metaReleaseDigest,
			"REPOSITORY=org/runpod-gpu", "RELEASE_SHA="+releaseSHA)
		b, err := cmd.CombinedOutput()
		out.Write(b)
		if err != nil {
			return work, out.String(), err
		}
	}
	return work, out.String(), nil
}

// metaAllUses lists every uses: of a workflow, job-level and step-level.
func metaAllUses(wf metaWorkflow) []string {
	var uses []string
	for _, id := range metaSortedKeys(wf.Jobs) {
		job := wf.Jobs[id]
		if job.Uses != "" {
			uses = append(uses, "jobs."+id+": "+job.Uses)
		}
		for i, st := range job.Steps {
			if st.Uses != "" {
				uses = append(uses, fmt.Sprintf("jobs.%s.steps[%d]: %s", id, i, st.Uses))
			}
		}
	}
	return uses
}

var (
	metaSuiteRefRE    = regexp.MustCompile(`^[^/]+/runpod-gpu/(actions/[a-z0-9-]+|\.github/workflows/[^@]+)@(\S+)$`)
	metaImmutableRefE = regexp.MustCompile(`^(\./.*|docker://[^@]+@sha256:[0-9a-f]{64}|[^@\s]+@[0-9a-f]{40})$`)
)

// TestMetaReleaseTreeHasNoFloatingReference plays the release's rewriting
// steps on this tree and checks the release commit's reusable workflows call
// nothing by a mutable reference: the suite's own actions and workflows at the
// release commit, everything else by commit SHA, and every action's image by
// digest. A caller pinning gpu-lane.yml to that commit runs exactly it.
func TestMetaReleaseTreeHasNoFloatingReference(t *testing.T) {
	work, out, err := metaBuildReleaseTree(t, metaReleaseSHA, nil)
	assert.NilError(t, err, "%s", out)
	actions := metaLoadActions(t)
	originals := metaWorkflowFiles(t)
	reusable := 0
	for _, name := range metaSortedKeys(originals) {
		data, err := os.ReadFile(filepath.Join(work, ".github", "workflows", name))
		assert.NilError(t, err)
		text := string(data)
		wf := metaParseWorkflow(t, name, text)
		if on, _ := wf.On.(map[string]any); on != nil {
			if _, ok := on["workflow_call"]; ok {
				reusable++
				for _, use := range metaAllUses(wf) {
					ref := use[strings.Index(use, ": ")+2:]
					assert.Check(t, metaImmutableRefE.MatchString(ref), "release %s: %s is a floating reference", name, use)
				}
			}
		}
		for _, use := range metaAllUses(wf) {
			if m := metaSuiteRefRE.FindStringSubmatch(use[strings.Index(use, ": ")+2:]); m != nil {
				assert.Check(t, is.Equal(m[2], metaReleaseSHA), "release %s: %s is not the release commit", name, use)
			}
		}
		// Only the suite's references changed, and the result is still valid.
		before, after := strings.Split(originals[name], "\n"), strings.Split(text, "\n")
		assert.Assert(t, is.Len(after, len(before)), name)
		for i := range before {
			if before[i] != after[i] {
				want := regexp.MustCompile(`@v1$`).ReplaceAllString(before[i], "@"+metaReleaseSHA)
				assert.Check(t, is.Equal(after[i], want), "release %s line %d: only an inner reference's ref may change", name, i+1)
			}
		}
		assert.Check(t, is.Len(metaCheckActionRefs(wf, actions), 0), name)
		assert.Check(t, is.Len(metaSecretJobProblems(name, text), 0), name)
	}
	assert.Check(t, reusable >= 4, "found %d reusable workflows", reusable)
	for _, name := range metaActionDirs(t) {
		data, err := os.ReadFile(filepath.Join(work, "actions", name, "action.yml"))
		assert.NilError(t, err)
		a, err := metaLoadActionYML(data)
		assert.NilError(t, err)
		assert.Check(t, is.Equal(a.Runs.Image, "docker://ghcr.io/org/runpod-gpu@"+metaReleaseDigest), "release actions/%s", name)
	}
}

// TestMetaReleaseRefusesWhatItCannotPin: the release stops on a malformed
// commit and on an inner reference its rewrite does not recognise, rather
// than publishing a workflow that floats.
func TestMetaReleaseRefusesWhatItCannotPin(t *testing.T) {
	tests := []struct {
		name, sha string
		edit      func(name, text string) string
		wantErr   string
	}{
		{name: "malformed commit", sha: "v1", wantErr: "unexpected release commit 'v1'"},
		{
			name: "a quoted inner reference",
			sha:  metaReleaseSHA,
			edit: func(name, text string) string {
				if name != "gpu-lane.yml" {
					return text
				}
				return strings.Replace(text, "uses: org/runpod-gpu/actions/gate@v1", `uses: "org/runpod-gpu/actions/gate@v1"`, 1)
			},
			wantErr: `inner reference not pinned to ` + metaReleaseSHA + `: .github/workflows/gpu-lane.yml:`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, out, err := metaBuildReleaseTree(t, tc.sha, tc.edit)
			assert.Check(t, err != nil, "the release accepted it:\n%s", out)
			assert.Check(t, is.Contains(out, tc.wantErr))
		})
	}
}

// metaReadmeCallerBlocks returns the YAML blocks of the workflows page's
// marked section, the callers users copy.
func metaReadmeCallerBlocks(t *testing.T) []string {
	t.Helper()
	section, page := docSection(t, "workflows")
	assert.Assert(t, page == docWorkflows, "the callers are on %s, not %s", page, docWorkflows)
	var blocks []string
	for rest := section; ; {
		_, after, ok := strings.Cut(rest, "```yaml\n")
		if !ok {
			break
		}
		block, tail, ok := strings.Cut(after, "```")
		assert.Assert(t, ok, "%s: an unclosed yaml block", docWorkflows)
		blocks = append(blocks, block)
		rest = tail
	}
	assert.Assert(t, len(blocks) > 0, "%s: the workflows section has no yaml block", docWorkflows)
	return blocks
}

var metaSuiteWorkflowRE = regexp.MustCompile(`^org/runpod-gpu/\.github/workflows/([a-z0-9-]+\.yml)@\S+$`)

// metaCallerProblems checks one caller of the suite's reusable workflows:
// every secret is passed by name as ${{ secrets.<same name> }} (never
// inherited: an environment secret reaches the called job only when the
// caller names it), every required one is passed, every passed one is
// declared, and an App id comes with that App's key.
func metaCallerProblems(block string, called map[string]string) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	var doc struct {
		Jobs map[string]struct {
			Uses    string         `yaml:"uses"`
			With    map[string]any `yaml:"with"`
			Secrets any            `yaml:"secrets"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal([]byte(block), &doc); err != nil {
		return []string{err.Error()}
	}
	problems = append(problems, metaSecretJobProblems("caller", block)...)
	for _, id := range metaSortedKeys(doc.Jobs) {
		job := doc.Jobs[id]
		m := metaSuiteWorkflowRE.FindStringSubmatch(job.Uses)
		if m == nil {
			continue
		}
		var target struct {
			On struct {
				Call struct {
					Inputs  map[string]any `yaml:"inputs"`
					Secrets map[string]struct {
						Required bool `yaml:"required"`
					} `yaml:"secrets"`
				} `yaml:"workflow_call"`
			} `yaml:"on"`
		}
		text, ok := called[m[1]]
		if !ok || yaml.Unmarshal([]byte(text), &target) != nil {
			add("job %s calls %s, which is not a workflow of this repository", id, job.Uses)
			continue
		}
		passed := map[string]string{}
		switch s := job.Secrets.(type) {
		case nil:
		case map[string]any:
			for k, v := range s {
				passed[k], _ = v.(string)
			}
		default:
			continue // inherit: reported above
		}
		for _, key := range metaSortedKeys(passed) {
			if _, ok := target.On.Call.Secrets[key]; !ok {
				add("job %s passes secret %s, which %s does not declare", id, key, m[1])
			}
			if want := "${{ secrets." + key + " }}"; passed[key] != want {
				add("job %s passes secret %s as %q: want %q", id, key, passed[key], want)
			}
		}
		for _, key := range metaSortedKeys(target.On.Call.Secrets) {
			if _, ok := passed[key]; target.On.Call.Secrets[key].Required && !ok {
				add("job %s does not pass the required secret %s of %s", id, key, m[1])
			}
		}
		for _, key := range metaSortedKeys(job.With) {
			if _, ok := target.On.Call.Inputs[key]; !ok {
				add("job %s passes input %s, which %s does not declare", id, key, m[1])
			}
		}
		for input, key := range map[string]string{"app-id": "RUNPOD_GPU_APP_PRIVATE_KEY", "runner-app-id": "RUNPOD_GPU_RUNNER_APP_PRIVATE_KEY"} {
			_, withID := job.With[input]
			// A part that declares no such secret (authorize takes runner-app-id
			// for the lane record; the parts after it take the runner App's key)
			// cannot be passed it.
			_, declared := target.On.Call.Secrets[key]
			if withID && declared && passed[key] == "" {
				add("job %s passes %s but not the secret %s", id, input, key)
			}
			// An App key without its id is never used: the jobs fall back to the
			// workflow token, and the gate is published as GitHub Actions, which an
			// App-bound required check never accepts. (The lane's parts take the
			// id inside their lane input, from authorize, and declare no app-id.)
			_, takesID := target.On.Call.Inputs[input]
			if takesID && !withID && passed[key] != "" {
				add("job %s passes the secret %s but not %s: without it the App is not used", id, key, input)
			}
			installation := strings.TrimSuffix(input, "id") + "installation-id"
			if _, declared := target.On.Call.Inputs[installation]; declared && withID && job.With[installation] == nil {
				add("job %s passes %s but not %s", id, input, installation)
			}
		}
	}
	slices.Sort(problems)
	return problems
}

// TestReadmeCallersNameTheirSecrets: the callers on the documentation pages
// are what users copy; each passes exactly the secrets it needs, by name.
func TestReadmeCallersNameTheirSecrets(t *testing.T) {
	files := metaWorkflowFiles(t)
	blocks := metaReadmeCallerBlocks(t)
	for i, b := range readmeYAMLBlocks(t) { // every caller: the fork and Serverless ones too
		if readmeIsWorkflow(b.text) {
			assert.Check(t, is.Len(metaCallerProblems(b.text, files), 0), "%s: yaml block %d of the pages (under %q):\n%s", b.page, i+1, b.heading, b.text)
		}
	}
	// The lane, the reaper, the cost history and the relay are all shown.
	assert.Check(t, strings.Count(strings.Join(blocks, ""), "uses: org/runpod-gpu/.github/workflows/") >= 4)
}

// TestMetaCallerCheckDetectsMistakes plants each mistake in a caller.
func TestMetaCallerCheckDetectsMistakes(t *testing.T) {
	files := metaWorkflowFiles(t)
	const head = "jobs:\n  reap:\n    uses: org/runpod-gpu/.github/workflows/reap.yml@v1\n"
	tests := []struct {
		name, block string
		want        []string
	}{
		{name: "right", block: head + "    with: {app-id: \"1\", app-installation-id: \"2\"}\n    secrets:\n      RUNPOD_API_KEY: ${{ secrets.RUNPOD_API_KEY }}\n      RUNPOD_GPU_APP_PRIVATE_KEY: ${{ secrets.RUNPOD_GPU_APP_PRIVATE_KEY }}\n"},
		{name: "inherit", block: head + "    secrets: inherit\n", want: []string{"caller: job reap calls org/runpod-gpu/.github/workflows/reap.yml@v1 with secrets: inherit; pass each secret it needs by name"}},
		{name: "required secret missing", block: head, want: []string{"job reap does not pass the required secret RUNPOD_API_KEY of reap.yml"}},
		{name: "renamed secret", block: head + "    secrets: {RUNPOD_API_KEY: \"${{ secrets.KEY }}\"}\n", want: []string{`job reap passes secret RUNPOD_API_KEY as "${{ secrets.KEY }}": want "${{ secrets.RUNPOD_API_KEY }}"`}},
		{name: "undeclared secret", block: head + "    secrets: {RUNPOD_API_KEY: \"${{ secrets.RUNPOD_API_KEY }}\", OTHER: \"${{ secrets.OTHER }}\"}\n", want: []string{"job reap passes secret OTHER, which reap.yml does not declare"}},
		{name: "App id without its key", block: head + "    with: {app-id: \"1\", app-installation-id: \"2\"}\n    secrets: {RUNPOD_API_KEY: \"${{ secrets.RUNPOD_API_KEY }}\"}\n", want: []string{"job reap passes app-id but not the secret RUNPOD_GPU_APP_PRIVATE_KEY"}},
		{name: "App key without its id", block: head + "    secrets: {RUNPOD_API_KEY: \"${{ secrets.RUNPOD_API_KEY }}\", RUNPOD_GPU_APP_PRIVATE_KEY: \"${{ secrets.RUNPOD_GPU_APP_PRIVATE_KEY }}\"}\n",
			want: []string{"job reap passes the secret RUNPOD_GPU_APP_PRIVATE_KEY but not app-id: without it the App is not used"}},
		{name: "App id without its installation", block: head + "    with: {app-id: \"1\"}\n    secrets: {RUNPOD_API_KEY: \"${{ secrets.RUNPOD_API_KEY }}\", RUNPOD_GPU_APP_PRIVATE_KEY: \"${{ secrets.RUNPOD_GPU_APP_PRIVATE_KEY }}\"}\n",
			want: []string{"job reap passes app-id but not app-installation-id"}},
		{name: "undeclared input", block: head + "    with: {exec: true}\n    secrets: {RUNPOD_API_KEY: \"${{ secrets.RUNPOD_API_KEY }}\"}\n", want: []string{"job reap passes input exec, which reap.yml does not declare"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := metaCallerProblems(tc.block, files)
			if tc.want == nil {
				assert.Check(t, is.Len(got, 0), "%v", got)
				return
			}
			assert.Check(t, is.DeepEqual(got, tc.want))
		})
	}
}

// TestMetaReleaseTagsAPinnedTree plays the release's steps from pinning to
// tagging in a git repository with a local origin: the version and major tags
// name a commit whose reusable workflows call the suite's actions at its
// parent, and that parent's action.yml files name the image digest. So a
// caller pinning the tag's commit runs that release's actions and image.
func TestMetaReleaseTagsAPinnedTree(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	work, origin := t.TempDir(), t.TempDir()
	env := append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"VERSION=v1.2.3", "MAJOR=v1", "IMAGE=ghcr.io/org/runpod-gpu", "DIGEST="+metaReleaseDigest, "REPOSITORY=org/runpod-gpu")
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = work, env
		out, err := cmd.CombinedOutput()
		assert.NilError(t, err, "git %v: %s", args, out)
		return strings.TrimSpace(string(out))
	}
	for _, name := range metaActionDirs(t) {
		data, err := os.ReadFile(filepath.Join(metaRepoRoot, "actions", name, "action.yml"))
		assert.NilError(t, err)
		assert.NilError(t, os.MkdirAll(filepath.Join(work, "actions", name), 0o755))
		assert.NilError(t, os.WriteFile(filepath.Join(work, "actions", name, "action.yml"), data, 0o644))
	}
	assert.NilError(t, os.MkdirAll(filepath.Join(work, ".github", "workflows"), 0o755))
	for name, text := range metaWorkflowFiles(t) {
		assert.NilError(t, os.WriteFile(filepath.Join(work, ".github", "workflows", name), []byte(text), 0o644))
	}
	// The command line's worker defaults, which the release commit sets.
	defaults, err := os.ReadFile(filepath.Join(metaRepoRoot, "pkg", "devcli", "workerdefaults.go"))
	assert.NilError(t, err)
	assert.NilError(t, os.MkdirAll(filepath.Join(work, "pkg", "devcli"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(work, "pkg", "devcli", "workerdefaults.go"), defaults, 0o644))
	// The sizes page, which the measurement steps write and the release commit carries.
	sizes, err := os.ReadFile(filepath.Join(metaRepoRoot, ".github", "docs", "image-sizes.md"))
	assert.NilError(t, err)
	assert.NilError(t, os.MkdirAll(filepath.Join(work, ".github", "docs"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(work, ".github", "docs", "image-sizes.md"), sizes, 0o644))
	cmd := exec.Command("git", "init", "--bare", "--quiet", origin)
	assert.NilError(t, cmd.Run())
	git("init", "--quiet")
	git("-c", "user.name=t", "-c", "user.email=t@example.com", "add", ".")
	git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "--quiet", "-m", "tree")
	git("remote", "add", "origin", origin)
	source := git("rev-parse", "HEAD")
	// The maintainer's push that starts the release.
	git("-c", "user.name=t", "-c", "user.email=t@example.com", "tag", "--annotate", "v1.2.3", "--message", "v1.2.3")
	git("push", "--quiet", "origin", "refs/tags/v1.2.3")
	// The worker asset's checksum, as the step before takes it out of the image.
	workerSHA := strings.Repeat("5e", 32)
	assert.NilError(t, os.MkdirAll(filepath.Join(work, "dist"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(work, "dist", "serverless-worker.sha256"), []byte(workerSHA+"  serverless-worker\n"), 0o644))

	// GitHub knows no release of the version yet.
	bin := t.TempDir()
	assert.NilError(t, os.WriteFile(filepath.Join(bin, "gh"), []byte("#!/bin/bash\necho 'gh: Not Found (HTTP 404)' >&2\nexit 1\n"), 0o755))
	output := filepath.Join(t.TempDir(), "github-output")
	stepEnv := append(env, "GITHUB_OUTPUT="+output, "GITHUB_REPOSITORY=org/runpod-gpu", "PATH="+bin+":"+os.Getenv("PATH"))
	recorded := func(key string) string {
		t.Helper()
		data, err := os.ReadFile(output)
		assert.NilError(t, err)
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, key+"="); ok {
				return v
			}
		}
		t.Fatalf("no %s in GITHUB_OUTPUT: %q", key, data)
		return ""
	}
	// As the measurement steps leave it: the action image's row written.
	measured := strings.Replace(string(sizes), "| action image | not yet measured | not yet measured | not yet measured |",
		"| action image | `ghcr.io/org/runpod-gpu@"+metaReleaseDigest+"` | 8,356,842 bytes (8.36 MB) | linux/amd64 |", 1)
	assert.Assert(t, measured != string(sizes), "the sizes page has no unmeasured action image row")
	assert.NilError(t, os.WriteFile(filepath.Join(work, ".github", "docs", "image-sizes.md"), []byte(measured), 0o644))
	for _, name := range []string{
		"Refuse to re-publish a version",
		"Pin every action to the pushed image digest",
		"Set the command line's worker defaults",
		"Commit the pinned actions",
		"Pin the inner references to the release commit",
		"Commit the pinned workflows and move the tags",
	} {
		script := metaReleaseStep(t, name)
		switch name {
		case "Pin every action to the pushed image digest":
			stepEnv = append(stepEnv, "PUSHED_TAG="+recorded("pushed-tag"))
		case "Pin the inner references to the release commit":
			stepEnv = append(stepEnv, "RELEASE_SHA="+recorded("sha"))
		}
		cmd := exec.Command("bash", "-c", script)
		cmd.Dir, cmd.Env = work, stepEnv
		out, err := cmd.CombinedOutput()
		assert.NilError(t, err, "%s: %s", name, out)
	}

	remote := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"--git-dir", origin}, args...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		assert.NilError(t, err, "git %v: %s", args, out)
		return strings.TrimSpace(string(out))
	}
	tagged := remote("rev-parse", "v1.2.3^{commit}")
	assert.Check(t, is.Equal(remote("rev-parse", "v1^{commit}"), tagged))
	actionsCommit := remote("rev-parse", tagged+"^")
	assert.Check(t, is.Equal(remote("rev-parse", actionsCommit+"^"), source), "the release is two commits on the tagged source")
	lane := remote("show", tagged+":.github/workflows/gpu-lane.yml")
	assert.Check(t, strings.Contains(lane, "uses: org/runpod-gpu/actions/provision@"+actionsCommit+"\n"), "gpu-lane.yml at the tag does not call provision at %s", actionsCommit)
	floating := regexp.MustCompile(`(?m)^\s*(-\s+)?uses:\s*\S+@v1\b.*$`).FindAllString(lane, -1)
	assert.Check(t, is.Len(floating, 0), "gpu-lane.yml at the tag still has floating references")
	assert.Check(t, is.Equal(remote("show", tagged+":.github/docs/image-sizes.md"), strings.TrimSpace(measured)), "the release commit carries the measured sizes")
	defaultsAtTag := remote("show", tagged+":pkg/devcli/workerdefaults.go")
	assert.Check(t, strings.Contains(defaultsAtTag, `DefaultWorkerSHA256 = "`+workerSHA+`"`), "go install …@v1 builds the worker's SHA-256 in")
	assert.Check(t, strings.Contains(defaultsAtTag, `DefaultWorkerURL    = "https://github.com/org/runpod-gpu/releases/download/v1.2.3/serverless-worker"`))
	for _, name := range metaActionDirs(t) {
		a, err := metaLoadActionYML([]byte(remote("show", actionsCommit+":actions/"+name+"/action.yml")))
		assert.NilError(t, err)
		assert.Check(t, is.Equal(a.Runs.Image, "docker://ghcr.io/org/runpod-gpu@"+metaReleaseDigest), "actions/%s at %s", name, actionsCommit)
	}
}

// metaSuiteCallRE matches a call of one of this repository's reusable workflows.
var metaSuiteCallRE = regexp.MustCompile(`uses: org/runpod-gpu/\.github/workflows/([a-z0-9-]+\.yml)@\S+`)

// TestReadmeCallersLint lints the workflows page's callers with actionlint against
// this tree's reusable workflows (the published reference read as the local
// file), so a renamed input or secret, or one a caller omits, fails here.
func TestReadmeCallersLint(t *testing.T) {
	linter, project := metaLinter(t)
	for i, block := range metaReadmeCallerBlocks(t) {
		local := metaSuiteCallRE.ReplaceAllString(block, "uses: ./.github/workflows/$1")
		assert.Assert(t, local != block || !strings.Contains(block, "jobs:"), "%s: workflows block %d calls no reusable workflow of this repository", docWorkflows, i+1)
		path := metaLintPath("readme-caller.yml") // never written: Lint takes the content
		errs, err := linter.Lint(path, []byte(local), project)
		assert.NilError(t, err)
		assert.Check(t, len(errs) == 0, "%s: workflows block %d:\n  %s", docWorkflows, i+1, metaFormatLint(errs))
	}
}

// TestMetaReleasePinsNestedWorkflowCalls: a reusable workflow that calls
// another of the suite's (a job-level uses:) is pinned the same way.
func TestMetaReleasePinsNestedWorkflowCalls(t *testing.T) {
	const nested = "\n  nested:\n    uses: org/runpod-gpu/.github/workflows/reap.yml@v1 # a comment stays\n"
	work, out, err := metaBuildReleaseTree(t, metaReleaseSHA, func(name, text string) string {
		if name == "gpu-lane.yml" {
			return text + nested
		}
		return text
	})
	assert.NilError(t, err, "%s", out)
	data, err := os.ReadFile(filepath.Join(work, ".github", "workflows", "gpu-lane.yml"))
	assert.NilError(t, err)
	assert.Check(t, strings.HasSuffix(string(data), "\n  nested:\n    uses: org/runpod-gpu/.github/workflows/reap.yml@"+metaReleaseSHA+" # a comment stays\n"))
}
