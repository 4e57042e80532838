package workflowplay

import (
	"sync"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

const playedWorkflow = `on:
  workflow_call:
    inputs:
      n: {type: number, default: 2}
      who: {type: string, required: true}
    outputs:
      said: {value: "${{ jobs.second.outputs.said }}"}
      record: {value: "${{ format('{{\"n\":{0},\"first\":{1}}}', toJSON(inputs.n), toJSON(jobs.first.outputs)) }}"}
jobs:
  first:
    runs-on: ubuntu-latest
    outputs: {id: "${{ steps.one.outputs.id }}"}
    steps:
      - uses: actions/checkout@v4
      - id: one
        uses: org/runpod-gpu/actions/provision@v1
        with: {runpod-api-key: "${{ secrets.KEY }}", pr-number: "${{ inputs.n }}"}
      - if: failure()
        uses: org/runpod-gpu/actions/cleanup@v1
  second:
    needs: first
    runs-on: ubuntu-latest
    outputs: {said: "${{ steps.gate.outputs.kind }}"}
    steps:
      - id: gate
        uses: org/runpod-gpu/actions/gate@v1
        with: {pod-id: "${{ needs.first.outputs.id }}", reason: "for ${{ inputs.who }}"}
  never:
    needs: first
    if: needs.first.result == 'failure'
    runs-on: ubuntu-latest
    steps: [{uses: org/runpod-gpu/actions/reap@v1}]
  own:
    needs: first
    runs-on: ${{ needs.first.outputs.id }}
    steps: [{run: make test}]
`

// A played workflow runs the suite's actions with their with: evaluated,
// skips what is not theirs, follows needs and conditions, hands the caller's
// own jobs to the test, and evaluates its outputs from its jobs'.
func TestPlayRunsTheSuitesActionsInNeedsOrder(t *testing.T) {
	wf, err := ParseWorkflow(playedWorkflow)
	assert.NilError(t, err)
	var mu sync.Mutex
	called := map[string]map[string]string{}
	own := ""
	p := &Play{
		Action: func(role string, inputs map[string]string) (string, map[string]string) {
			mu.Lock()
			defer mu.Unlock()
			called[role] = inputs
			return "success", map[string]string{"id": "pod-1", "kind": "paid"}
		},
		Job: func(id string, job *WorkflowJob, ctx Contexts) (string, map[string]string) {
			label, _ := Interpolate(job.RunsOn.(string), ctx)
			own = id + " on " + label
			return "success", nil
		},
	}
	outputs, runs, err := p.Run(wf, map[string]any{"who": "alice"}, map[string]string{"KEY": "k"})
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(called["provision"], map[string]string{"runpod-api-key": "k", "pr-number": "2"}))
	assert.Check(t, is.DeepEqual(called["gate"], map[string]string{"pod-id": "pod-1", "reason": "for alice"}))
	assert.Check(t, is.Len(called, 2), "cleanup (if: failure()) and reap (a skipped job) never ran: %v", called)
	assert.Check(t, is.Equal(runs["never"].Result, "skipped"))
	assert.Check(t, is.Equal(own, "own on pod-1"))
	assert.Check(t, is.Equal(outputs["said"], "paid"))
	record, err := Eval("fromJSON(o).first.id", Contexts{Values: map[string]any{"o": outputs["record"]}})
	assert.NilError(t, err)
	assert.Check(t, is.Equal(record, "pod-1"), "the record is JSON: %s", outputs["record"])

	_, _, err = p.Run(wf, map[string]any{}, nil)
	assert.Check(t, is.ErrorContains(err, "input who is required"))
	_, _, err = p.Run(wf, map[string]any{"who": "a", "typo": "x"}, nil)
	assert.Check(t, is.ErrorContains(err, "input typo is not declared"))
}

// A matrix job runs once per value, side by side, each leg named as GitHub
// lists it and with its matrix context; needs sees one result (failure when
// a leg failed) and the last leg's outputs; an empty matrix is an error.
func TestPlayRunsAMatrixJobPerValue(t *testing.T) {
	wf, err := ParseWorkflow(`on: {workflow_call: {inputs: {pods: {type: string}}}}
jobs:
  gpu:
    name: ${{ matrix.pod.tier && format('GPU tests ({0})', matrix.pod.tier) || 'GPU tests' }}
    strategy: {matrix: {pod: "${{ fromJSON(inputs.pods) }}"}}
    runs-on: ${{ matrix.pod.label }}
    steps: [{run: make test}]
  plain:
    strategy: {matrix: {os: [linux, mac]}}
    runs-on: ${{ matrix.os }}
    steps: [{run: make}]
  after:
    needs: [gpu, plain]
    if: always()
    runs-on: ubuntu-latest
    steps: [{run: echo}]
`)
	assert.NilError(t, err)
	var mu sync.Mutex
	ran := map[string]string{}
	p := &Play{Job: func(id string, job *WorkflowJob, ctx Contexts) (string, map[string]string) {
		label, _ := Interpolate(job.RunsOn.(string), ctx)
		if id != "after" {
			mu.Lock()
			ran[job.Name] = label
			mu.Unlock()
		}
		if label == "l2" {
			return "failure", nil
		}
		return "success", nil
	}}
	_, runs, err := p.Run(wf, map[string]any{"pods": `[{"tier":"ampere","label":"l1"},{"tier":"hopper","label":"l2"}]`}, nil)
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(ran, map[string]string{"GPU tests (ampere)": "l1", "GPU tests (hopper)": "l2", "plain (linux)": "linux", "plain (mac)": "mac"}))
	assert.Check(t, is.Equal(runs["gpu"].Result, "failure"))
	assert.Check(t, is.Equal(runs["plain"].Result, "success"))

	_, _, err = p.Run(wf, map[string]any{"pods": `[]`}, nil)
	assert.Check(t, is.ErrorContains(err, `matrix vector "pod" does not contain any values`))
}

// A workflow whose on: is an event's name or a list of them parses, with no
// reusable-workflow triggers; a map still gives workflow_call's inputs.
func TestParseWorkflowReadsEveryFormOfOn(t *testing.T) {
	for _, text := range []string{"on: push\njobs: {}\n", "on: [push, pull_request]\njobs: {}\n", "on: {push: {branches: [main]}}\njobs: {}\n"} {
		wf, err := ParseWorkflow(text)
		assert.NilError(t, err, text)
		assert.Check(t, wf.On.WorkflowCall == nil, text)
	}
	wf, err := ParseWorkflow("on: {workflow_call: {inputs: {n: {type: number}}}}\njobs: {}\n")
	assert.NilError(t, err)
	assert.Check(t, is.Equal(wf.On.WorkflowCall.Inputs["n"].Type, "number"))
}

// A job without a body is an error naming it, never a nil job to play.
func TestParseWorkflowRefusesAnEmptyJob(t *testing.T) {
	_, err := ParseWorkflow("on: push\njobs:\n  build:\n")
	assert.Check(t, is.ErrorContains(err, "jobs.build is empty"))
}
