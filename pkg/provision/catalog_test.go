package provision

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/plan"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// Which configuration plans per-data-center offers, when the data-center list
// is read, and what a failed read of it costs.
func TestPlanModeAndDataCenterRead(t *testing.T) {
	dcDown := runpodsim.Faults{ServerErrors: []runpodsim.ServerErrorFault{{
		Match: runpodsim.Match{Route: "GET /v2/catalog/datacenters"}, When: runpodsim.Trigger{First: 1000}, Status: 503}}}
	tests := []struct {
		name       string
		mutate     func(*config.Config)
		faults     runpodsim.Faults
		wantFirst  string // the first candidate's table row, from its instance type on
		wantDCRead int
		wantFailed bool
		wantWarn   string
	}{
		{
			name:       "defaults: one candidate per GPU type, RunPod chooses where",
			wantFirst:  "| NVIDIA RTX A4000 x1 secure | 0.25 | any | any |",
			wantDCRead: 0,
		},
		{
			name:       "community on: per-data-center offers, no data-center read needed",
			mutate:     func(c *config.Config) { c.Clouds = []config.Cloud{config.CloudSecure, config.CloudCommunity} },
			wantFirst:  "| NVIDIA RTX A4000 x1 secure | 0.25 | - | US-TX-3 |",
			wantDCRead: 0,
		},
		{
			// The country's data centers come from the catalog filtered by it; the list pins
			// the static candidates to them too, and names their continent.
			name:       "a country code: per-data-center offers",
			mutate:     func(c *config.Config) { c.Regions = []string{"US"} },
			wantFirst:  "| NVIDIA RTX A4000 x1 secure | 0.25 | north_america | US-TX-3 |",
			wantDCRead: 1,
		},
		{
			name:       "a continent and a country mean either",
			mutate:     func(c *config.Config) { c.Regions = []string{"europe", "US"} },
			wantFirst:  "| NVIDIA RTX A4000 x1 secure | 0.25 | north_america | US-TX-3 |",
			wantDCRead: 1,
		},
		{
			name:       "a zone: the data-center list names its continent",
			mutate:     func(c *config.Config) { c.Zones = []string{"US-TX-3"} },
			wantFirst:  "| NVIDIA RTX A4000 x1 secure | 0.25 | north_america | US-TX-3 |",
			wantDCRead: 1,
		},
		{
			name:       "a zone with the data-center list down: still planned live, continent unknown",
			mutate:     func(c *config.Config) { c.Zones = []string{"US-TX-3"} },
			faults:     dcDown,
			wantFirst:  "| NVIDIA RTX A4000 x1 secure | 0.25 | - | US-TX-3 |",
			wantDCRead: 5, // one read, retried by the request policy
			wantWarn:   "data-center list unavailable",
		},
		{
			name:       "a continent with the data-center list down: static fallback",
			mutate:     func(c *config.Config) { c.Regions = []string{"north_america"} },
			faults:     dcDown,
			wantFirst:  "| NVIDIA RTX A4000 x1 secure | unpriced | any | any |",
			wantDCRead: 5,
			wantFailed: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newScenario(t, cloud.Options{Market: market(host("h1", a4000)), Faults: tc.faults}, tc.mutate)
			res, err := s.run(t)
			assert.NilError(t, err)
			assert.Assert(t, len(res.Plan.Candidates) > 0)
			rows := strings.Split(res.Plan.Table(), "\n")
			assert.Check(t, is.Contains(rows[2], tc.wantFirst), res.Plan.Table())
			assert.Check(t, is.Equal(countRoute(s, "GET /v2/catalog/datacenters"), tc.wantDCRead))
			assert.Check(t, is.Equal(res.Plan.CatalogFailed, tc.wantFailed))
			if tc.wantWarn != "" {
				assert.Check(t, is.Contains(strings.Join(res.Warnings, "\n"), tc.wantWarn))
			}
		})
	}
}

// TestOffer: a catalog entry is priced in a cloud only when offered there,
// at that cloud's price; an absent availability is not in stock.
func TestOffer(t *testing.T) {
	both := runpod.GPUType{ID: a4000, Memory: 16, Secure: true, Community: true, Availability: runpod.AvailabilityHigh,
		Price:       runpod.GPUPrice{Secure: 0.25, Community: 0.17},
		DataCenters: []runpod.ResourceAvailability{{ID: "US-TX-3", Availability: runpod.AvailabilityLow}}}
	secureOnly, communityOnly := both, both
	secureOnly.Community, communityOnly.Secure = false, false
	unlisted := both
	unlisted.Availability, unlisted.DataCenters = "", nil
	stock := []plan.DataCenterStock{{ID: "US-TX-3", Availability: "LOW"}}
	for _, tc := range []struct {
		name  string
		g     runpod.GPUType
		cloud config.Cloud
		want  plan.Offer
	}{
		{name: "secure", g: both, cloud: config.CloudSecure,
			want: plan.Offer{GPUID: a4000, MemoryGB: 16, Cloud: "SECURE", PricePerHour: money.PerHour(0.25), Availability: "HIGH", DataCenters: stock}},
		{name: "community", g: both, cloud: config.CloudCommunity,
			want: plan.Offer{GPUID: a4000, MemoryGB: 16, Cloud: "COMMUNITY", PricePerHour: money.PerHour(0.17), Availability: "HIGH", DataCenters: stock}},
		{name: "secure asked, community only", g: communityOnly, cloud: config.CloudSecure,
			want: plan.Offer{GPUID: a4000, MemoryGB: 16, Cloud: "SECURE", Availability: "HIGH", DataCenters: stock}},
		{name: "community asked, secure only", g: secureOnly, cloud: config.CloudCommunity,
			want: plan.Offer{GPUID: a4000, MemoryGB: 16, Cloud: "COMMUNITY", Availability: "HIGH", DataCenters: stock}},
		{name: "availability absent", g: unlisted, cloud: config.CloudSecure,
			want: plan.Offer{GPUID: a4000, MemoryGB: 16, Cloud: "SECURE", PricePerHour: money.PerHour(0.25), Availability: "NONE"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Check(t, is.DeepEqual(offer(tc.g, tc.cloud), tc.want))
		})
	}
}
