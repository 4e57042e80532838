package chaos

import (
	"fmt"
	"testing"
	"time"

	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// chaosCalmSchedule is a schedule without faults on three healthy hosts.
func chaosCalmSchedule() *chaosSchedule {
	sc := &chaosSchedule{Seed: 1, NeverRegister: map[int]bool{}, DieAfter: map[int]time.Duration{}}
	for i, g := range chaosGPUs {
		sc.Hosts = append(sc.Hosts, runpodsim.HostProfile{ID: fmt.Sprintf("h%d", i+1), DataCenterID: "US-TX-3", GPUTypeID: g.ID, GPUCount: 2,
			DriverCUDA: "12.8", MaxPTXISA: "8.7", BootSeconds: 1, Healthy: true})
	}
	return sc
}

// TestChaosKnownDefects replays, by hand-made schedule, defects the chaos
// suite found (go test ./action-tests/chaos -run TestChaosKnownDefects -v), as
// regression tests once they are fixed.
func TestChaosKnownDefects(t *testing.T) {
	t.Parallel()
	// Provision is cancelled while its create is on the wire; the create lands
	// and RunPod's listing shows the new pod only 5 s later. Provision's
	// reconcile used to list twice in about 2 s and cleanup's tag sweep lists
	// once: neither saw the pod, and it billed until the reaper's next sweep.
	// Provision now lists for its whole reconcile budget after a cancellation.
	t.Run("cancelled-create-hidden-by-listing-lag", func(t *testing.T) {
		sc := chaosCalmSchedule()
		sc.Faults.ListingDelay = 5 * time.Second
		sc.RunPod = chaosProxyPlan{Rate: 1, Kinds: []chaosFault{faultSlow}, Slow: 1500 * time.Millisecond, Only: "POST /v2/pods"}
		sc.Kill, sc.KillAfter = "provision", 700*time.Millisecond
		l := startChaosLane(t, sc)
		l.run()
		l.check()
	})
	// Seed 769: a create's answer is lost, and RunPod answers a read 429 with
	// an hour's Retry-After. Provision's reconciliation could not list, and its
	// last look for the uncertain name, like cleanup's tag sweep, waited on
	// the hour's shared cooldown past its bound and never went out: the pod
	// billed unnamed until the reaper. Both listings now go out at once.
	t.Run("seed-769-lost-create-under-an-hour-cooldown", func(t *testing.T) {
		l := startChaosLane(t, drawSchedule(769))
		l.run()
		l.check()
	})
}
