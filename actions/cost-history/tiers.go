package costhistoryaction

import (
	"context"
	"strings"

	"github.com/org/runpod-gpu/pkg/actionio"
	"github.com/org/runpod-gpu/pkg/actionkit"
	"github.com/org/runpod-gpu/pkg/history"
	"github.com/org/runpod-gpu/pkg/runpod"
)

// tiers reads the configuration's reviewed tiers for the right-sizing
// advice, their memory and price from RunPod's GPU catalog when a key was
// given; nil without config-path.
func tiers(ctx context.Context, io *actionio.IO, in Inputs, rp *runpod.Client) ([]history.TierOffer, error) {
	if strings.TrimSpace(in.ConfigPath) == "" {
		return nil, nil
	}
	cfg, err := actionkit.Config(io, in.ConfigPath)
	if err != nil {
		return nil, err
	}
	if rp == nil {
		io.Infof("right-sizing: without runpod-api-key the reviewed tiers' memory is unknown; the report shows the recorded usage only")
		return history.TierOffers(cfg, nil), nil
	}
	types, err := rp.ListGPUTypes(ctx, runpod.GPUQuery{})
	if err != nil {
		io.Warningf("right-sizing: the GPU catalog is unreadable (%v); the report shows the recorded usage only", err)
		return history.TierOffers(cfg, nil), nil
	}
	return history.TierOffers(cfg, types), nil
}
