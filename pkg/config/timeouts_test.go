package config

import (
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// The provision job's timeouts count every tier in turn: two tiers at the
// defaults take twice one's candidates (2 × 6 × (420 s + 4 min) + 10 min =
// 142 minutes), past the 70 the lane once gave every configuration.
func TestProvisionMinutesFollowTheConfiguration(t *testing.T) {
	tests := []struct {
		name      string
		mutate    func(c *Config)
		step, job int
	}{
		{name: "one pod at the defaults", mutate: func(*Config) {}, step: 76, job: 86},
		{name: "two tiers at the defaults", mutate: func(c *Config) { c.MatrixTiers = []string{"ada", "ampere"} }, step: 142, job: 152},
		{name: "eight attempts of an hour", mutate: func(c *Config) { c.MaxProvisionAttempts, c.StartupTimeoutSeconds = 8, 3600 }, step: 522, job: 532},
		{name: "a second's startup rounds up", mutate: func(c *Config) { c.MaxProvisionAttempts, c.StartupTimeoutSeconds = 1, 1 }, step: 15, job: 25},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := validConfig()
			tc.mutate(c)
			step, job := c.ProvisionMinutes()
			assert.Check(t, is.Equal(step, tc.step))
			assert.Check(t, is.Equal(job, tc.job))
		})
	}
	c := validConfig()
	c.MatrixTiers = []string{"ada", "ampere"}
	step, _ := c.ProvisionMinutes()
	assert.Check(t, step*60 > 2*6*420, "two tiers' candidates fit the step")
}
