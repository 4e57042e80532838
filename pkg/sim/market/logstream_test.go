package market

import (
	"context"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/startup"
)

// policy returns the named policy of Policies.
func policy(t *testing.T, name string) Policy {
	t.Helper()
	for _, p := range Policies() {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no policy %q", name)
	return Policy{}
}

// The replay serves each pod's log stream, so the lane learns machines as
// the shipped one does (its first GPU's UUID, from the startup script's
// line) and screens them: the record holds machines, and pods placed on a
// machine it holds bad are deleted before their proof.
func TestReplayLearnsAndScreensMachines(t *testing.T) {
	s, err := Scenario{Seed: 2, PRs: 60, WarmUp: 24 * time.Hour, InstantRecord: true}.withDefaults()
	assert.NilError(t, err)
	fleet, err := NewFleet(s)
	assert.NilError(t, err)
	uuids := map[string]bool{}
	for _, m := range fleet.Machines {
		uuids[m.Profile.GPUUUID(0)] = true
	}

	sm, err := replay(context.Background(), s, fleet, workload(s), policy(t, "reputation"))
	assert.NilError(t, err)

	machines := map[string]bool{}
	for _, o := range sm.evidence.all {
		if o.Machine != "" {
			assert.Check(t, uuids[o.Machine], "machine %q is no fleet machine's first GPU", o.Machine)
			machines[o.Machine] = true
		}
	}
	assert.Check(t, len(machines) > 10, "the record holds %d machines", len(machines))
	assert.Assert(t, len(sm.screened) > 0, "no pod screened")
	assert.Check(t, is.Equal(sm.res.Screened, len(sm.screened)-countWarm(sm)))
	for _, id := range sm.screened {
		sawGPU := false
		for _, line := range sm.cloud.RunPod.Log(id) {
			switch l := startup.ReadLogLine(line); l.Stage {
			case startup.StageGPU:
				sawGPU = true
			case startup.StageProofPassed, startup.StageExit:
				t.Errorf("pod %s screened after its proof's verdict: %q", id, line)
			}
		}
		assert.Check(t, sawGPU, "pod %s screened before it named its machine", id)
	}
}

// countWarm counts the screened pods of warm-up refs, which no result counts.
func countWarm(sm *sim) int {
	n := 0
	for _, id := range sm.screened {
		if sm.warmPods[id] {
			n++
		}
	}
	return n
}

// With the log streams served, a replay still depends on its seed alone:
// the same scenario gives the same results run alone and run four at a time
// (the goroutines that carry the streams then compete for the machine).
func TestReplayWithLogStreamsIsDeterministic(t *testing.T) {
	scenarios := []Scenario{
		{Seed: 2, PRs: 60, WarmUp: 24 * time.Hour, InstantRecord: true},
		{Seed: 5, PRs: 30, Layout: Clustered, WarmUp: 12 * time.Hour},
	}
	policies := []Policy{policy(t, "lane"), policy(t, "reputation")}
	alone, err := RunAll(context.Background(), scenarios, policies, 1)
	assert.NilError(t, err)
	for range 2 {
		together, err := RunAll(context.Background(), scenarios, policies, 4)
		assert.NilError(t, err)
		assert.DeepEqual(t, together, alone)
	}
	rp := alone[0].Results[1]
	assert.Check(t, rp.Screened > 0, "the reputation policy screened no pod: %+v", rp)
}

// The pacing reads how far a stream got from the event ids the simulated
// RunPod writes ("<time>/<seq>"); anything else reads as none.
func TestLastEventSeq(t *testing.T) {
	for _, tc := range []struct {
		written string
		want    int
	}{
		{"id: 2026-03-02T00:00:01Z/000000000003\ndata: {}\n\nid: 2026-03-02T00:00:02Z/000000000004\ndata: {}\n\n", 4},
		{"id: 2026-03-02T00:00:01Z/000000000012\r\ndata: {}\r\n\r\n", 12},
		{"data: {}\n\n", 0},
		{"id: no-slash\n\n", 0},
		{"id: t/-3\n\n", 0},
		{"", 0},
	} {
		assert.Check(t, is.Equal(lastEventSeq([]byte(tc.written)), tc.want), "%q", tc.written)
	}
}
