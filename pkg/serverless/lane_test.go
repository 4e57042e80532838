package serverless

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
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
	_, err = l.Run(context.Background(), RunRequest{Execute: true, Payload: approved})
	assert.Check(t, !errors.Is(err, ErrNotApproved), "%v", err)
	assert.Check(t, is.ErrorContains(err, "receipt"))
}
