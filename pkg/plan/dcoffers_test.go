package plan

import (
	"testing"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/money"
)

func TestDataCenterOffersOnePerDataCenterCheapestFirst(t *testing.T) {
	regions := map[string]string{"US-KS-2": "NORTH_AMERICA", "US-CA-2": "NORTH_AMERICA", "EU-RO-1": "EUROPE", "AP-JP-1": "ASIA"}
	offers := []Offer{
		{GPUID: rtx4090, MemoryGB: 24, Cloud: CloudSecure, PricePerHour: money.PerHour(0.69), Availability: "HIGH", DataCenters: []DataCenterStock{
			{ID: "US-KS-2", Availability: "HIGH"}, {ID: "EU-RO-1", Availability: "LOW"}, {ID: "AP-JP-1", Availability: "NONE"}}},
		{GPUID: rtx4090, MemoryGB: 24, Cloud: CloudCommunity, PricePerHour: money.PerHour(0.34), Availability: "MEDIUM", DataCenters: []DataCenterStock{
			{ID: "US-CA-2", Availability: "MEDIUM"}, {ID: "AP-JP-1", Availability: "LOW"}}},
		{GPUID: l40s, MemoryGB: 48, Cloud: CloudSecure, PricePerHour: money.PerHour(0.34), DataCenters: []DataCenterStock{{ID: "EU-RO-1", Availability: "HIGH"}}},
		{GPUID: a4000, MemoryGB: 16, Cloud: CloudSecure, PricePerHour: money.PerHour(0), DataCenters: []DataCenterStock{{ID: "US-KS-2", Availability: "HIGH"}}}, // no offer in the cloud
	}
	type row struct{ Instance, Zone string }
	for _, tc := range []struct {
		name   string
		filter DCFilter
		count  int
		want   []row
	}{
		{name: "anywhere, secure and community compete; a tie goes to secure", count: 1, want: []row{
			{"NVIDIA L40S x1 secure", "EU-RO-1"},
			{"NVIDIA GeForce RTX 4090 x1 community", "AP-JP-1"},
			{"NVIDIA GeForce RTX 4090 x1 community", "US-CA-2"},
			{"NVIDIA GeForce RTX 4090 x1 secure", "EU-RO-1"},
			{"NVIDIA GeForce RTX 4090 x1 secure", "US-KS-2"},
		}},
		{name: "GPU ids and count", filter: DCFilter{GPUIDs: []string{rtx4090}}, count: 2, want: []row{
			{"NVIDIA GeForce RTX 4090 x2 community", "AP-JP-1"},
			{"NVIDIA GeForce RTX 4090 x2 community", "US-CA-2"},
			{"NVIDIA GeForce RTX 4090 x2 secure", "EU-RO-1"},
			{"NVIDIA GeForce RTX 4090 x2 secure", "US-KS-2"},
		}},
		{name: "continent", filter: DCFilter{GPUIDs: []string{rtx4090}, Continents: []string{"europe"}, DataCenterRegions: regions}, count: 1, want: []row{
			{"NVIDIA GeForce RTX 4090 x1 secure", "EU-RO-1"},
		}},
		// Continents and countries given together mean either: Europe and the United States.
		{name: "a continent and a country", count: 1, filter: DCFilter{GPUIDs: []string{rtx4090}, Continents: []string{"europe"}, DataCenterRegions: regions,
			Countries: []string{"US"}, CountryDataCenters: map[string]bool{"US-KS-2": true, "US-CA-2": true}}, want: []row{
			{"NVIDIA GeForce RTX 4090 x1 community", "US-CA-2"},
			{"NVIDIA GeForce RTX 4090 x1 secure", "EU-RO-1"},
			{"NVIDIA GeForce RTX 4090 x1 secure", "US-KS-2"},
		}},
		{name: "a country alone", count: 1, filter: DCFilter{GPUIDs: []string{rtx4090}, DataCenterRegions: regions,
			Countries: []string{"JP"}, CountryDataCenters: map[string]bool{"AP-JP-1": true}}, want: []row{
			{"NVIDIA GeForce RTX 4090 x1 community", "AP-JP-1"},
		}},
		{name: "zone pins one data center", filter: DCFilter{Zones: []string{"us-ca-2"}}, count: 1, want: []row{
			{"NVIDIA GeForce RTX 4090 x1 community", "US-CA-2"},
		}},
		{name: "VRAM floor", filter: DCFilter{MinVRAMGB: 32}, count: 1, want: []row{{"NVIDIA L40S x1 secure", "EU-RO-1"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []row
			for _, o := range DataCenterOffers(offers, tc.count, tc.filter) {
				got = append(got, row{o.InstanceType(), o.DataCenterID})
				assert.Equal(t, o.PricePerHour > 0, true)
			}
			assert.DeepEqual(t, got, tc.want)
		})
	}
	// The price is per pod: count × the GPU's price.
	two := DataCenterOffers(offers, 2, DCFilter{GPUIDs: []string{rtx4090}, Zones: []string{"US-KS-2"}})
	assert.Equal(t, len(two), 1)
	assert.Equal(t, two[0].PricePerHour, money.PerHour(1.38))
	assert.Equal(t, DataCenterOffers(offers, 1, DCFilter{Continents: []string{"europe"}, DataCenterRegions: regions})[0].Region, "europe")
}

// The VRAM floor admits a GPU with exactly that much memory.
func TestDataCenterOffersVRAMFloorIsInclusive(t *testing.T) {
	offers := []Offer{offer(l40s, 48, CloudSecure, 0.86, "HIGH", "US-KS-2=HIGH"), offer(rtx4090, 24, CloudSecure, 0.69, "HIGH", "US-TX-3=HIGH")}

	got := DataCenterOffers(offers, 1, DCFilter{MinVRAMGB: 48})

	assert.DeepEqual(t, got, []DCOffer{{GPUID: l40s, GPUCount: 1, Cloud: CloudSecure, MemoryGB: 48, DataCenterID: "US-KS-2", PricePerHour: money.PerHour(0.86), Availability: "HIGH"}})
}

// Without a GPU filter every type ranks the same, so a price and cloud tie
// falls to the GPU id, alphabetically: the order stays stable.
func TestDataCenterOffersTieWithoutFilterGoesToTheGPUID(t *testing.T) {
	offers := []Offer{offer(rtx4090, 24, CloudSecure, 0.5, "HIGH", "US-TX-3=HIGH"), offer(l40s, 48, CloudSecure, 0.5, "HIGH", "US-TX-3=HIGH")}

	var got []string
	for _, o := range DataCenterOffers(offers, 1, DCFilter{}) {
		got = append(got, o.GPUID)
	}

	assert.DeepEqual(t, got, []string{rtx4090, l40s}) // "NVIDIA GeForce…" < "NVIDIA L40S"
}

func TestInRegionsMeansEither(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		continents, countries []string
		region                string
		inCountry, want       bool
	}{
		{"no places: anywhere", nil, nil, "ASIA", false, true},
		{"on the continent", []string{"europe"}, []string{"US"}, "EUROPE", false, true},
		{"in the country", []string{"europe"}, []string{"US"}, "NORTH_AMERICA", true, true},
		{"neither", []string{"europe"}, []string{"US"}, "NORTH_AMERICA", false, false},
		{"a country alone", nil, []string{"JP"}, "ASIA", true, true},
		{"a continent alone", []string{"asia"}, nil, "EUROPE", true, false},
	} {
		assert.Equal(t, InRegions(tc.continents, tc.countries, tc.region, tc.inCountry), tc.want, tc.name)
	}
}
