package demo

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

func play(t *testing.T, seed uint64) string {
	t.Helper()
	var out bytes.Buffer
	assert.NilError(t, Run(context.Background(), &out, seed))
	return out.String()
}

// The demo prints every job's summary as its action writes it; these are the
// lines a reader relies on.
func TestDemoPrintsEveryStage(t *testing.T) {
	out := play(t, 1)
	for _, want := range []string{
		"**Decision: run**",             // authorize
		"| live-1 | NVIDIA RTX A4000 |", // the cheapest host...
		"| rejected | the startup script exited with 1: the CUDA smoke proof failed",       // ...fails the CUDA proof
		"SMOKE FAIL: the driver rejected PTX ISA 8.7 (CUDA_ERROR_UNSUPPORTED_PTX_VERSION)", // and its log says why
		"**Accepted**",                      // the next one is accepted
		"Plan (worst-case spend",            // the plan and its bound
		"## Job: gpu-tests",                 // the simulated GPU job ran on the JIT runner
		"| Run GPU tests |",                 //
		"## RunPod GPU watchdog",            // under the watchdog, which deletes the pod when it ends
		"**job-finished**",                  //
		":paid`",                            // the gate says paid
		"## RunPod GPU cleanup",             // cleanup reports the cost
		"#### Paid window by stage",         // with the stage chart
		"```mermaid\ngantt\n",               //
		"| 1 | live-1 | NVIDIA RTX A4000 |", // provision's rejected candidate is in the run total
		"**Estimated run total** (accepted pod and every rejected candidate)",
		"Estimates, not invoices",      //
		"**Decision: reuse**",          // the duplicate trigger
		"No pod was created.",          //
		":reused`",                     // is answered by a reused gate
		"### RunPod reaper (executed)", // the reaper reclaims the orphan
		"## RunPod GPU cost history",   // and the cost history sums it all up
		"```mermaid\nxychart-beta\n",   //
	} {
		assert.Check(t, strings.Contains(out, want), "the demo's output lacks %q", want)
	}
	assert.Check(t, !regexp.MustCompile(`rpa_|ghs_`).MatchString(out), "no credential in the demo's output")
}

// The same seed plays the same scenario (loopback ports and generated ids aside).
func TestDemoIsDeterministic(t *testing.T) {
	ports := regexp.MustCompile(`127\.0\.0\.1:\d+`)
	a, b := ports.ReplaceAllString(play(t, 7), "PORT"), ports.ReplaceAllString(play(t, 7), "PORT")
	assert.Equal(t, a, b)
}
