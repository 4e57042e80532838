package serverless

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/serverless/jobwire"
)

// TestRunTakesOnlyAnApprovedPayload: Run refuses a request whose payload
// Approve did not approve, before any call (this lane has no clients), and
// takes an approved one as it is, going on to the receipt.
func TestRunTakesOnlyAnApprovedPayload(t *testing.T) {
	l := &Lane{Receipt: filepath.Join(t.TempDir(), "missing.json")}
	_, err := l.Run(context.Background(), RunRequest{Execute: true})
	assert.Check(t, errors.Is(err, ErrNotApproved), "%v", err)

	p := &Payload{SHA256: strings.Repeat("ab", 32)}
	approved, err := Approve(p, p.SHA256)
	assert.NilError(t, err)
	_, err = l.Run(context.Background(), RunRequest{Execute: true, Payload: approved, Output: filepath.Join(t.TempDir(), "out"),
		Input: jobwire.JobInput{TestCommand: "true"}})
	assert.Check(t, !errors.Is(err, ErrNotApproved), "%v", err)
	assert.Check(t, is.ErrorContains(err, "receipt"))
}

// TestErrorsNameNoFlagOrInput: the refusals the CLI and the action share say
// what is missing or wrong, and leave naming a flag or an input to the caller.
func TestErrorsNameNoFlagOrInput(t *testing.T) {
	p := &Payload{SHA256: strings.Repeat("ab", 32)}
	_, notApproved := Approve(p, "")
	_, badURL := TemplateEnv("http://x/w", strings.Repeat("ab", 32), "o/r", "rpg-sls-x")
	_, badSHA := TemplateEnv("https://x/w", "xyz", "o/r", "rpg-sls-x")
	for _, err := range []error{ErrNotExecuted, notApproved, badURL, badSHA} {
		assert.Assert(t, err != nil)
		for _, name := range []string{"--", "approved-payload-sha256", "worker-url", "worker-sha256"} {
			assert.Check(t, !strings.Contains(err.Error(), name), "%q names %q", err, name)
		}
	}
	var bad *ValueError
	assert.Assert(t, errors.As(badURL, &bad))
	assert.Check(t, is.DeepEqual(*bad, ValueError{Name: WorkerURLValue, Value: "http://x/w", Want: "an https URL of the serverless-worker release asset"}))
	assert.Assert(t, errors.As(badSHA, &bad))
	assert.Check(t, is.Equal(bad.Name, WorkerSHA256Value))
}
