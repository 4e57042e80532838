// Package market replays a realistic GPU market on the model-mode simulated
// cloud under a virtual clock and measures provisioning policies side by side:
// what a tested ref costs, how many pods it pays for, what rejected hosts
// waste, how long a runner takes and how often a run ends with no pod.
//
// Every policy runs the real lane (provision.Run against the simulated RunPod
// and GitHub over loopback HTTP) on its own copy of the same market and the
// same workload, so the numbers differ only by policy. Everything is drawn
// from the scenario's seed: the same seed gives the same table.
package market

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// Layout says how bad hosts are spread over the fleet.
type Layout string

// Bad-host layouts.
const (
	// Uniform: each machine is bad on its own, with the scenario's share.
	Uniform Layout = "uniform"
	// Clustered: bad machines come the way real fleets break: a bad driver
	// rollout in one data center and one flaky host model across data
	// centers, topped up with scattered bad machines to the share.
	Clustered Layout = "clustered"
)

// Scenario is one simulated market and workload. The zero value of a field
// takes the default named in its comment.
type Scenario struct {
	Seed uint64
	// PRs is how many pull requests arrive (1000).
	PRs int
	// BadShare is the share of bad machines, 0 to 1 (0.2).
	BadShare float64
	Layout   Layout // Uniform unless set
	// Start is the virtual clock's start (Monday 2 March 2026, 00:00 UTC).
	Start time.Time
}

// DefaultStart is the virtual clock's default start.
var DefaultStart = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)

func (s Scenario) withDefaults() (Scenario, error) {
	if s.PRs == 0 {
		s.PRs = 1000
	}
	if s.BadShare == 0 {
		s.BadShare = 0.2
	}
	if s.Layout == "" {
		s.Layout = Uniform
	}
	if s.Start.IsZero() {
		s.Start = DefaultStart
	}
	switch {
	case s.PRs < 0:
		return s, fmt.Errorf("market: PRs %d: want a positive number of pull requests", s.PRs)
	case s.BadShare < 0 || s.BadShare > 1 || math.IsNaN(s.BadShare):
		return s, fmt.Errorf("market: bad share %v: want a share from 0 to 1", s.BadShare)
	case s.Layout != Uniform && s.Layout != Clustered:
		return s, fmt.Errorf("market: layout %q: want %q or %q", s.Layout, Uniform, Clustered)
	}
	return s, nil
}

// Fault is what is wrong with a bad machine.
type Fault string

// Machine faults. A machine with none is good (it still fails a rare pod).
const (
	FaultNone Fault = ""
	// FaultPTX: a driver build that reports its CUDA level but refuses the
	// tier's PTX (CUDA_ERROR_UNSUPPORTED_PTX_VERSION): every pod fails the proof.
	FaultPTX Fault = "ptx"
	// FaultDeadGPU: the GPU does not run kernels: every pod fails the proof.
	FaultDeadGPU Fault = "dead-gpu"
	// FaultBoot: every pod dies while starting (ERROR).
	FaultBoot Fault = "boot"
	// FaultFlaky: a pod fails the proof with FlakyFailure probability.
	FaultFlaky Fault = "flaky"
)

// Rates of the host model.
const (
	// FlakyFailure is the chance a pod on a flaky machine fails its proof.
	FlakyFailure = 0.6
	// BackgroundFailure is the chance a pod on a good machine fails anyway.
	BackgroundFailure = 0.01
)

// Machine is one simulated host with what the model adds to its profile.
type Machine struct {
	Profile runpodsim.HostProfile
	Fault   Fault
	// PullMedian is the median image pull on this machine: a data center
	// with a warm registry mirror pulls faster than one without.
	PullMedian time.Duration
}

// Fleet is the generated market: the catalog and its machines.
type Fleet struct {
	GPUTypes    []runpodsim.GPUType
	DataCenters []runpodsim.DataCenter
	Machines    []Machine
}

// Market is the runpodsim view of the fleet.
func (f Fleet) Market() runpodsim.Market {
	m := runpodsim.Market{GPUTypes: slices.Clone(f.GPUTypes), DataCenters: slices.Clone(f.DataCenters)}
	for _, h := range f.Machines {
		m.Hosts = append(m.Hosts, h.Profile)
	}
	return m
}

// BadShare is the share of machines with a fault.
func (f Fleet) BadShare() float64 {
	bad := 0
	for _, m := range f.Machines {
		if m.Fault != FaultNone {
			bad++
		}
	}
	return float64(bad) / float64(max(len(f.Machines), 1))
}

// consumer GPU types also rent from the community cloud.
var consumer = map[string]bool{
	"NVIDIA RTX A4000": true, "NVIDIA RTX A5000": true, "NVIDIA GeForce RTX 3090": true,
	"NVIDIA GeForce RTX 4090": true, "NVIDIA RTX A6000": true,
}

// drivers are the CUDA levels fleets run, newest rollouts last.
var drivers = []string{"12.6", "12.8", "12.9", "13.0"}

// NewFleet draws a fleet from the scenario's seed: the default market's GPU
// types and data centers, each type in four to seven data centers with two
// to four machines per cloud, drivers following each data center's rollout
// (a few machines lag), boot and pull medians by data center, then the bad
// machines of the layout.
func NewFleet(s Scenario) (Fleet, error) {
	s, err := s.withDefaults()
	if err != nil {
		return Fleet{}, err
	}
	base := runpodsim.DefaultMarket()
	f := Fleet{GPUTypes: base.GPUTypes, DataCenters: base.DataCenters}
	r := rand.New(rand.NewPCG(s.Seed, 0x6d61726b6574)) // "market"
	rollout := map[string]string{}
	pull := map[string]time.Duration{}
	for _, dc := range f.DataCenters {
		rollout[dc.ID] = drivers[1+r.IntN(len(drivers)-1)]
		pull[dc.ID] = time.Duration(35+r.IntN(50)) * time.Second
	}
	for _, g := range f.GPUTypes {
		dcs := r.Perm(len(f.DataCenters))[:4+r.IntN(4)]
		slices.Sort(dcs)
		for _, di := range dcs {
			dc := f.DataCenters[di].ID
			clouds := []string{runpodsim.Secure}
			if consumer[g.ID] && r.IntN(2) == 0 {
				clouds = append(clouds, runpodsim.Community)
			}
			for _, cloud := range clouds {
				for n, machines := 1, 2+r.IntN(3); n <= machines; n++ {
					driver := rollout[dc]
					if r.Float64() < 0.15 { // a machine that missed the rollout
						driver = drivers[r.IntN(len(drivers))]
					}
					gpus, boot := 8, 35+r.IntN(25)
					if cloud == runpodsim.Community {
						gpus, boot = 2+2*r.IntN(2), 50+r.IntN(30)
					}
					f.Machines = append(f.Machines, Machine{
						Profile: runpodsim.HostProfile{
							ID:           fmt.Sprintf("%s-%s-%s-%d", strings.ToLower(dc), slug(g.ID), strings.ToLower(cloud[:1]), n),
							DataCenterID: dc, GPUTypeID: g.ID, Cloud: cloud, GPUCount: gpus,
							DriverCUDA: driver, BootSeconds: boot, Healthy: true,
						},
						PullMedian: pull[dc],
					})
				}
			}
		}
	}
	switch s.Layout {
	case Uniform:
		scatter(f.Machines, s.BadShare, r)
	case Clustered:
		cluster(f.Machines, s.BadShare, r)
	}
	for i := range f.Machines {
		applyFault(&f.Machines[i])
	}
	return f, nil
}

// scatter makes machines bad one by one until share of them are.
func scatter(ms []Machine, share float64, r *rand.Rand) {
	want := int(math.Round(share * float64(len(ms))))
	kinds := []Fault{FaultPTX, FaultPTX, FaultDeadGPU, FaultBoot, FaultFlaky, FaultFlaky}
	for _, i := range r.Perm(len(ms)) {
		if countBad(ms) >= want {
			return
		}
		if ms[i].Fault == FaultNone {
			ms[i].Fault = kinds[r.IntN(len(kinds))]
		}
	}
}

// cluster puts about half the share into one data center's bad driver
// rollout, most of the rest into one flaky GPU model across data centers,
// and scatters what is left.
func cluster(ms []Machine, share float64, r *rand.Rand) {
	want := int(math.Round(share * float64(len(ms))))
	byDC, byGPU := map[string][]int{}, map[string][]int{}
	for i, m := range ms {
		byDC[m.Profile.DataCenterID] = append(byDC[m.Profile.DataCenterID], i)
		byGPU[m.Profile.GPUTypeID] = append(byGPU[m.Profile.GPUTypeID], i)
	}
	dc := closest(byDC, want/2)
	for _, i := range byDC[dc] {
		ms[i].Fault = FaultPTX
	}
	gpu := closest(byGPU, (want-countBad(ms))*3/4)
	for _, i := range byGPU[gpu] {
		if ms[i].Fault == FaultNone && countBad(ms) < want {
			ms[i].Fault = FaultFlaky
		}
	}
	scatter(ms, share, r)
}

// closest returns the key whose group size is nearest n (ties: smallest key).
func closest(groups map[string][]int, n int) string {
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	best, gap := "", math.MaxInt
	for _, k := range keys {
		if d := abs(len(groups[k]) - n); d < gap {
			best, gap = k, d
		}
	}
	return best
}

func abs(n int) int { return max(n, -n) }

func countBad(ms []Machine) int {
	n := 0
	for _, m := range ms {
		if m.Fault != FaultNone {
			n++
		}
	}
	return n
}

// applyFault writes a machine's fault into the profile the simulated RunPod
// and the proof model read.
func applyFault(m *Machine) {
	switch m.Fault {
	case FaultPTX:
		m.Profile.MaxPTXISA = "7.8" // loads neither tier's PTX (8.5, 8.7)
	case FaultDeadGPU:
		m.Profile.Healthy = false
	case FaultBoot:
		m.Profile.DiesDuringBoot = true
	}
}

// slug shortens a GPU id for machine ids: "NVIDIA GeForce RTX 3090" → "rtx-3090".
func slug(gpuID string) string {
	s := strings.ToLower(gpuID)
	for _, prefix := range []string{"nvidia ", "geforce "} {
		s = strings.TrimPrefix(s, prefix)
	}
	return strings.NewReplacer(" ", "-", "_", "-").Replace(s)
}
