// Package market replays a realistic GPU market on the model-mode simulated
// cloud under a virtual clock and measures provisioning policies side by side:
// what a tested ref costs, how many pods it pays for, what rejected hosts
// waste, how long a runner takes and how often a run ends with no pod.
//
// Every policy runs the real lane (provision.Run with the real clients
// against the simulated RunPod and GitHub handlers, in process, each request
// taking APILatency of virtual time) on its own copy of the same market and
// the same workload, so the numbers differ only by policy. Each pushed ref's
// lane starts when its push arrives and runs beside the lanes still running,
// as the shipped lanes of different trees do (see scheduler). The reputation
// policy learns only as the lane can: from the record the daily cost history
// publishes (see RecordPublished), read each run. Everything is drawn from
// the scenario's seed: the same seed gives the same table.
package market

import (
	"cmp"
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
	// Uniform: the scenario's share of each GPU type's machines is bad,
	// drawn machine by machine.
	Uniform Layout = "uniform"
	// Clustered: bad machines come the way real fleets break: a bad driver
	// rollout in one data center and one flaky host model across data
	// centers, where a cost-driven lane rents (see cluster), topped up with
	// scattered bad machines to the share.
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
	// Start is when the measured workload starts (Monday 2 March 2026,
	// 00:00 UTC).
	Start time.Time
	// WarmUp is how long the market runs before Start, under the same
	// workload process and the same policy, without being counted (72 h;
	// negative: none): the measured days are the lane's steady state, with
	// the cost history's daily reputation records already written, not its
	// first day and a quarter without one.
	WarmUp time.Duration
	// InstantRecord lets the reputation policy learn from every attempt the
	// moment it ends, instead of from the record the daily cost history
	// publishes (see RecordPublished): the upper bound of what learning
	// sooner could give, for comparison only.
	InstantRecord bool
	// NoMachines leaves the machine out of the reputation records, as in
	// records written before attempts carried it: reputation per data
	// center only, for comparison.
	NoMachines bool
}

// DefaultStart is the measured workload's default start.
var DefaultStart = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)

// DefaultWarmUp is the default warm-up before Start.
const DefaultWarmUp = 72 * time.Hour

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
	case s.WarmUp == 0:
		s.WarmUp = DefaultWarmUp
	case s.WarmUp < 0:
		s.WarmUp = 0
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
		cluster(f.Machines, f, s.BadShare, r)
	}
	for i := range f.Machines {
		applyFault(&f.Machines[i])
	}
	return f, nil
}

// scatter makes machines bad one by one, GPU type by GPU type (in each
// cloud), until share of each one's machines are: evenly spread, so no type
// is spared by luck.
func scatter(ms []Machine, share float64, r *rand.Rand) {
	kinds := []Fault{FaultPTX, FaultPTX, FaultDeadGPU, FaultBoot, FaultFlaky, FaultFlaky}
	for _, idx := range groups(ms, func(m Machine) string { return m.Profile.GPUTypeID + "|" + m.Profile.Cloud }) {
		want := int(math.Round(share * float64(len(idx))))
		bad := 0
		for _, i := range idx {
			if ms[i].Fault != FaultNone {
				bad++
			}
		}
		for _, j := range r.Perm(len(idx)) {
			if bad >= want {
				break
			}
			if i := idx[j]; ms[i].Fault == FaultNone {
				ms[i].Fault = kinds[r.IntN(len(kinds))]
				bad++
			}
		}
	}
}

// cluster breaks machines where a cost-driven lane rents, since a cluster
// it never touches measures nothing: a bad driver rollout (PTX refused) in
// one data center that hosts the cheapest reviewed GPU types, and one flaky
// host model among the four cheapest reviewed types, in every data center.
// Both stop at the share; what is left of it goes to random machines.
func cluster(ms []Machine, f Fleet, share float64, r *rand.Rand) {
	cheap := reviewedByPrice(f)
	// The rollout's data center is drawn weighted by its machines of the two
	// cheapest reviewed types, so it is likely one the lane rents from.
	var dcs []string
	for _, m := range ms {
		if slices.Contains(cheap[:min(2, len(cheap))], m.Profile.GPUTypeID) {
			dcs = append(dcs, m.Profile.DataCenterID)
		}
	}
	slices.Sort(dcs)
	rollout := dcs[r.IntN(len(dcs))]
	flaky := cheap[r.IntN(min(4, len(cheap)))]
	want := int(math.Round(share * float64(len(ms))))
	bad := 0
	for i, m := range ms {
		if m.Profile.DataCenterID == rollout {
			ms[i].Fault = FaultPTX
			bad++
		}
	}
	for _, i := range r.Perm(len(ms)) {
		if bad < want && ms[i].Fault == FaultNone && ms[i].Profile.GPUTypeID == flaky {
			ms[i].Fault = FaultFlaky
			bad++
		}
	}
	for _, i := range r.Perm(len(ms)) {
		if bad < want && ms[i].Fault == FaultNone {
			ms[i].Fault = FaultFlaky
			bad++
		}
	}
}

// reviewedByPrice lists the lane's reviewed GPU types of the fleet,
// cheapest first (by the cheaper of their list prices).
func reviewedByPrice(f Fleet) []string {
	price := map[string]float64{}
	for _, g := range f.GPUTypes {
		price[g.ID] = g.SecurePrice
		if consumer[g.ID] && g.CommunityPrice > 0 {
			price[g.ID] = min(g.SecurePrice, g.CommunityPrice)
		}
	}
	var ids []string
	for _, t := range laneTiers {
		for _, id := range t.GPUIDs {
			if _, ok := price[id]; ok {
				ids = append(ids, id)
			}
		}
	}
	slices.SortStableFunc(ids, func(a, b string) int { return cmp.Compare(price[a], price[b]) })
	return ids
}

// groups returns the indexes of ms by key, keys in sorted order.
func groups(ms []Machine, key func(Machine) string) [][]int {
	by := map[string][]int{}
	for i, m := range ms {
		by[key(m)] = append(by[key(m)], i)
	}
	keys := make([]string, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([][]int, 0, len(keys))
	for _, k := range keys {
		out = append(out, by[k])
	}
	return out
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
