package plan

import (
	"fmt"
	"sort"
	"strings"

	"github.com/org/runpod-gpu/pkg/money"
)

// DCOffer is one data center's stock of one GPU type in one cloud: the unit
// a developer (and a zone-pinned lane) chooses and pays for: an offer.
type DCOffer struct {
	GPUID        string     `json:"gpu_id"`
	GPUCount     int        `json:"gpu_count"`
	Cloud        string     `json:"cloud"` // SECURE or COMMUNITY
	MemoryGB     int        `json:"memory_gb"`
	DataCenterID string     `json:"zone"`   // e.g. EU-RO-1
	Region       string     `json:"region"` // continent, lower case, e.g. europe; "" when unknown
	PricePerHour money.Rate `json:"price_per_hour"`
	Availability string     `json:"availability"` // LOW, MEDIUM or HIGH
}

// InstanceType names the offer "<GPU id> x<count> <tier>",
// e.g. "NVIDIA GeForce RTX 4090 x1 community".
func (o DCOffer) InstanceType() string {
	return fmt.Sprintf("%s x%d %s", o.GPUID, o.GPUCount, strings.ToLower(o.Cloud))
}

// DCFilter restricts per-data-center offers. Empty fields do not restrict.
type DCFilter struct {
	GPUIDs []string // exact ids; order breaks price ties
	// Continents are lower-case region names (europe, north_america);
	// DataCenterRegions maps a data-center id to its region enum (EUROPE).
	// Countries are ISO 3166-1 codes (US) and CountryDataCenters the data
	// centers in them. A data center on a listed continent or in a listed
	// country is in (see InRegions).
	Continents         []string
	DataCenterRegions  map[string]string
	Countries          []string
	CountryDataCenters map[string]bool
	Zones              []string // exact data-center ids
	MinVRAMGB          int
}

// InRegions reports whether a data center on continent region (the catalog's
// enum, e.g. EUROPE) is in the places: on one of the continents, or in one of
// the countries (inCountry: the catalog filtered by those countries listed
// it — the data-center list names no country). Places given together mean
// either: "europe" and "US" is Europe and the United States, not their
// (empty) intersection. No places at all mean anywhere.
func InRegions(continents, countries []string, region string, inCountry bool) bool {
	if len(continents) == 0 && len(countries) == 0 {
		return true
	}
	return (region != "" && containsFold(continents, region)) || (len(countries) > 0 && inCountry)
}

// DataCenterOffers expands catalog offers (one per GPU type and cloud, read
// with the GPU count) into one offer per data center that has the type in
// stock, priced for count GPUs, cheapest first: secure and community compete
// on price; ties go to secure, then to the filter's GPU order, then to the
// data-center id, so the order is stable.
func DataCenterOffers(offers []Offer, count int, f DCFilter) []DCOffer {
	count = max(count, 1)
	rank := map[string]int{}
	for i, id := range f.GPUIDs {
		if _, dup := rank[id]; !dup {
			rank[id] = i
		}
	}
	var out []DCOffer
	for _, o := range offers {
		if _, wanted := rank[o.GPUID]; len(f.GPUIDs) > 0 && !wanted {
			continue
		}
		if o.PricePerHour <= 0 || o.MemoryGB < f.MinVRAMGB {
			continue
		}
		for _, dc := range o.DataCenters {
			region := strings.ToLower(f.DataCenterRegions[dc.ID])
			switch {
			case !inStock(dc.Availability):
				continue
			case len(f.Zones) > 0 && !containsFold(f.Zones, dc.ID):
				continue
			case !InRegions(f.Continents, f.Countries, region, f.CountryDataCenters[dc.ID]):
				continue
			}
			out = append(out, DCOffer{
				GPUID: o.GPUID, GPUCount: count, Cloud: strings.ToUpper(o.Cloud), MemoryGB: o.MemoryGB,
				DataCenterID: dc.ID, Region: region, PricePerHour: o.PricePerHour * money.Rate(count),
				Availability: strings.ToUpper(dc.Availability),
			})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		switch {
		case a.PricePerHour != b.PricePerHour:
			return a.PricePerHour < b.PricePerHour
		case a.Cloud != b.Cloud:
			return a.Cloud == CloudSecure
		case rank[a.GPUID] != rank[b.GPUID]:
			return rank[a.GPUID] < rank[b.GPUID]
		case a.GPUID != b.GPUID:
			return a.GPUID < b.GPUID
		}
		return a.DataCenterID < b.DataCenterID
	})
	return out
}

// inStock reports whether a catalog level says there is stock: LOW, MEDIUM
// or HIGH. NONE, an absent level and an unknown one are not stock.
func inStock(level string) bool {
	switch strings.ToUpper(level) {
	case "LOW", "MEDIUM", "HIGH":
		return true
	}
	return false
}
