package plan

import (
	"errors"
	"math"
	"slices"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/money"
)

// volumeOffers: the RTX 4090 is cheapest in the community cloud in US-CA-2,
// the volume's data center (US-KS-2) has it only in the secure cloud, at
// $0.35/h more; the L40S is nowhere in stock in US-KS-2.
var volumeOffers = []Offer{
	{GPUID: rtx4090, MemoryGB: 24, Cloud: CloudSecure, PricePerHour: money.PerHour(0.69), Availability: "HIGH", DataCenters: []DataCenterStock{
		{ID: "US-KS-2", Availability: "HIGH"}, {ID: "EU-RO-1", Availability: "LOW"}}},
	{GPUID: rtx4090, MemoryGB: 24, Cloud: CloudCommunity, PricePerHour: money.PerHour(0.34), Availability: "MEDIUM", DataCenters: []DataCenterStock{
		{ID: "US-CA-2", Availability: "MEDIUM"}}},
	{GPUID: l40s, MemoryGB: 48, Cloud: CloudSecure, PricePerHour: money.PerHour(0.79), Availability: "HIGH", DataCenters: []DataCenterStock{
		{ID: "EU-RO-1", Availability: "HIGH"}, {ID: "US-KS-2", Availability: "NONE"}}},
}

func volumeInput() Input {
	return Input{
		Tiers:  []Tier{{Name: "ada", GPUIDs: []string{rtx4090, l40s}}},
		Offers: volumeOffers, GPUCount: 1, MinVRAMGB: 16, MaxPriceCandidates: 3, MaxAttempts: 6,
		Clouds: []string{CloudSecure, CloudCommunity},
	}
}

// With a network volume the plan considers only its data center, every
// candidate mounts the volume, and the plan says what the restriction costs
// against the cheapest candidate elsewhere.
func TestNetworkVolumePlanRestrictedToItsDataCenter(t *testing.T) {
	p := BuildWithVolume(volumeInput(), Volume{ID: "agv6w2qcg7", DataCenterID: "US-KS-2"})
	assert.Assert(t, len(p.Candidates) > 0)
	for _, c := range p.Candidates {
		assert.Check(t, is.DeepEqual(c.DataCenterIDs, []string{"US-KS-2"}), "%s", c.Name)
		assert.Check(t, is.Equal(c.NetworkVolumeID, "agv6w2qcg7"), "%s", c.Name)
	}
	assert.Check(t, is.Equal(p.Candidates[0].InstanceType(), "NVIDIA GeForce RTX 4090 x1 secure"))
	assert.Check(t, is.Equal(p.Candidates[0].Source, SourceLive))
	assert.Assert(t, p.Volume != nil)
	extra, known := p.Volume.ExtraPerHour()
	assert.Check(t, known)
	assert.Check(t, is.Equal(extra, money.PerHour(0.35)))
	assert.Check(t, is.Equal(p.Volume.String(), "network volume agv6w2qcg7 (US-KS-2): only US-KS-2 is considered; its cheapest candidate, "+
		"NVIDIA GeForce RTX 4090 x1 secure at $0.69/h, costs $0.35/h more than the cheapest elsewhere (NVIDIA GeForce RTX 4090 x1 community in US-CA-2 at $0.34/h)"))

	// The same input without the volume would have planned the cheaper community pod first.
	free := Build(volumeInput())
	assert.Check(t, is.Equal(free.Candidates[0].InstanceType(), "NVIDIA GeForce RTX 4090 x1 community"))
	assert.Check(t, free.Volume == nil)
}

// When the volume's data center has no stock, when_out_of_stock decides:
// wait keeps the plan in the data center (not in stock: the caller waits),
// without_volume plans as if no volume were named, mounting nothing.
func TestNetworkVolumePlanOutOfStock(t *testing.T) {
	in := volumeInput()
	in.Tiers = []Tier{{Name: "big", GPUIDs: []string{l40s}}} // none in stock in US-KS-2

	wait := BuildWithVolume(in, Volume{ID: "agv6w2qcg7", DataCenterID: "US-KS-2"})
	assert.Check(t, !wait.Volume.InStock)
	assert.Check(t, wait.Volume.Mounted)
	for _, c := range wait.Candidates {
		assert.Check(t, is.Equal(c.Source, SourceStatic), "no live candidate without stock")
		assert.Check(t, is.DeepEqual(c.DataCenterIDs, []string{"US-KS-2"}))
	}

	without := BuildWithVolume(in, Volume{ID: "agv6w2qcg7", DataCenterID: "US-KS-2", WithoutVolume: true})
	assert.Check(t, !without.Volume.Mounted)
	assert.Assert(t, len(without.Candidates) > 0)
	assert.Check(t, is.Equal(without.Candidates[0].GPUID, l40s))
	for _, c := range without.Candidates {
		assert.Check(t, is.Equal(c.NetworkVolumeID, ""), "%s mounts nothing", c.Name)
		assert.Check(t, !slices.Equal(c.DataCenterIDs, []string{"US-KS-2"}), "%s is not held to the volume's data center", c.Name)
	}
	assert.Check(t, is.Contains(without.Volume.String(), "planned without the volume"))

	// A catalog failure: static candidates pinned to the data center, mounting it; the cost is unknown.
	in.CatalogErr = errors.New("catalog down")
	failed := BuildWithVolume(in, Volume{ID: "agv6w2qcg7", DataCenterID: "US-KS-2", WithoutVolume: true})
	assert.Check(t, failed.Volume.Mounted)
	assert.Assert(t, len(failed.Candidates) > 0)
	assert.Check(t, is.Equal(failed.Candidates[0].NetworkVolumeID, "agv6w2qcg7"))
	assert.Check(t, is.Contains(failed.Volume.String(), "not known"))
}

func TestNetworkVolumeExcludedByRegionsOrZones(t *testing.T) {
	regions := map[string]string{"US-KS-2": "NORTH_AMERICA", "EU-RO-1": "EUROPE"}
	for _, tc := range []struct {
		name string
		in   Input
		want string
	}{
		{name: "no restriction", in: Input{}},
		{name: "zone includes it", in: Input{Zones: []string{"us-ks-2"}}},
		{name: "zones exclude it", in: Input{Zones: []string{"EU-RO-1"}}, want: "zones EU-RO-1 do not include it"},
		{name: "continent includes it", in: Input{Continents: []string{"north_america"}, DataCenterRegions: regions}},
		{name: "continent excludes it", in: Input{Continents: []string{"europe"}, DataCenterRegions: regions}, want: "regions europe do not include it"},
		{name: "list not read", in: Input{Continents: []string{"europe"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Check(t, is.Equal(VolumeExcluded(tc.in, "US-KS-2"), tc.want))
		})
	}
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }
