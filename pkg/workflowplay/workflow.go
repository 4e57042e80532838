// Package workflowplay plays GitHub Actions workflows the way the Actions
// service runs them, for what the suite's workflows and their callers use: jobs
// start as soon as the jobs they need are done (so the watchdog runs beside
// the GPU job), job and step conditions are evaluated with the status
// functions, each step that uses one of the suite's actions runs the real
// binary with its with: evaluated, a job that calls one of the suite's
// reusable workflows plays that workflow with its inputs and secrets, and
// every other job runs its steps for real on a Machine (Play.Machine: run:
// steps as processes, the artifact actions through the run's results
// service, timeout-minutes on an injected clock) or is the player's owner's
// (Play.Job). So a test, or runpod-gpu rehearse, drives the actions exactly
// as the workflows and the README's callers wire them: a wrong path into a
// record, a missing input or an output nobody reads shows as the actions
// misbehaving, and a caller's own job does what its steps say.
package workflowplay

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"
)

// Workflow is the part of a workflow file the player reads.
type Workflow struct {
	On       Triggers                `yaml:"on"`
	Env      map[string]string       `yaml:"env"`
	Defaults Defaults                `yaml:"defaults"`
	Jobs     map[string]*WorkflowJob `yaml:"jobs"`
}

// Defaults are a workflow's or job's defaults: for run steps, their shell and
// working directory.
type Defaults struct {
	Run struct {
		Shell            string `yaml:"shell"`
		WorkingDirectory string `yaml:"working-directory"`
	} `yaml:"run"`
}

// Triggers are a workflow's on: as the player reads it: a reusable
// workflow's inputs and outputs.
type Triggers struct {
	WorkflowCall *struct {
		Inputs  map[string]WorkflowInput `yaml:"inputs"`
		Outputs map[string]struct {
			Value string `yaml:"value"`
		} `yaml:"outputs"`
	} `yaml:"workflow_call"`
}

// UnmarshalYAML reads on: as a map of events; its other forms (on: push,
// on: [push, pull_request]) name events only, none of them workflow_call's
// inputs, and read as no triggers the player uses.
func (t *Triggers) UnmarshalYAML(node *yaml.Node) error {
	if node.Kind != yaml.MappingNode {
		return nil
	}
	type plain Triggers
	return node.Decode((*plain)(t))
}

// WorkflowInput is a declared input of a reusable workflow.
type WorkflowInput struct {
	Type     string `yaml:"type"`
	Default  any    `yaml:"default"`
	Required bool   `yaml:"required"`
}

// WorkflowJob is one job.
type WorkflowJob struct {
	Name    string            `yaml:"name"`
	If      string            `yaml:"if"`
	Needs   any               `yaml:"needs"`
	RunsOn  any               `yaml:"runs-on"`
	Uses    string            `yaml:"uses"`
	With    map[string]any    `yaml:"with"`
	Secrets any               `yaml:"secrets"`
	Outputs map[string]string `yaml:"outputs"`
	Steps   []WorkflowStep    `yaml:"steps"`
	Env     map[string]string `yaml:"env"`
	// TimeoutMinutes bounds the whole job (a number, or an expression giving one).
	TimeoutMinutes any      `yaml:"timeout-minutes"`
	Defaults       Defaults `yaml:"defaults"`
	// Strategy's matrix runs the job once per combination of its values
	// (a list, or an expression such as ${{ fromJSON(…) }} giving one).
	Strategy struct {
		Matrix map[string]any `yaml:"matrix"`
	} `yaml:"strategy"`
}

// WorkflowStep is one step.
type WorkflowStep struct {
	ID              string            `yaml:"id"`
	Name            string            `yaml:"name"`
	If              string            `yaml:"if"`
	Uses            string            `yaml:"uses"`
	Run             string            `yaml:"run"`
	With            map[string]string `yaml:"with"`
	ContinueOnError bool              `yaml:"continue-on-error"`
	Env             map[string]string `yaml:"env"`
	Shell           string            `yaml:"shell"`
	// WorkingDirectory is a run step's directory, relative to the workspace.
	WorkingDirectory string `yaml:"working-directory"`
	// TimeoutMinutes bounds the step (a number, or an expression giving one).
	TimeoutMinutes any `yaml:"timeout-minutes"`
}

