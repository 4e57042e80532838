package lanes

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
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
		h := testHost(id, harness.A4000, healthy)
		h.DataCenterID, h.Cloud = dc, cloud
		return h
	}
	cheapA5000 := testHost("us-a5000", harness.A5000, true)
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
	res := harness.RunStep(t, s.ProvisionStep(s.openPR(t)))
	assert.Equal(t, res.ExitCode, 0, res.Stdout)
	assert.Equal(t, res.Outputs["gpu-type"], harness.A4000)
	assert.Equal(t, res.Outputs["attempts"], "2")
	assert.Equal(t, res.Outputs["price-per-hour"], "0.25", "the secure list price")

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
	assert.Equal(t, live[0].ID, res.Outputs["pod-id"])

	// The plan names its offers: instance type, continent, zone.
	log := harness.WithoutMasks(res.Stdout)
	assert.Check(t, is.Contains(log, "| live-1 | ampere | NVIDIA RTX A4000 x1 community | 0.17 | europe | EU-RO-1 |"))
	assert.Check(t, is.Contains(log, "| live-2 | ampere | NVIDIA RTX A4000 x1 secure | 0.25 | europe | EU-RO-1 |"))
	// The A5000 has community machines only, and none in the zone: a static
	// candidate in the zone, unpriced in the secure cloud (not at the community price).
	assert.Check(t, is.Contains(log, "| static-ampere-1 | ampere | NVIDIA RTX A5000 x1 secure | unpriced | europe | EU-RO-1 |"))
	assert.Check(t, !strings.Contains(log, "US-TX-3") && !strings.Contains(log, "EU-SE-1"), "no offer outside the zone is planned")
	assert.Check(t, is.Contains(res.Summary, "| instance type | $/h | region | zone |"))

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

// driverHost is a healthy host of gpu whose driver reports cuda, with gpus GPUs.
func driverHost(id, gpu, cuda string, gpus int) runpodsim.HostProfile {
	h := testHost(id, gpu, true)
	h.DriverCUDA, h.GPUCount = cuda, gpus
	return h
}

// TestProvisionCatalogAsksForTheCUDAFloor: the catalog is read with
// min_cuda_version (12.6 by default) as minCudaVersion, so a GPU type in stock
// only on older drivers is out of stock for the plan and no create is spent
// on it: the cheapest type that meets the floor is the first and only create.
func TestProvisionCatalogAsksForTheCUDAFloor(t *testing.T) {
	t.Parallel()
	s := startCloud(t, testMarket(
		driverHost("old1", harness.A4000, "12.4", 8), driverHost("old2", harness.A4000, "12.4", 8), // cheapest, below the floor
		driverHost("new", harness.A5000, "12.8", 1),
	), runpodsim.Faults{}, fastConfig)
	res := harness.RunStep(t, s.ProvisionStep(s.openPR(t)))
	assert.Equal(t, res.ExitCode, 0, res.Stdout)
	assert.Check(t, is.Equal(res.Outputs["gpu-type"], harness.A5000))
	assert.Check(t, is.Len(requestsOn(s, createRoute), 1), "a create was spent on a GPU type whose machines are all below the CUDA floor:\n%s", res.Summary)
	assert.Check(t, is.Equal(res.Outputs["attempts"], "1"))
	assertNoSecrets(t, s, res)
}

// TestProvisionCreateAsksForTheCUDAFloor: every create carries the floor as
// gpu.minCudaVersion, so RunPod places the pod only on a machine that meets
// it, even when most machines of that GPU type run an older driver.
func TestProvisionCreateAsksForTheCUDAFloor(t *testing.T) {
	t.Parallel()
	s := startCloud(t, testMarket(
		driverHost("old1", harness.A4000, "12.4", 8), driverHost("old2", harness.A4000, "12.4", 8), driverHost("old3", harness.A4000, "12.4", 8),
		driverHost("new", harness.A4000, "12.8", 1), // the one A4000 machine that meets the floor
		driverHost("h2", harness.A5000, "12.8", 1),
	), runpodsim.Faults{}, fastConfig)
	res := harness.RunStep(t, s.ProvisionStep(s.openPR(t)))
	assert.Equal(t, res.ExitCode, 0, res.Stdout)
	assert.Check(t, is.Equal(res.Outputs["gpu-type"], harness.A4000))
	meetsFloor := map[string]bool{"new": true, "h2": true}
	pods := s.RunPod.Pods()
	assert.Assert(t, len(pods) > 0)
	for _, p := range pods {
		assert.Check(t, meetsFloor[p.HostID], "pod %s (%s) was placed on %s, whose driver (12.4) is below min_cuda_version 12.6", p.ID, p.GPUTypeID, p.HostID)
	}
	assert.Check(t, is.Len(requestsOn(s, createRoute), 1))
	assertNoSecrets(t, s, res)
}
