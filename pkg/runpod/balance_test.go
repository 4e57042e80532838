package runpod_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// The balance comes from GraphQL's myself query, on the simulator as on RunPod.
func TestGetBalance(t *testing.T) {
	sim, err := runpodsim.New(runpodsim.WithAPIKey("rpa_KEY"), runpodsim.WithBalance(12.5), runpodsim.WithSpendLimit(40))
	assert.NilError(t, err)
	ts := httptest.NewServer(sim)
	defer ts.Close()

	b, err := runpod.New(ts.URL, "rpa_KEY").GetBalance(context.Background())
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(b, runpod.Balance{ClientBalance: 12*money.Dollar + 50*money.Cent, CurrentSpendPerHr: 0, SpendLimit: money.PerHour(40)}))

	_, err = runpod.New(ts.URL, "rpa_WRONG").GetBalance(context.Background())
	assert.Check(t, errors.Is(err, runpod.ErrUnauthorized), "%v", err)
	assert.Check(t, !is.Contains(err.Error(), "rpa_WRONG")().Success(), "the key is never in an error")
}
