package runpodsim_test

import (
	"context"
	"errors"
	"math"
	"net/http"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// volumeMarket is smallMarket with a host in each data center and network
// volumes offered in both.
func volumeMarket() runpodsim.Market {
	ro := healthyHost("ro")
	ro.DataCenterID = "EU-RO-1"
	m := smallMarket(healthyHost("ks"), ro)
	for i := range m.DataCenters {
		m.DataCenters[i].NetworkVolumeTypes = []string{"STANDARD", "HIGH_PERFORMANCE"}
	}
	return m
}

var (
	ownVolume     = runpodsim.NetworkVolume{ID: "vol0warm01", Name: "warm-data", Size: 100, DataCenter: "US-KS-2"}
	foreignVolume = runpodsim.NetworkVolume{ID: "vol0other1", Name: "theirs", Size: 50, DataCenter: "EU-RO-1", Account: "someone-else"}
)

// The network-volume routes answer as the contract says: the account's
// volumes only, 403 for another account's, 404 for a missing one, 422 for a
// body the contract rejects, and a size that only grows.
func TestNetworkVolumeRoutes(t *testing.T) {
	s := newSim(t, runpodsim.WithMarket(volumeMarket()), runpodsim.WithNetworkVolumes(ownVolume, foreignVolume))
	var list struct {
		NetworkVolumes []map[string]any `json:"networkVolumes"`
	}
	s.do(http.MethodGet, "/v2/network-volumes", nil).decode(t, &list)
	assert.Check(t, is.Len(list.NetworkVolumes, 1), "another account's volume is not listed")
	assert.Check(t, is.Equal(list.NetworkVolumes[0]["dataCenter"], "US-KS-2"))

	for _, tc := range []struct {
		method, path string
		body         any
		want         int
	}{
		{http.MethodGet, "/v2/network-volumes/" + ownVolume.ID, nil, http.StatusOK},
		{http.MethodGet, "/v2/network-volumes/" + foreignVolume.ID, nil, http.StatusForbidden},
		{http.MethodGet, "/v2/network-volumes/nosuchvol1", nil, http.StatusNotFound},
		{http.MethodPatch, "/v2/network-volumes/" + ownVolume.ID, map[string]any{"size": 50}, http.StatusBadRequest},
		{http.MethodPatch, "/v2/network-volumes/" + ownVolume.ID, map[string]any{"size": 200}, http.StatusOK},
		{http.MethodPatch, "/v2/network-volumes/" + foreignVolume.ID, map[string]any{"size": 200}, http.StatusForbidden},
		{http.MethodPost, "/v2/network-volumes", map[string]any{"name": "x", "size": 5, "dataCenter": "US-KS-2"}, http.StatusUnprocessableEntity},
		{http.MethodPost, "/v2/network-volumes", map[string]any{"name": "x", "size": 10, "dataCenter": "NOWHERE-1"}, http.StatusBadRequest},
		{http.MethodPost, "/v2/network-volumes", map[string]any{"name": "cache", "size": 10, "dataCenter": "EU-RO-1", "type": "HIGH_PERFORMANCE"}, http.StatusCreated},
		{http.MethodDelete, "/v2/network-volumes/" + foreignVolume.ID, nil, http.StatusForbidden},
	} {
		got := s.do(tc.method, tc.path, tc.body)
		assert.Check(t, is.Equal(got.status, tc.want), "%s %s: %s", tc.method, tc.path, got.body)
	}
	s.do(http.MethodGet, "/v2/network-volumes", nil).decode(t, &list)
	assert.Check(t, is.Len(list.NetworkVolumes, 2), "the created volume is listed")

	client := s.billingClient()
	v, err := client.GetNetworkVolume(context.Background(), ownVolume.ID)
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(*v, runpod.NetworkVolume{ID: ownVolume.ID, Name: "warm-data", Size: 200, DataCenter: "US-KS-2", Type: "STANDARD"}))
	_, err = client.GetNetworkVolume(context.Background(), foreignVolume.ID)
	assert.Check(t, errors.Is(err, runpod.ErrForbidden), "%v", err)
	_, err = client.GetNetworkVolume(context.Background(), "nosuchvol1")
	assert.Check(t, errors.Is(err, runpod.ErrNotFound), "%v", err)
}

// A pod mounting a network volume lands in the volume's data center; one
// asking for another data center, or mounting another account's volume, is
// refused; a mounted volume cannot be deleted.
func TestNetworkVolumeMountPlacesThePodInItsDataCenter(t *testing.T) {
	s := newSim(t, runpodsim.WithMarket(volumeMarket()), runpodsim.WithNetworkVolumes(ownVolume, foreignVolume))
	mounting := func(name, volumeID string, dcs ...string) map[string]any {
		body := podRequest(name, a40)
		body["mounts"] = map[string]any{"network": []map[string]any{{"volumeId": volumeID, "path": "/runpod-volume"}}}
		if len(dcs) > 0 {
			body["dataCenterIds"] = dcs
		}
		return body
	}
	for i := range 2 { // both hosts are free: placement must follow the volume every time
		p := s.mustCreate(mounting("warm-"+string(rune('a'+i)), ownVolume.ID))
		assert.Check(t, is.Equal(p.DataCenterID, "US-KS-2"))
		assert.Check(t, is.Equal(s.do(http.MethodDelete, "/v2/pods/"+p.ID, nil).status, http.StatusNoContent))
	}
	r, _ := s.create(mounting("elsewhere", ownVolume.ID, "EU-RO-1"))
	assert.Check(t, is.Equal(r.status, http.StatusBadRequest))
	assert.Check(t, is.Contains(r.problem(t).Detail, "US-KS-2"))
	r, _ = s.create(mounting("theirs", foreignVolume.ID))
	assert.Check(t, is.Equal(r.status, http.StatusBadRequest))
	assert.Check(t, is.Contains(r.problem(t).Detail, "not found"))

	p := s.mustCreate(mounting("kept", ownVolume.ID))
	assert.Check(t, is.Equal(s.do(http.MethodDelete, "/v2/network-volumes/"+ownVolume.ID, nil).status, http.StatusBadRequest), "mounted by %s", p.ID)
}

// The volume billing route bills storage by the hour from creation, split
// into the buckets asked for, in the contract's shape; another account's
// volume never appears.
func TestNetworkVolumeBilling(t *testing.T) {
	s := newSim(t, runpodsim.WithMarket(volumeMarket()), runpodsim.WithNetworkVolumes(ownVolume, foreignVolume))
	s.advance(36 * time.Hour) // noon of day 1 to midnight of day 3
	records, err := s.billingClient().NetworkVolumeBilling(context.Background(),
		runpod.BillingQuery{Start: billingDay, End: billingDay.AddDate(0, 0, 3)})
	assert.NilError(t, err)
	assert.Assert(t, is.Len(records, 2), "day 1 from noon and day 2 whole")
	hourly := 100 * runpodsim.VolumePricePerGBMonth / 730
	for i, want := range []float64{12 * hourly, 24 * hourly} {
		assert.Check(t, is.Equal(records[i].ID, ownVolume.ID))
		assert.Check(t, math.Abs(records[i].Total-want) < 1e-5, "day %d: %v, want %v", i+1, records[i].Total, want)
		assert.Check(t, is.Equal(records[i].Standard, records[i].Total))
	}
	s.do(http.MethodGet, "/v2/billing/network-volumes?lastN=2&networkVolumeId="+ownVolume.ID, nil)
	s.do(http.MethodGet, "/v2/billing/network-volumes?bucketSize=hour", nil)
}