// NeedsList is the job's needs as a list.
func (j *WorkflowJob) NeedsList() []string {
	switch n := j.Needs.(type) {
	case string:
		return []string{n}
	case []any:
		var out []string
		for _, v := range n {
			out = append(out, fmt.Sprint(v))
		}
		return out
	}
	return nil
}

// ParseWorkflow reads a workflow's text.
func ParseWorkflow(text string) (*Workflow, error) {
	var wf Workflow
	if err := yaml.Unmarshal([]byte(text), &wf); err != nil {
		return nil, err
	}
	for _, id := range slices.Sorted(maps.Keys(wf.Jobs)) {
		if wf.Jobs[id] == nil {
			return nil, fmt.Errorf("jobs.%s is empty: want a job (runs-on and steps, or uses)", id)
		}
	}
	return &wf, nil
}

// SuiteActionRE matches a step that uses one of the suite's actions (this
// repository's ./actions/<role>, or the published org/runpod-gpu/actions/<role>)
// and names its role.
var SuiteActionRE = regexp.MustCompile(`^(?:\./actions/|org/runpod-gpu/actions/)([a-z0-9-]+)(@\S+)?$`)

// SuiteWorkflowRE matches a job that calls one of the suite's reusable
// workflows and names its file.
var SuiteWorkflowRE = regexp.MustCompile(`^org/runpod-gpu/\.github/workflows/([a-z0-9-]+\.yml)@\S+$`)

// Play holds what a playing needs beside the workflows.
type Play struct {
	Github map[string]any // the github context
	Vars   map[string]any // the vars context
	// Action runs the suite's action role with its evaluated inputs; it
	// returns success or failure and the step's outputs.
	Action func(role string, inputs map[string]string) (conclusion string, outputs map[string]string)
	// Job runs a job that neither calls a suite workflow nor uses a suite
	// action (the caller's own jobs); nil, or a nil answer, is success.
	Job func(id string, job *WorkflowJob, ctx Contexts) (result string, outputs map[string]string)
	// Machine, if set, is asked for the machine on which a job of the caller's own (neither
	// calling a suite workflow nor using a suite action) runs its steps for real
	// (Machine.RunJob); when it answers nil the job goes to Job. A GPU job that waits for a
	// pod's runner is Job's, which runs it with cloud.RunPodJob once the runner took it.
	Machine func(id string, job *WorkflowJob, ctx Contexts) *Machine
	// Context is the playing's context: a machine's steps stop when it ends; nil is
	// context.Background().
	Context context.Context
	// Load reads one of the suite's reusable workflows by file name
	// (gpu-lane.yml), for a job that calls it.
	Load func(file string) (*Workflow, error)
	// JobDone, if set, hears of every job that ended, a called workflow's
	// too: path is the calling jobs' ids, outermost first.
	JobDone func(path []string, id string, job *WorkflowJob, run JobRun)

	path []string // the calling jobs of the workflow this Play runs
}

// JobRun is what became of a played job.
type JobRun struct {
	Result  string // success, failure, skipped
	Outputs map[string]string
}

type jobDone struct {
	id  string
	run JobRun
	err error
}

// Run plays wf with its inputs (typed by their declarations, defaults
// filled in) and secrets. It returns the workflow's outputs and each job's
// run; jobs whose needs are done run at once, side by side.
func (p *Play) Run(wf *Workflow, inputs map[string]any, secrets map[string]string) (map[string]string, map[string]JobRun, error) {
	in, err := typedInputs(wf, inputs)
	if err != nil {
		return nil, nil, err
	}
	env, err := workflowEnv(wf, Contexts{Values: map[string]any{"github": p.Github, "vars": p.Vars, "inputs": in, "secrets": stringMap(secrets)}})
	if err != nil {
		return nil, nil, err
	}
	runs := map[string]JobRun{}
	started := map[string]bool{}
	done := make(chan jobDone)
	running := 0
	for len(runs) < len(wf.Jobs) {
		for _, id := range slices.Sorted(maps.Keys(wf.Jobs)) {
			if started[id] || !allDone(wf.Jobs[id].NeedsList(), runs) {
				continue
			}
			started[id], running = true, running+1
			needs := needsContext(wf.Jobs[id].NeedsList(), runs)
			status := needsStatus(wf, id, runs)
			go func() {
				run, err := p.job(id, wf.Jobs[id], in, needs, status, env, secrets)
				done <- jobDone{id: id, run: run, err: err}
			}()
		}
		if running == 0 {
			return nil, runs, fmt.Errorf("jobs wait for each other: %v", wf.Jobs)
		}
		d := <-done
		running--
		if d.err != nil {
			err = errorsJoin(err, fmt.Errorf("job %s: %w", d.id, d.err))
		}
		runs[d.id] = d.run
		if p.JobDone != nil {
			p.JobDone(p.path, d.id, wf.Jobs[d.id], d.run)
		}
	}
	if err != nil {
		return nil, runs, err
	}
	outputs, err := p.outputs(wf, in, runs)
	return outputs, runs, err
}

