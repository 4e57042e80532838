package demo

import (
	mathrand "math/rand/v2"
	"time"

	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// SeedHelp is what the demo's --seed does, for its help text.
const SeedHelp = "scenario seed: 1 plays the README's story (the cheapest host's driver refuses the tier's PTX); " +
	"other seeds vary whether it does, the hosts' boot time, the GPU tests' length and the orphan's age. " +
	"The same seed plays the same scenario"

// scenario is what a seed chooses; everything else (the catalog, the pull
// request, the allowlist) is the same for every seed.
type scenario struct {
	brokenCheapest bool          // the cheapest A4000 host's driver refuses PTX ISA 8.7
	bootSeconds    int           // every host's boot time
	tests          time.Duration // the GPU job's test step
	orphanAge      time.Duration // how long the orphan ran before its run was cancelled
}

// scenarioFor returns seed 1's story, or one drawn from the seed.
func scenarioFor(seed uint64) scenario {
	if seed == 1 {
		return scenario{brokenCheapest: true, bootSeconds: 40, tests: 6*time.Minute + 12*time.Second, orphanAge: 20 * time.Minute}
	}
	r := mathrand.New(mathrand.NewPCG(seed, 0x5eed))
	return scenario{
		brokenCheapest: r.IntN(3) != 0,
		bootSeconds:    20 + r.IntN(71),
		tests:          time.Duration(60+r.IntN(541)) * time.Second,
		orphanAge:      time.Duration(10+r.IntN(31)) * time.Minute,
	}
}

// market is the simulated catalog and its hosts: two same-SKU RTX A4000
// offers are the cheapest, the A5000 is next, the L40S is the fallback tier.
func (s scenario) market() *runpodsim.Market {
	host := func(id, gpu, dc, ptx string) runpodsim.HostProfile {
		return runpodsim.HostProfile{ID: id, DataCenterID: dc, GPUTypeID: gpu, DriverCUDA: "12.8", MaxPTXISA: ptx, BootSeconds: s.bootSeconds, Healthy: true}
	}
	cheapestPTX := "8.7"
	if s.brokenCheapest {
		cheapestPTX = "8.5" // an older driver: it loads PTX up to ISA 8.5
	}
	return &runpodsim.Market{
		GPUTypes: []runpodsim.GPUType{
			{ID: gpuA4000, Name: "RTX A4000", Pool: "AMPERE_16", MemoryGB: 16, SecurePrice: 0.25, CommunityPrice: 0.17, ServerlessPrice: 0.58},
			{ID: gpuA5000, Name: "RTX A5000", MemoryGB: 24, SecurePrice: 0.27, CommunityPrice: 0.16},
			{ID: gpuL40S, Name: "L40S", MemoryGB: 48, SecurePrice: 0.86, CommunityPrice: 0.79},
		},
		DataCenters: []runpodsim.DataCenter{
			{ID: "US-TX-3", Name: "US Texas 3", Region: "NORTH_AMERICA", CountryCode: "US", NetworkVolumeTypes: []string{"STANDARD"}, Compliance: []string{}},
			{ID: "EU-RO-1", Name: "EU Romania 1", Region: "EUROPE", CountryCode: "RO", NetworkVolumeTypes: []string{"STANDARD"}, Compliance: []string{"GDPR"}},
		},
		Hosts: []runpodsim.HostProfile{
			host("tx3-a4000", gpuA4000, "US-TX-3", cheapestPTX),
			host("ro1-a5000", gpuA5000, "EU-RO-1", "8.7"),
			host("tx3-l40s", gpuL40S, "US-TX-3", "8.7"),
		},
	}
}

// gpuSteps are the simulated GPU job's steps and how long each takes.
func (s scenario) gpuSteps() []githubsim.StepSpec {
	return []githubsim.StepSpec{
		{Name: "Set up job", Duration: 4 * time.Second}, {Name: "Checkout tested ref", Duration: 11 * time.Second},
		{Name: "Restore test archive", Duration: 38 * time.Second}, {Name: testStep, Duration: s.tests},
		{Name: "Post checkout", Duration: 2 * time.Second},
	}
}
