package runpodsim_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// Other customers' load takes free GPUs but never one a pod holds, and
// GPUs a pod releases are free again.
func TestSetBusy(t *testing.T) {
	h := healthyHost("h1")
	h.GPUCount = 4
	s := newSim(t, runpodsim.WithMarket(smallMarket(h)))
	p := s.mustCreate(podRequest("mine", a40)) // holds 1 of 4

	tests := []struct {
		busy       int
		wantCreate int // status of the next create
	}{
		{busy: 3, wantCreate: http.StatusBadRequest},  // 4 − 3 − 1 held: none free
		{busy: 10, wantCreate: http.StatusBadRequest}, // more than the machine: still never the held one
		{busy: 1, wantCreate: http.StatusCreated},
	}
	for _, tc := range tests {
		assert.NilError(t, s.server.SetBusy(map[string]int{"h1": tc.busy}))
		r, created := s.create(podRequest("next", a40))
		assert.Equal(t, r.status, tc.wantCreate, "busy %d: %s", tc.busy, r.body)
		if created.ID != "" {
			assert.Equal(t, s.do(http.MethodDelete, "/v2/pods/"+created.ID, nil).status, http.StatusNoContent)
		}
	}
	assert.NilError(t, s.server.SetBusy(map[string]int{"h1": 3}))
	assert.Equal(t, s.do(http.MethodDelete, "/v2/pods/"+p.ID, nil).status, http.StatusNoContent)
	s.mustCreate(podRequest("after-release", a40)) // the released GPU is free again

	assert.ErrorContains(t, s.server.SetBusy(map[string]int{"nope": 1}), `host "nope" is not in the market`)
	assert.ErrorContains(t, s.server.SetBusy(map[string]int{"h1": -1}), "must not be negative")
}

func TestSetPriceAndBilledFromCreation(t *testing.T) {
	s := newSim(t, runpodsim.WithMarket(smallMarket(healthyHost("h1"), healthyHost("h2"))))
	assert.NilError(t, s.server.SetPrice(a40, 0.72, 0.36))
	p := s.mustCreate(podRequest("priced", a40))
	assert.NilError(t, s.server.SetPrice(a40, 9, 9)) // later changes do not reach a created pod
	s.advance(bootTime + 100*time.Second)
	assert.Equal(t, s.do(http.MethodDelete, "/v2/pods/"+p.ID, nil).status, http.StatusNoContent)
	s.advance(time.Hour)

	info, err := s.server.Pod(p.ID)
	assert.NilError(t, err)
	assert.Equal(t, info.HourlyPrice, 0.72)
	assert.Equal(t, info.DataCenterID, "US-KS-2")
	secs, usd := info.BilledFromCreation(s.clock.Now())
	assert.Equal(t, secs, int64((bootTime + 100*time.Second).Seconds()), "creation to deletion, boot included")
	assert.Check(t, is.Equal(usd, float64(secs)*0.72/3600))
	bill, err := s.server.Bill(p.ID)
	assert.NilError(t, err)
	assert.Check(t, bill.Seconds < secs, "the container-time bill leaves the boot out")

	_, err = s.server.Pod("missing")
	assert.Check(t, errors.Is(err, runpodsim.ErrUnknownPod))
	assert.ErrorContains(t, s.server.SetPrice("nope", 1, 1), `GPU type "nope" is not in the market`)
	assert.ErrorContains(t, s.server.SetPrice(a40, -1, 1), "must not be negative")
}