func errorsJoin(a, b error) error {
	if a == nil {
		return b
	}
	return fmt.Errorf("%w; %w", a, b)
}

func allDone(needs []string, runs map[string]JobRun) bool {
	for _, n := range needs {
		if _, ok := runs[n]; !ok {
			return false
		}
	}
	return true
}

func needsContext(needs []string, runs map[string]JobRun) map[string]any {
	out := map[string]any{}
	for _, n := range needs {
		out[n] = map[string]any{"result": runs[n].Result, "outputs": stringMap(runs[n].Outputs)}
	}
	return out
}

func stringMap(m map[string]string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// typedInputs gives each declared input its type and default.
func typedInputs(wf *Workflow, given map[string]any) (map[string]any, error) {
	out := maps.Clone(given)
	if out == nil {
		out = map[string]any{}
	}
	if wf.On.WorkflowCall == nil {
		return out, nil
	}
	for name, decl := range wf.On.WorkflowCall.Inputs {
		v, ok := out[name]
		if !ok || v == "" && decl.Type != "string" {
			if decl.Required && !ok {
				return nil, fmt.Errorf("input %s is required", name)
			}
			v = decl.Default
		}
		var err error
		if out[name], err = typed(name, decl.Type, v); err != nil {
			return nil, err
		}
	}
	for name := range out {
		if _, ok := wf.On.WorkflowCall.Inputs[name]; !ok {
			return nil, fmt.Errorf("input %s is not declared", name)
		}
	}
	return out, nil
}

func typed(name, typ string, v any) (any, error) {
	s := exprString(v)
	switch v := v.(type) {
	case int:
		s = strconv.Itoa(v)
	case nil:
		s = ""
	}
	switch typ {
	case "number":
		if s == "" {
			return float64(0), nil
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("input %s = %q: not a number", name, s)
		}
		return f, nil
	case "boolean":
		return s == "true", nil
	}
	return s, nil
}

// job plays one job: once, or once per combination of its matrix.
func (p *Play) job(id string, job *WorkflowJob, inputs, needs map[string]any, status Status, env map[string]any, secrets map[string]string) (JobRun, error) {
	ctx := Contexts{Values: map[string]any{"github": p.Github, "vars": p.Vars, "inputs": inputs, "needs": needs, "env": env},
		Status: status}
	ok, err := Condition(job.If, ctx)
	if err != nil || !ok {
		return JobRun{Result: "skipped", Outputs: map[string]string{}}, err
	}
	if len(job.Strategy.Matrix) == 0 {
		return p.leg(id, job, ctx, secrets)
	}
	legs, err := matrixLegs(job.Strategy.Matrix, ctx)
	if err != nil {
		return JobRun{}, fmt.Errorf("strategy.matrix: %w", err)
	}
	runs := make([]JobRun, len(legs))
	errs := make([]error, len(legs))
	var wg sync.WaitGroup
	for i, m := range legs {
		leg := *job
		lctx := ctx
		lctx.Values = maps.Clone(ctx.Values)
		lctx.Values["matrix"] = m
		if leg.Name, err = legName(job.Name, id, m, lctx); err != nil {
			return JobRun{}, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			runs[i], errs[i] = p.leg(id, &leg, lctx, secrets)
		}()
	}
	wg.Wait()
	return matrixResult(runs), errorsJoinAll(errs)
}

// leg plays one run of a job (the job, or one combination of its matrix).
func (p *Play) leg(id string, job *WorkflowJob, ctx Contexts, secrets map[string]string) (JobRun, error) {
	if m := SuiteWorkflowRE.FindStringSubmatch(job.Uses); m != nil {
		return p.call(id, m[1], job, ctx, secrets)
	}
	if !slices.ContainsFunc(job.Steps, func(st WorkflowStep) bool { return SuiteActionRE.MatchString(st.Uses) }) {
		if p.Machine != nil {
			if m := p.Machine(id, job, ctx); m != nil {
				ctx.Values["secrets"] = stringMap(secrets)
				return m.RunJob(cmpOrContext(p.Context), job, ctx)
			}
		}
		if p.Job == nil {
			return JobRun{Result: "success", Outputs: map[string]string{}}, nil
		}
		result, outputs := p.Job(id, job, ctx)
		return JobRun{Result: result, Outputs: outputs}, nil
	}
	return p.steps(job, ctx, secrets)
}

// matrixLegs are the combinations of the matrix's values, in order: each
// key's list (literal, or an expression's value), crossed with the others'.
// An empty list is GitHub's error too.
func matrixLegs(matrix map[string]any, ctx Contexts) ([]map[string]any, error) {
	legs := []map[string]any{{}}
	for _, key := range slices.Sorted(maps.Keys(matrix)) {
		values, ok := matrix[key].([]any)
		if s, isString := matrix[key].(string); isString {
			expr := strings.TrimSpace(s)
			inner, found := strings.CutPrefix(expr, "${{")
			if !found {
				return nil, fmt.Errorf("%s: %q is neither a list nor an expression", key, s)
			}
			v, err := Eval(strings.TrimSuffix(strings.TrimSpace(inner), "}}"), ctx)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", key, err)
			}
			values, ok = v.([]any)
		}
		if !ok || len(values) == 0 {
			return nil, fmt.Errorf("matrix vector %q does not contain any values", key)
		}
		var next []map[string]any
		for _, l := range legs {
			for _, v := range values {
				n := maps.Clone(l)
				n[key] = v
				next = append(next, n)
			}
		}
		legs = next
	}
	return legs, nil
}

