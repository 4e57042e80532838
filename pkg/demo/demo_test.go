package demo

import (
	"bytes"
	"context"
	"regexp"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func play(t *testing.T, seed uint64) string {
	t.Helper()
	var out bytes.Buffer
	assert.NilError(t, Run(context.Background(), &out, seed))
	return out.String()
}

// The demo prints every stage's summary; these are the lines a reader relies on.
func TestDemoPrintsEveryStage(t *testing.T) {
	out := play(t, 1)
	for _, want := range []string{
		"Decision: **run**",
		"| live-1 | NVIDIA RTX A4000 |",          // the cheapest host...
		"| rejected | pod EXITED while starting", // ...fails the CUDA proof
		"**Accepted**",                           // the next one is accepted
		"Plan (worst-case spend",                 // the plan and its bound
		"## gpu-tests",                           // the simulated GPU job ran on the JIT runner
		"| Run GPU tests |",                      //
		":paid`)",                                // the gate says paid
		"## RunPod GPU cleanup",                  // the pod is deleted
		"#### Paid window by stage",              // with the cost report
		"Estimates, not invoices",                //
		"Decision: **reuse**",                    // the duplicate trigger
		"No pod was created.",                    //
		":reused`)",                              // is answered by a reused gate
		"# Scheduled reaper",                     // and the reaper runs
	} {
		assert.Check(t, is.Contains(out, want))
	}
	assert.Check(t, !regexp.MustCompile(`rpa_|ghs_`).MatchString(out), "no credential in the demo's output")
}

// The same seed plays the same scenario (loopback ports and generated ids aside).
func TestDemoIsDeterministic(t *testing.T) {
	ports := regexp.MustCompile(`127\.0\.0\.1:\d+`)
	a, b := ports.ReplaceAllString(play(t, 7), "PORT"), ports.ReplaceAllString(play(t, 7), "PORT")
	assert.Equal(t, a, b)
}
