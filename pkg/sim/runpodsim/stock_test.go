package runpodsim_test

import (
	"net/http"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// dcStock reads one GPU type's per-data-center availability from the catalog.
func dcStock(t *testing.T, s *sim, cloud string) map[string]string {
	t.Helper()
	var body struct {
		GPUs []struct {
			ID          string
			DataCenters []struct{ ID, Availability string }
		}
	}
	s.do(http.MethodGet, "/v2/catalog/gpus?include=AVAILABILITY&product=POD&cloud="+cloud, nil).decode(t, &body)
	out := map[string]string{}
	for _, g := range body.GPUs {
		for _, dc := range g.DataCenters {
			out[dc.ID] = dc.Availability
		}
	}
	return out
}

func TestStockChangeMakesAnOfferStaleBeforeTheCreate(t *testing.T) {
	eu := healthyHost("eu-1")
	eu.DataCenterID = "EU-RO-1"
	s := newSim(t, runpodsim.WithMarket(smallMarket(healthyHost("us-1"), eu)), runpodsim.WithFaults(runpodsim.Faults{
		StockChanges: []runpodsim.StockChange{{
			Match: runpodsim.Match{Route: "GET /v2/catalog/gpus"}, When: runpodsim.Trigger{Nth: []int{1}},
			DataCenterID: "EU-RO-1", GPUTypeID: a40, Cloud: runpodsim.Secure,
		}},
	}))
	// The first read still shows the stock it then loses; the second does not.
	assert.DeepEqual(t, dcStock(t, s, "SECURE"), map[string]string{"US-KS-2": "LOW", "EU-RO-1": "LOW"})
	assert.DeepEqual(t, dcStock(t, s, "SECURE"), map[string]string{"US-KS-2": "LOW", "EU-RO-1": "NONE"})

	body := podRequest("late", a40)
	body["dataCenterIds"] = []string{"EU-RO-1"}
	r, _ := s.create(body)
	assert.Equal(t, r.status, http.StatusBadRequest, "no capacity: %s", r.body)
	body["dataCenterIds"] = []string{"US-KS-2"}
	r, _ = s.create(body)
	assert.Equal(t, r.status, http.StatusCreated)
}

func TestTakeStockLeavesRunningPodsTheirGPUs(t *testing.T) {
	host := healthyHost("us-1")
	host.GPUCount = 2
	s := newSim(t, runpodsim.WithMarket(smallMarket(host)))
	p := s.mustCreate(podRequest("p1", a40))
	assert.Equal(t, s.server.TakeStock("US-KS-2", a40, ""), 1)
	assert.Equal(t, dcStock(t, s, "SECURE")["US-KS-2"], "NONE")
	// The pod's GPU comes back to the market once it is deleted.
	assert.Equal(t, s.do(http.MethodDelete, "/v2/pods/"+p.ID, nil).status, http.StatusNoContent)
	assert.Equal(t, dcStock(t, s, "SECURE")["US-KS-2"], "LOW")
}
