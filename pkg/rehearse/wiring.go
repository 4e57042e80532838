package rehearse

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/org/runpod-gpu/pkg/callers"
	"github.com/org/runpod-gpu/pkg/workflowplay"
)

// Mistake is one wiring mistake: what is wrong, where, and how to fix it.
type Mistake struct {
	File string `json:"file"`
	What string `json:"what"`
	Fix  string `json:"fix"`
}

// The names the set-up stores (runpod-gpu init, checked by doctor) and the
// lane reads: each secret under the name its reusable workflow declares, and
// the App ids as these repository variables, by the input they go to.
var (
	laneSecrets = []string{"RUNPOD_API_KEY", "RUNPOD_GPU_APP_PRIVATE_KEY", "RUNPOD_GPU_RUNNER_APP_PRIVATE_KEY", "RUNPOD_GPU_TOKEN"}
	laneVars    = map[string]string{
		"app-id": "RUNPOD_GPU_APP_ID", "app-installation-id": "RUNPOD_GPU_APP_INSTALLATION_ID",
		"runner-app-id": "RUNPOD_GPU_RUNNER_APP_ID", "runner-app-installation-id": "RUNPOD_GPU_RUNNER_APP_INSTALLATION_ID",
	}
)

// Defaults of gpu-lane-authorize.yml's gpu-job-name and test-step-name.
const (
	defaultGPUJobName   = "GPU tests"
	defaultTestStepName = "Run GPU tests"
)

var (
	secretRefRE = regexp.MustCompile(`^\$\{\{\s*secrets\.([A-Za-z0-9_]+)\s*\}\}$`)
	varRefRE    = regexp.MustCompile(`vars\.([A-Za-z0-9_]+)`)
)

// workflowFile is one file of the repository's .github/workflows.
type workflowFile struct {
	Path string // relative to the repository's root
	Text string
	Name string // its name:, or its path as GitHub shows a workflow without one
	WF   *workflowplay.Workflow
	doc  callerDoc
}

// callerDoc is what the wiring checks read beside the player's Workflow.
type callerDoc struct {
	Name        string `yaml:"name"`
	On          any    `yaml:"on"`
	Permissions any    `yaml:"permissions"`
	Jobs        map[string]struct {
		Permissions any `yaml:"permissions"`
	} `yaml:"jobs"`
}

