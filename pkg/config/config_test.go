package config

import (
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/plan"
)

// TestRegionsGivenTogetherMeanEither: regions [europe, US] splits into a
// continent and a country that the plan matches as either — a data center in
// Europe or one in the United States — never their (empty) intersection.
func TestRegionsGivenTogetherMeanEither(t *testing.T) {
	c, err := Parse([]byte("gpu_tiers:\n  - name: ampere\n    gpu_ids: [\"NVIDIA RTX A4000\"]\nregions: [europe, US]\n"), "runpod-gpu.yml")
	assert.NilError(t, err)
	continents, countries := c.SplitRegions()
	assert.Check(t, is.DeepEqual(continents, []string{"europe"}))
	assert.Check(t, is.DeepEqual(countries, []string{"US"}))
	for _, dc := range []struct {
		region    string
		inCountry bool
		want      bool
	}{{"EUROPE", false, true}, {"NORTH_AMERICA", true, true}, {"NORTH_AMERICA", false, false}, {"ASIA", false, false}} {
		assert.Check(t, is.Equal(plan.InRegions(continents, countries, dc.region, dc.inCountry), dc.want), "%+v", dc)
	}
}
