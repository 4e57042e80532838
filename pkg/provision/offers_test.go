package provision

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/config"
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
			name:       "a country code: per-data-center offers",
			mutate:     func(c *config.Config) { c.Regions = []string{"US"} },
			wantFirst:  "| NVIDIA RTX A4000 x1 secure | 0.25 | - | US-TX-3 |",
			wantDCRead: 0,
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