// legName is a matrix leg's name as GitHub lists it: the name with its
// expressions evaluated, or without any the name (or id) and the leg's
// values in parentheses.
func legName(name, id string, m map[string]any, ctx Contexts) (string, error) {
	if strings.Contains(name, "${{") {
		return Interpolate(name, ctx)
	}
	var vals []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		vals = append(vals, exprString(m[k]))
	}
	if name == "" {
		name = id
	}
	return name + " (" + strings.Join(vals, ", ") + ")", nil
}

// matrixResult is a matrix job's result as needs.<job> shows it: failure
// when a leg failed, else cancelled when one was, else success; its outputs
// are the last leg's (GitHub keeps one value per output).
func matrixResult(runs []JobRun) JobRun {
	out := JobRun{Result: "success", Outputs: map[string]string{}}
	for _, r := range runs {
		switch {
		case r.Result == "failure":
			out.Result = "failure"
		case r.Result == "cancelled" && out.Result != "failure":
			out.Result = "cancelled"
		}
		if len(r.Outputs) > 0 {
			out.Outputs = r.Outputs
		}
	}
	return out
}

func errorsJoinAll(errs []error) error {
	var out error
	for _, e := range errs {
		if e != nil {
			out = errorsJoin(out, e)
		}
	}
	return out
}

// needsStatus is what the status functions answer in job id's if:, as GitHub documents
// them: success() when every job it needs succeeded (one skipped or failed skips it),
// failure() when any job before it, however far up its needs, failed, cancelled() when one
// it needs was cancelled.
func needsStatus(wf *Workflow, id string, runs map[string]JobRun) Status {
	s := Status{Success: true}
	for _, n := range wf.Jobs[id].NeedsList() {
		switch runs[n].Result {
		case "success":
		case "cancelled":
			s.Success, s.Cancelled = false, true
		case "failure":
			s.Success, s.Failure = false, true
		default: // skipped
			s.Success = false
		}
	}
	seen := map[string]bool{}
	var walk func(string)
	walk = func(j string) {
		for _, n := range wf.Jobs[j].NeedsList() {
			if !seen[n] && wf.Jobs[n] != nil {
				seen[n] = true
				if runs[n].Result == "failure" {
					s.Failure = true
				}
				walk(n)
			}
		}
	}
	walk(id)
	return s
}

// workflowEnv is the workflow's env: evaluated once, the env context its jobs start from.
func workflowEnv(wf *Workflow, ctx Contexts) (map[string]any, error) {
	env := map[string]any{}
	for _, k := range slices.Sorted(maps.Keys(wf.Env)) {
		v, err := Interpolate(wf.Env[k], ctx)
		if err != nil {
			return nil, fmt.Errorf("env.%s: %w", k, err)
		}
		env[k] = v
	}
	return env, nil
}

