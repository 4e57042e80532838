package actiontests

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// offersConfig asks for Europe, pins the EU-RO-1 zone and lets the community
// cloud compete: the lane plans one candidate per data center (an offer).
const offersConfig = `gpu_tiers:
  - name: ampere
    gpu_ids: ["NVIDIA RTX A4000", "NVIDIA RTX A5000"]
regions: [europe]
zones: [EU-RO-1]
clouds: [SECURE, COMMUNITY]
max_price_candidates: 3
max_provision_attempts: 4
startup_timeout_seconds: 20
startup_poll_seconds: 1
create_deadline_seconds: 10
`

// offersMarket has the cheapest community machines outside the zone (in the
// US, and in Europe's other data center), a community machine in the zone
// whose GPU fails the proof, and a healthy secure one in the zone.
func offersMarket() *runpodsim.Market {
	host := func(id, dc, cloud string, healthy bool) runpodsim.HostProfile {
		h := testHost(id, a4000, healthy)
		h.DataCenterID, h.Cloud = dc, cloud
		return h
	}
	cheapA5000 := testHost("us-a5000", a5000, true)
	cheapA5000.Cloud = runpodsim.Community
	dc := func(id, name, region, country string) runpodsim.DataCenter {
		return runpodsim.DataCenter{ID: id, Name: name, Region: region, CountryCode: country, NetworkVolumeTypes: []string{"STANDARD"}, Compliance: []string{}}
	}
	m := testMarket(
		host("us-community", "US-TX-3", runpodsim.Community, true),
		host("se-community", "EU-SE-1", runpodsim.Community, true),
		host("ro-community", "EU-RO-1", runpodsim.Community, false),
		host("ro-secure", "EU-RO-1", runpodsim.Secure, true),
		cheapA5000,
	)
	m.DataCenters = append(m.DataCenters, dc("EU-RO-1", "EU Romania 1", "EUROPE", "RO"), dc("EU-SE-1", "EU Sweden 1", "EUROPE", "SE"))
	return m
}

// With regions, a zone and community on, provision plans per-data-center
// offers: the cheaper community offer in the zone is created first, then the
// secure one, and no pod lands outside the zone although cheaper machines
// stand elsewhere.
func TestProvisionOffersPerDataCenter(t *testing.T) {
	t.Parallel()
	s := startCloud(t, offersMarket(), runpodsim.Faults{}, offersConfig)
	res := runStep(t, s.provisionStep(s.openPR(t)))
	assert.Equal(t, res.exitCode, 0, res.stdout)
	assert.Equal(t, res.outputs["gpu-type"], a4000)
	assert.Equal(t, res.outputs["attempts"], "2")
	assert.Equal(t, res.outputs["price-per-hour"], "0.25", "the secure list price")

	type placed struct{ Cloud, Zone, Host string }
	var got []placed
	for _, p := range s.RunPod.Pods() {
		got = append(got, placed{p.Cloud, p.DataCenterID, p.HostID})
	}
	assert.DeepEqual(t, got, []placed{
		{runpodsim.Community, "EU-RO-1", "ro-community"}, // cheapest offer in the zone, tried first
		{runpodsim.Secure, "EU-RO-1", "ro-secure"},
	})
	live := s.livePods(t)
	assert.Assert(t, is.Len(live, 1))
	assert.Equal(t, live[0].ID, res.outputs["pod-id"])

	// The plan names its offers: instance type, continent, zone.
	log := withoutMasks(res.stdout)
	assert.Check(t, is.Contains(log, "| live-1 | ampere | NVIDIA RTX A4000 x1 community | 0.17 | europe | EU-RO-1 |"))
	assert.Check(t, is.Contains(log, "| live-2 | ampere | NVIDIA RTX A4000 x1 secure | 0.25 | europe | EU-RO-1 |"))
	// The A5000 has community machines only, and none in the zone: a static
	// candidate in the zone, unpriced in the secure cloud (not at the community price).
	assert.Check(t, is.Contains(log, "| static-ampere-1 | ampere | NVIDIA RTX A5000 x1 secure | unpriced | europe | EU-RO-1 |"))
	assert.Check(t, !strings.Contains(log, "US-TX-3") && !strings.Contains(log, "EU-SE-1"), "no offer outside the zone is planned")
	assert.Check(t, is.Contains(res.summary, "| instance type | $/h | region | zone |"))

	var catalogReads, dcReads int
	for _, r := range s.RunPod.Requests() {
		switch r.Route {
		case "GET /v2/catalog/gpus":
			catalogReads++
		case "GET /v2/catalog/datacenters":
			dcReads++
		}
	}
	assert.Check(t, is.Equal(catalogReads, 2), "one catalog read per cloud")
	assert.Check(t, is.Equal(dcReads, 1), "one data-center read")
	assertNoSecrets(t, s, res)
	assertCreatesFollowContract(t, s)
}
