package provision

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/plan"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
)

// Warm data on a network volume (config network_volume): before any create
// the volume is read with the run's key — a volume of another account, or a
// missing one, stops the run there — and its data center bounds the plan
// (plan.BuildWithVolume). Every candidate of that plan mounts the volume at
// the configured path, and the job finds the path in NetworkVolumeEnv. When
// the data center has no stock, when_out_of_stock decides: wait (re-read the
// catalog every VolumeStockPoll, up to VolumeStockWaitLimit, creating
// nothing elsewhere) or plan without the volume.

// NetworkVolumeEnv is set in the pod (and so in the GPU job's steps) to the
// network volume's mount path when the pod mounts it; absent, the job
// downloads what it would have read there.
const NetworkVolumeEnv = "RUNPOD_GPU_NETWORK_VOLUME"

// Bounds of the wait for stock in the network volume's data center.
const (
	VolumeStockWaitLimit = 30 * time.Minute
	VolumeStockPoll      = time.Minute
	VolumeReadBudget     = 30 * time.Second // reading the volume before any create
)

// ErrNetworkVolume marks a configured network volume this run cannot use:
// another account's, missing, unreadable, or in a data center the regions
// or zones leave out. Nothing was created.
var ErrNetworkVolume = errors.New("network volume unusable")

// VolumeReader reads a network volume (the runpod client does). It is apart
// from RunPod so that a run without network_volume needs nothing more.
type VolumeReader interface {
	GetNetworkVolume(ctx context.Context, id string) (*runpod.NetworkVolume, error)
}

// resolveVolume reads the configured network volume, or returns nil when
// none is configured. Its errors name the key and the value, and say that no
// pod was created.
func resolveVolume(ctx context.Context, deps Deps, cfg *config.Config) (*plan.Volume, error) {
	nv := cfg.NetworkVolume
	if nv == nil {
		return nil, nil
	}
	reader, ok := deps.RunPod.(VolumeReader)
	if !ok {
		return nil, fmt.Errorf("%w: network_volume.id %q: this RunPod client cannot read network volumes; no pod was created", ErrNetworkVolume, nv.ID)
	}
	rctx, cancel := reqpolicy.Bound(ctx, deps.Policy, VolumeReadBudget)
	defer cancel()
	v, err := reader.GetNetworkVolume(rctx, nv.ID)
	switch {
	case errors.Is(err, runpod.ErrNotFound) || errors.Is(err, runpod.ErrForbidden):
		return nil, fmt.Errorf("%w: network_volume.id %q: the RunPod account of this API key has no network volume with that id "+
			"(missing, deleted, or another account's; GET /v2/network-volumes lists the account's): %v; no pod was created", ErrNetworkVolume, nv.ID, err)
	case err != nil:
		return nil, fmt.Errorf("%w: network_volume.id %q: the volume could not be read: %v; no pod was created", ErrNetworkVolume, nv.ID, err)
	}
	return &plan.Volume{ID: v.ID, DataCenterID: v.DataCenter, WithoutVolume: nv.Fallback() == config.FallbackWithoutVolume}, nil
}

// planWithVolume reads the catalog and builds plans with build (one per
// tier of the lane) for vol: it refuses a data center the regions or zones
// leave out, and with when_out_of_stock: wait reads the catalog again until
// every plan's data center has stock, within VolumeStockWaitLimit.
func (r *run) planWithVolume(ctx context.Context, vol *plan.Volume, build func(plan.Input) []plan.Plan) ([]plan.Plan, error) {
	start := r.now()
	for {
		pctx, cancel := r.bound(ctx, CatalogBudget)
		in := r.planInput(pctx)
		cancel()
		if why := plan.VolumeExcluded(in, vol.DataCenterID); why != "" {
			return nil, fmt.Errorf("%w: network_volume.id %q is in data center %s, and %s: a pod mounts a network volume only in its data center; no pod was created",
				ErrNetworkVolume, vol.ID, vol.DataCenterID, why)
		}
		plans := build(in)
		short := ""
		for _, p := range plans {
			if n := p.Volume; n != nil && n.Mounted && !n.InStock && !n.CatalogFailed {
				short = n.DataCenterID
			}
		}
		if short == "" {
			return plans, nil
		}
		waited := r.now().Sub(start)
		if waited >= VolumeStockWaitLimit {
			return nil, r.fail(ErrExhausted, fmt.Sprintf("no reviewed GPU in stock in %s, the data center of network volume %s, after waiting %s (network_volume.when_out_of_stock: wait); no pod was created",
				short, vol.ID, waited.Round(time.Second)))
		}
		r.logf("waiting for stock in %s (network volume %s, when_out_of_stock: wait): no reviewed GPU in stock there; waited %s of %s",
			short, vol.ID, waited.Round(time.Second), VolumeStockWaitLimit)
		if err := r.deps.Policy.Wait(ctx, min(VolumeStockPoll, VolumeStockWaitLimit-waited), "stock in the network volume's data center"); err != nil {
			return nil, r.fail(ErrStopped, fmt.Sprintf("waiting for stock in %s: %v", short, err))
		}
	}
}

// mountVolume makes a candidate that mounts the network volume mount it, and
// tells the job where.
func (r *run) mountVolume(body *runpod.CreatePodRequest, c plan.Candidate) {
	if c.NetworkVolumeID == "" {
		return
	}
	path := config.DefaultNetworkVolumePath
	if nv := r.cfg.NetworkVolume; nv != nil {
		path = nv.MountPath()
	}
	body.Mounts = &runpod.Mounts{Network: []runpod.NetworkMount{{VolumeID: c.NetworkVolumeID, Path: path}}}
	body.Env[NetworkVolumeEnv] = path
}

// volumeLine is the plan's line about the network volume, "" without one.
func volumeLine(p plan.Plan) string {
	if p.Volume == nil {
		return ""
	}
	return "\n" + p.Volume.String()
}

// planForVolume is a lone run's plan for the configured network volume.
func (r *run) planForVolume(ctx context.Context) (plan.Plan, error) {
	vol, err := resolveVolume(ctx, r.deps, r.cfg)
	if err != nil {
		return plan.Plan{}, err
	}
	plans, err := r.planWithVolume(ctx, vol, func(in plan.Input) []plan.Plan { return []plan.Plan{plan.BuildWithVolume(in, *vol)} })
	if err != nil {
		return plan.Plan{}, err
	}
	return plans[0], nil
}