func parseWorkflowFile(path, text string) (*workflowFile, error) {
	f := &workflowFile{Path: path, Text: text}
	var err error
	if f.WF, err = workflowplay.ParseWorkflow(text); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := yaml.Unmarshal([]byte(text), &f.doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.Name = f.doc.Name
	if f.Name == "" {
		f.Name = path
	}
	return f, nil
}

// workflowRunNames are the workflows an on.workflow_run trigger names.
func (f *workflowFile) workflowRunNames() []string {
	on, _ := f.doc.On.(map[string]any)
	wr, _ := on["workflow_run"].(map[string]any)
	var names []string
	switch w := wr["workflows"].(type) {
	case string:
		names = []string{w}
	case []any:
		for _, n := range w {
			names = append(names, fmt.Sprint(n))
		}
	}
	return names
}

// suiteCall is a job calling one of the suite's reusable workflows: the
// file it calls, and that workflow's declared secrets and inputs.
type suiteCall struct {
	ID, File string
	Job      *workflowplay.WorkflowJob
}

func (f *workflowFile) suiteCalls() []suiteCall {
	var calls []suiteCall
	for _, id := range slices.Sorted(maps.Keys(f.WF.Jobs)) {
		if call, ok := callers.ParseSuiteCall(f.WF.Jobs[id].Uses); ok {
			calls = append(calls, suiteCall{ID: id, File: call.Workflow, Job: f.WF.Jobs[id]})
		}
	}
	return calls
}

// isLaneCaller reports whether f calls the GPU lane, whole or in parts.
func (f *workflowFile) isLaneCaller() bool {
	return slices.ContainsFunc(f.suiteCalls(), func(c suiteCall) bool {
		return c.File == "gpu-lane.yml" || c.File == "gpu-lane-authorize.yml"
	})
}

// onRunnerLabel reports whether a job's runs-on is a pod's runner label.
func onRunnerLabel(job *workflowplay.WorkflowJob) bool {
	s, _ := job.RunsOn.(string)
	return strings.Contains(s, "runner-label")
}

// jobName is a job's name as the watchdog and the run's page show it.
func jobName(id string, job *workflowplay.WorkflowJob) string {
	if job.Name != "" {
		return job.Name
	}
	return id
}

// checkWiring finds every wiring mistake of the lane caller f among the
// repository's workflows; suite holds the suite's reusable workflows by file name.
func checkWiring(f *workflowFile, repo []*workflowFile, suite map[string]*suiteWorkflow) []Mistake {
	var out []Mistake
	add := func(what, fix string, args ...any) {
		out = append(out, Mistake{File: f.Path, What: what, Fix: fmt.Sprintf(fix, args...)})
	}
	checkTrigger(f, repo, add)
	checkPermissions(f, add)
	for _, c := range f.suiteCalls() {
		if sw, ok := suite[c.File]; ok {
			checkCallNames(c, sw, add)
		}
	}
	checkGPUJob(f, add)
	return out
}

type addFunc func(what, fix string, args ...any)

// checkTrigger: every workflow on.workflow_run names is a workflow of the repository.
func checkTrigger(f *workflowFile, repo []*workflowFile, add addFunc) {
	var names []string
	for _, w := range repo {
		if w.Path != f.Path {
			names = append(names, w.Name)
		}
	}
	slices.Sort(names)
	for _, n := range f.workflowRunNames() {
		if !slices.Contains(names, n) {
			add(fmt.Sprintf("on.workflow_run.workflows names %q, but no workflow in .github/workflows has that name (the names are: %s)", n, quotedList(names)),
				"write the `name:` of your CI workflow (not its file name) in workflows: [...]")
		}
	}
}

// checkPermissions: each job calling the suite grants what the called jobs need.
func checkPermissions(f *workflowFile, add addFunc) {
	wfGrant, wfDeclared, err := callers.ParsePermissions(f.doc.Permissions)
	if err != nil {
		add(err.Error(), "write permissions as read-all, write-all or a map of scope: read|write|none")
		return
	}
	for _, c := range f.suiteCalls() {
		needs, err := callers.SuiteNeedsOf(c.File)
		if err != nil {
			continue // not one of the lane's: the play names it
		}
		grant, declared, err := callers.ParsePermissions(f.doc.Jobs[c.ID].Permissions)
		where := "jobs." + c.ID + ".permissions"
		if err != nil {
			add(fmt.Sprintf("job %s: %v", c.ID, err), "write %s as a map of scope: read|write|none", where)
			continue
		}
		if !declared {
			grant, declared, where = wfGrant, wfDeclared, "the workflow's permissions"
		}
		if !declared {
			add(fmt.Sprintf("job %s calls %s but declares no permissions: a new repository's default token is read-only", c.ID, c.File),
				"give job %s permissions: %s", c.ID, needs)
			continue
		}
		missing := callers.Missing(grant, needs)
		for _, scope := range slices.Sorted(maps.Keys(missing)) {
			add(fmt.Sprintf("job %s calls %s, whose jobs need %s: %s, but the caller grants %s: %s", c.ID, c.File, scope, missing[scope], scope, orNone(grant[scope])),
				"add %s: %s to %s", scope, missing[scope], where)
		}
	}
}

func orNone(level string) string {
	if level == "" {
		return "none"
	}
	return level
}

// checkCallNames: the secrets and variables a call passes are the ones the
// lane reads under the names the set-up stores, and every input is declared.
func checkCallNames(c suiteCall, sw *suiteWorkflow, add addFunc) {
	if s, ok := c.Job.Secrets.(string); ok && s == "inherit" {
		add(fmt.Sprintf("job %s passes secrets: inherit: every secret of the repository reaches %s", c.ID, c.File),
			"pass each secret by name: %s", secretsBlock(sw.requiredSecrets()))
	}
	passed, _ := c.Job.Secrets.(map[string]any)
	for _, name := range slices.Sorted(maps.Keys(passed)) {
		if !slices.Contains(sw.Secrets, name) {
			add(fmt.Sprintf("job %s passes the secret %s, which %s does not read (it reads %s)", c.ID, name, c.File, quotedList(sw.Secrets)),
				"rename it to the name %s reads, e.g. %s", c.File, secretsBlock(sw.requiredSecrets()))
			continue
		}
		if m := secretRefRE.FindStringSubmatch(strings.TrimSpace(fmt.Sprint(passed[name]))); m != nil && m[1] != name && slices.Contains(laneSecrets, name) {
			add(fmt.Sprintf("job %s passes secrets.%s as %s, but the set-up (runpod-gpu init, checked by doctor) keeps this secret as %s in the runpod-gpu environment", c.ID, m[1], name, name),
				"write %s: ${{ secrets.%s }}", name, name)
		}
	}
	if _, inherit := c.Job.Secrets.(string); !inherit {
		for _, name := range sw.requiredSecrets() {
			if _, ok := passed[name]; !ok {
				add(fmt.Sprintf("job %s does not pass the secret %s, which %s requires", c.ID, name, c.File),
					"add %s: ${{ secrets.%s }} under jobs.%s.secrets", name, name, c.ID)
			}
		}
	}
	for _, input := range slices.Sorted(maps.Keys(c.Job.With)) {
		if !slices.Contains(sw.Inputs, input) {
			add(fmt.Sprintf("job %s passes the input %s, which %s does not declare", c.ID, input, c.File),
				"remove it, or use one of %s's inputs (%s)", c.File, strings.Join(sw.Inputs, ", "))
			continue
		}
		value := fmt.Sprint(c.Job.With[input])
		for _, m := range varRefRE.FindAllStringSubmatch(value, -1) {
			if want, ok := laneVars[input]; ok && m[1] != want {
				add(fmt.Sprintf("job %s passes vars.%s as %s, but the set-up keeps it as the variable %s", c.ID, m[1], input, want),
					"write %s: ${{ vars.%s }}", input, want)
			}
		}
	}
}

// checkGPUJob: for a caller of the lane's parts, gpu-job-name names the job
// on the runner's label and test-step-name one of its steps; for any
// caller, no other job runs on the runner's label.
func checkGPUJob(f *workflowFile, add addFunc) {
	gpuName, stepName, parts := defaultGPUJobName, defaultTestStepName, false
	for _, c := range f.suiteCalls() {
		if c.File == "gpu-lane-authorize.yml" {
			parts = true
			if v, ok := c.Job.With["gpu-job-name"]; ok {
				gpuName = fmt.Sprint(v)
			}
			if v, ok := c.Job.With["test-step-name"]; ok {
				stepName = fmt.Sprint(v)
			}
		}
	}
	var onLabel, labelIDs []string
	gpuID := ""
	for _, id := range slices.Sorted(maps.Keys(f.WF.Jobs)) {
		if job := f.WF.Jobs[id]; onRunnerLabel(job) {
			onLabel, labelIDs = append(onLabel, jobName(id, job)), append(labelIDs, id)
			if parts && gpuID == "" && jobName(id, job) == gpuName {
				gpuID = id
			}
		}
	}
	if parts && gpuID == "" {
		add(fmt.Sprintf("gpu-job-name %q matches no job on the pod's runner label (jobs on it: %s)", gpuName, quotedList(onLabel)),
			"set gpu-job-name in the authorize job's with: to your GPU job's name: (its id without one), or name that job %q", gpuName)
		return
	}
	for _, id := range labelIDs {
		if id == gpuID {
			continue
		}
		job := f.WF.Jobs[id]
		add(fmt.Sprintf("job %q runs on the pod's runner label (runs-on: %v), which only the GPU job %q may: the watchdog deletes the pod at once when another job takes its runner", jobName(id, job), job.RunsOn, gpuName),
			"give job %s a hosted runner (runs-on: ubuntu-latest)", id)
	}
	if !parts {
		return
	}
	var steps []string
	for _, st := range f.WF.Jobs[gpuID].Steps {
		steps = append(steps, st.Name)
		if st.Name == stepName {
			return
		}
	}
	add(fmt.Sprintf("test-step-name %q matches no step of the GPU job %q (its steps: %s): the watchdog would wait for it and delete the pod at the setup deadline", stepName, gpuName, quotedList(steps)),
		"set test-step-name in the authorize job's with: to the name: of the step that runs your tests, or name that step %q", stepName)
}

func quotedList(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

func secretsBlock(names []string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + ": ${{ secrets." + n + " }}"
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
