package provision

import (
	"context"
	"errors"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// The warm-data volume lives in EU-RO-1; the cheapest GPU (the A4000, $0.25/h)
// is only in US-TX-3, and EU-RO-1 has an A5000 at $0.27/h.
var (
	warmVolume  = runpodsim.NetworkVolume{ID: "agv6w2qcg7", Name: "warm", Size: 50, DataCenter: "EU-RO-1"}
	theirVolume = runpodsim.NetworkVolume{ID: "vol0theirs", Name: "theirs", Size: 50, DataCenter: "EU-RO-1", Account: "another-team"}
)

func inRomania(h *runpodsim.HostProfile) { h.DataCenterID = "EU-RO-1" }

// volumeScenario is a scenario whose market has a second data center,
// EU-RO-1, where hosts given with inRomania stand, and the two volumes.
func volumeScenario(t *testing.T, mutate func(*config.Config), hosts ...runpodsim.HostProfile) *scenario {
	t.Helper()
	return volumeScenarioWith(t, runpodsim.Faults{}, mutate, hosts...)
}

// volumeScenarioWith is volumeScenario with faults.
func volumeScenarioWith(t *testing.T, faults runpodsim.Faults, mutate func(*config.Config), hosts ...runpodsim.HostProfile) *scenario {
	t.Helper()
	m := market(hosts...)
	m.DataCenters = append(m.DataCenters, runpodsim.DataCenter{ID: "EU-RO-1", Name: "EU Romania 1", Region: "EUROPE", CountryCode: "RO",
		NetworkVolumeTypes: []string{"STANDARD"}, Compliance: []string{}})
	return newScenario(t, cloud.Options{Market: m, Faults: faults, RunPodOptions: []runpodsim.Option{runpodsim.WithNetworkVolumes(warmVolume, theirVolume)}}, func(c *config.Config) {
		c.GPUTiers = []config.GPUTier{{Name: "ampere", GPUIDs: []string{a4000, a5000}}}
		c.MaxPriceCandidates, c.MaxProvisionAttempts = 2, 3
		c.NetworkVolume = &config.NetworkVolume{ID: warmVolume.ID}
		if mutate != nil {
			mutate(c)
		}
	})
}

// The plan considers only the volume's data center and says what that costs
// against the cheapest candidate elsewhere; the create request mounts the
// volume at the documented path and tells the job where it is.
func TestNetworkVolumeMountedInItsDataCenter(t *testing.T) {
	s := volumeScenario(t, nil, host("tx", a4000), host("ro", a5000, inRomania))
	res, err := s.run(t)
	assert.NilError(t, err)
	assert.Assert(t, res.Accepted != nil)
	assert.Check(t, is.Equal(res.Accepted.DataCenter, "EU-RO-1"))
	for _, c := range res.Plan.Candidates {
		assert.Check(t, is.DeepEqual(c.DataCenterIDs, []string{"EU-RO-1"}), "%s", c.Name)
	}
	assert.Check(t, is.Contains(s.obs.log(), "network volume agv6w2qcg7 (EU-RO-1): only EU-RO-1 is considered; its cheapest candidate, "+
		"NVIDIA RTX A5000 x1 secure at $0.27/h, costs $0.02/h more than the cheapest elsewhere (NVIDIA RTX A4000 x1 secure in US-TX-3 at $0.25/h)"))
	assert.Check(t, is.Contains(res.Summary(nil), "only EU-RO-1 is considered"), "the job summary's plan says so too")

	pod, err := runpod.New(s.cloud.RunPodURL, cloud.RunPodKey).GetPod(context.Background(), res.Accepted.PodID)
	assert.NilError(t, err)
	assert.Assert(t, pod.Mounts != nil)
	assert.Check(t, is.DeepEqual(pod.Mounts.Network, []runpod.NetworkMount{{VolumeID: warmVolume.ID, Path: config.DefaultNetworkVolumePath}}))
	assert.Check(t, pod.Mounts.Persistent == nil)
	assert.Check(t, is.Equal(pod.Env[NetworkVolumeEnv], config.DefaultNetworkVolumePath))
}

// When the volume's data center has no stock: without_volume plans as if no
// volume were named (the pod lands elsewhere and mounts nothing); wait reads
// the catalog again, creates nothing elsewhere, and gives up after its bound.
func TestNetworkVolumeFallbackWhenOutOfStock(t *testing.T) {
	t.Run("without_volume", func(t *testing.T) {
		s := volumeScenario(t, func(c *config.Config) { c.NetworkVolume.WhenOutOfStock = config.FallbackWithoutVolume }, host("tx", a4000))
		res, err := s.run(t)
		assert.NilError(t, err)
		assert.Assert(t, res.Accepted != nil)
		assert.Check(t, is.Equal(res.Accepted.DataCenter, "US-TX-3"))
		assert.Check(t, is.Contains(s.obs.log(), "no reviewed GPU in stock in EU-RO-1: planned without the volume"))
		pod, err := runpod.New(s.cloud.RunPodURL, cloud.RunPodKey).GetPod(context.Background(), res.Accepted.PodID)
		assert.NilError(t, err)
		assert.Check(t, pod.Mounts == nil || len(pod.Mounts.Network) == 0, "mounts %+v", pod.Mounts)
		_, set := pod.Env[NetworkVolumeEnv]
		assert.Check(t, !set, "the job is not told of a volume it does not have")
	})
	for _, tc := range []struct {
		name   string
		faults runpodsim.Faults
		read   time.Duration // what one read of the catalog takes
	}{
		{name: "wait"},
		// Slow reads put the polls off the minute: the last wait still ends at the limit.
		{name: "wait, each catalog read slow", read: 7 * time.Second, faults: runpodsim.Faults{Slow: []runpodsim.SlowFault{
			{Match: runpodsim.Match{Route: "GET /v2/catalog/gpus"}, When: runpodsim.Trigger{Every: 1}, Delay: 7 * time.Second}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := volumeScenarioWith(t, tc.faults, nil, host("tx", a4000))
			start := s.clock.Now()
			// A wait that never ends is cut a few polls past the limit, so a broken limit fails here instead of hanging.
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s.deps.Observer = &cancelAfterWaits{recorder: s.obs, most: int(VolumeStockWaitLimit/VolumeStockPoll) + 3, cancel: cancel, prefix: "waiting for stock in"}

			_, err := Run(ctx, s.deps, s.req)

			waited := s.clock.Now().Sub(start)
			assert.Check(t, errors.Is(err, ErrExhausted), "got %v", err)
			assert.Check(t, is.ErrorContains(err, "no reviewed GPU in stock in EU-RO-1, the data center of network volume agv6w2qcg7, after waiting "+waited.Round(time.Second).String()))
			assert.Check(t, is.Equal(countRoute(s, "POST /v2/pods"), 0), "nothing created elsewhere")
			// The last wait ends at the limit: only the catalog read after it may follow.
			assert.Check(t, waited >= VolumeStockWaitLimit && waited <= VolumeStockWaitLimit+tc.read, "stopped %s after it began, the limit %s", waited, VolumeStockWaitLimit)
			assert.Check(t, countRoute(s, "GET /v2/catalog/gpus") > 25, "the catalog is read again every minute")
		})
	}
}

// network_volume.path is where the pod mounts the volume and what the job is told.
func TestNetworkVolumeMountedAtItsConfiguredPath(t *testing.T) {
	s := volumeScenario(t, func(c *config.Config) { c.NetworkVolume.Path = "/data/warm" }, host("ro", a5000, inRomania))
	res, err := s.run(t)
	assert.NilError(t, err)
	pod, err := runpod.New(s.cloud.RunPodURL, cloud.RunPodKey).GetPod(context.Background(), res.Accepted.PodID)
	assert.NilError(t, err)
	assert.Assert(t, pod.Mounts != nil)
	assert.Check(t, is.DeepEqual(pod.Mounts.Network, []runpod.NetworkMount{{VolumeID: warmVolume.ID, Path: "/data/warm"}}))
	assert.Check(t, is.Equal(pod.Env[NetworkVolumeEnv], "/data/warm"))
}

// A volume id of another account, or one that does not exist, or a volume
// the zones leave out, stops the run before any create with an error naming
// the key and its value.
func TestNetworkVolumeRefusedBeforeAnyCreate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mutate  func(*config.Config)
		wantErr string
	}{
		{name: "another account's", mutate: func(c *config.Config) { c.NetworkVolume.ID = theirVolume.ID },
			wantErr: `network_volume.id "vol0theirs": the RunPod account of this API key has no network volume with that id`},
		{name: "missing", mutate: func(c *config.Config) { c.NetworkVolume.ID = "nosuchvol1" },
			wantErr: `network_volume.id "nosuchvol1": the RunPod account of this API key has no network volume with that id`},
		{name: "zones leave it out", mutate: func(c *config.Config) { c.Zones = []string{"US-TX-3"} },
			wantErr: `network_volume.id "agv6w2qcg7" is in data center EU-RO-1, and zones US-TX-3 do not include it`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := volumeScenario(t, tc.mutate, host("tx", a4000), host("ro", a5000, inRomania))
			_, err := s.run(t)
			assert.Check(t, errors.Is(err, ErrNetworkVolume), "got %v", err)
			assert.Check(t, is.ErrorContains(err, tc.wantErr))
			assert.Check(t, is.ErrorContains(err, "no pod was created"))
			assert.Check(t, is.Equal(countRoute(s, "POST /v2/pods"), 0))

			// The lane refuses the same way, before its first create.
			_, err = RunLane(context.Background(), s.deps, LaneRequest{Request: s.req})
			assert.Check(t, errors.Is(err, ErrNetworkVolume), "lane: got %v", err)
			assert.Check(t, is.Equal(countRoute(s, "POST /v2/pods"), 0))
		})
	}
}
