package runpod

import (
	"github.com/org/runpod-gpu/pkg/wire"
)

// The live API's deltas from the published OpenAPI snapshot (the simulator's
// contract validator, pkg/sim/contract, applies the same ones), in one place:
//
//  1. CreatePodRequest.Entrypoint and CreatePodRequest.Cmd: pod create takes
//     `entrypoint` and `cmd` string arrays; the snapshot only has `args`.
//  2. GET /v2/pods pages with the query parameters below and answers
//     `nextCursor` (absent, null or "" on the last page). ListPods follows it
//     up to a page bound and treats an exceeded bound as an error.
//  3. Saved v1 pod records (`desiredStatus`, `imageName`, `lastStartedAt` in
//     Go's time layout, `costPerHr` as a string or number,
//     `adjustedCostPerHr`) still decode into Pod; see podV1Fields.

// Query parameters of delta 2 (the contract package names the same ones).
const (
	listPodsLimitParam  = "limit"
	listPodsCursorParam = "cursor"
)

// podV1Fields are the REST v1 names of fields saved v1 records carry (delta 3).
// They fill a Pod's v2 fields only when those are missing.
type podV1Fields struct {
	DesiredStatus     PodStatus   `json:"desiredStatus"`
	ImageName         string      `json:"imageName"`
	LastStartedAt     wire.Time   `json:"lastStartedAt"`
	CostPerHr         wire.Float  `json:"costPerHr"`
	AdjustedCostPerHr *wire.Float `json:"adjustedCostPerHr"`
}

func (v1 podV1Fields) fill(p *Pod) {
	if p.Status == "" {
		p.Status = v1.DesiredStatus
	}
	if p.Image == "" {
		p.Image = v1.ImageName
	}
	if !p.StartedAt.Known() {
		p.StartedAt = v1.LastStartedAt
	}
	// v1 priced a pod by adjustedCostPerHr (after savings plans) when positive,
	// else by costPerHr.
	if p.Cost == 0 {
		p.Cost = v1.CostPerHr
		if v1.AdjustedCostPerHr != nil && *v1.AdjustedCostPerHr > 0 {
			p.Cost = *v1.AdjustedCostPerHr
		}
	}
}
