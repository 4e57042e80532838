package market

import (
	"github.com/org/runpod-gpu/pkg/config"
)

// Policy is one way of renting GPUs, expressed as the lane's configuration.
type Policy struct {
	Name string
	// Summary says in a few words what the policy does, for the report.
	Summary string
	// Configure turns the default configuration into the policy's.
	Configure func(*config.Config)
	// Reputation makes the lane rank and pin candidates, and screen
	// machines, by the reputation record the daily cost history published
	// from the policy's own earlier runs (see pkg/reputation and evidence).
	Reputation bool
}

// The reviewed allowlist every lane policy shares: three tiers from 24 GB
// consumer cards to data-center GPUs.
var laneTiers = []config.GPUTier{
	{Name: "ampere", GPUIDs: []string{"NVIDIA RTX A5000", "NVIDIA GeForce RTX 3090", "NVIDIA RTX A6000", "NVIDIA A40"}},
	{Name: "ada", GPUIDs: []string{"NVIDIA L4", "NVIDIA GeForce RTX 4090", "NVIDIA RTX 6000 Ada Generation", "NVIDIA L40S"}},
	{Name: "datacenter", GPUIDs: []string{"NVIDIA A100 80GB PCIe", "NVIDIA H100 PCIe", "NVIDIA H100 80GB HBM3"}},
}

// premiumGPU is what a team that does not want to think about GPUs rents.
const premiumGPU = "NVIDIA H100 80GB HBM3"

// Policies are the policies a report compares, in its order.
func Policies() []Policy {
	return []Policy{
		{
			Name: "premium", Summary: "always one H100 SXM (secure cloud), RunPod places it",
			Configure: func(c *config.Config) {
				c.GPUTiers = []config.GPUTier{{Name: "premium", GPUIDs: []string{premiumGPU}}}
				c.MaxPriceCandidates, c.MaxProvisionAttempts = 1, 2
				c.MaxConsecutiveStartupFailures = 1
			},
		},
		{
			Name: "seed", Summary: "the seed's: secure cloud, cheapest type first, a static slot per tier, stop after 2 startup failures",
			Configure: func(c *config.Config) { c.GPUTiers = laneTiers },
		},
		{
			Name: "lane", Summary: "the lane today: the seed's order with secure and community offers competing on price",
			Configure: func(c *config.Config) {
				c.GPUTiers = laneTiers
				c.Clouds = []config.Cloud{config.CloudSecure, config.CloudCommunity}
			},
		},
		{
			Name: "reputation", Summary: "the lane with the daily reputation record: ranked by expected cost, pinned to good data centers, repeated failures quarantined, pods on machines held bad deleted before their proof",
			Configure: func(c *config.Config) {
				c.GPUTiers = laneTiers
				c.Clouds = []config.Cloud{config.CloudSecure, config.CloudCommunity}
			},
			Reputation: true,
		},
	}
}

// SecurePolicies are the policies restricted to the secure cloud, where the
// seed's policy rents: the reputation policy's gain there is its own, not
// the community cloud's lower prices. (The plain lane restricted to the
// secure cloud is the seed's policy, so it is not listed twice.)
func SecurePolicies() []Policy {
	var out []Policy
	for _, p := range Policies() {
		switch p.Name {
		case "seed":
			out = append(out, p)
		case "reputation":
			p.Summary = "the reputation policy restricted to the secure cloud"
			p.Configure = func(c *config.Config) { c.GPUTiers = laneTiers }
			out = append(out, p)
		}
	}
	return out
}