// call plays a job that calls one of the suite's reusable workflows.
func (p *Play) call(id, file string, job *WorkflowJob, ctx Contexts, secrets map[string]string) (JobRun, error) {
	if p.Load == nil {
		return JobRun{}, fmt.Errorf("%s: no loader of the suite's workflows (Play.Load)", file)
	}
	wf, err := p.Load(file)
	if err != nil {
		return JobRun{}, err
	}
	ctx.Values["secrets"] = stringMap(secrets)
	inputs := map[string]any{}
	for k, v := range job.With {
		if s, ok := v.(string); ok {
			if v, err = Interpolate(s, ctx); err != nil {
				return JobRun{}, fmt.Errorf("with.%s: %w", k, err)
			}
		}
		inputs[k] = v
	}
	passed := map[string]string{}
	if m, ok := job.Secrets.(map[string]any); ok {
		for k, v := range m {
			if passed[k], err = Interpolate(fmt.Sprint(v), ctx); err != nil {
				return JobRun{}, fmt.Errorf("secrets.%s: %w", k, err)
			}
		}
	}
	called := *p
	called.path = append(slices.Clone(p.path), id)
	outputs, runs, err := called.Run(wf, inputs, passed)
	if err != nil {
		return JobRun{}, fmt.Errorf("%s: %w", file, err)
	}
	result := "success"
	for _, r := range runs {
		if r.Result != "success" && r.Result != "skipped" {
			result = "failure"
		}
	}
	return JobRun{Result: result, Outputs: outputs}, nil
}

// steps plays a job's steps: the suite's actions run, other steps are skipped.
func (p *Play) steps(job *WorkflowJob, ctx Contexts, secrets map[string]string) (JobRun, error) {
	steps := map[string]any{}
	ctx.Values["steps"], ctx.Values["secrets"] = steps, stringMap(secrets)
	ctx.Status = Status{Success: true}
	for _, st := range job.Steps {
		m := SuiteActionRE.FindStringSubmatch(st.Uses)
		ok, err := Condition(st.If, ctx)
		if err != nil {
			return JobRun{}, fmt.Errorf("step %s: %w", st.Name+st.ID, err)
		}
		if !ok || m == nil {
			continue // not run here: another action, a script, or its condition is false
		}
		inputs := map[string]string{}
		for k, v := range st.With {
			if inputs[k], err = Interpolate(v, ctx); err != nil {
				return JobRun{}, fmt.Errorf("step %s: with.%s: %w", st.Name, k, err)
			}
		}
		outcome, outputs := p.Action(m[1], inputs)
		conclusion := outcome
		if outcome == "failure" && st.ContinueOnError {
			conclusion = "success"
		}
		if st.ID != "" {
			steps[st.ID] = map[string]any{"outcome": outcome, "conclusion": conclusion, "outputs": stringMap(outputs)}
		}
		if conclusion != "success" {
			ctx.Status = Status{Failure: true}
		}
	}
	outputs := map[string]string{}
	for k, v := range job.Outputs {
		s, err := Interpolate(v, ctx)
		if err != nil {
			return JobRun{}, fmt.Errorf("outputs.%s: %w", k, err)
		}
		outputs[k] = s
	}
	result := "success"
	if ctx.Status.Failure {
		result = "failure"
	}
	return JobRun{Result: result, Outputs: outputs}, nil
}

// outputs evaluates a called workflow's outputs from its jobs.
func (p *Play) outputs(wf *Workflow, inputs map[string]any, runs map[string]JobRun) (map[string]string, error) {
	out := map[string]string{}
	if wf.On.WorkflowCall == nil {
		return out, nil
	}
	jobs := map[string]any{}
	for id, r := range runs {
		jobs[id] = map[string]any{"result": r.Result, "outputs": stringMap(r.Outputs)}
	}
	ctx := Contexts{Values: map[string]any{"github": p.Github, "vars": p.Vars, "inputs": inputs, "jobs": jobs}}
	for name, o := range wf.On.WorkflowCall.Outputs {
		s, err := Interpolate(o.Value, ctx)
		if err != nil {
			return nil, fmt.Errorf("output %s: %w", name, err)
		}
		out[name] = strings.TrimSpace(s)
	}
	return out, nil
}

func cmpOrContext(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}
