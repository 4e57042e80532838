package provision

import (
	"strings"

	"github.com/org/runpod-gpu/pkg/plan"
	"github.com/org/runpod-gpu/pkg/reputation"
)

// ranker builds the plan's ranker from the request's reputation record as
// of now; nil (the seed's plan) without a record or without evidence in it.
func (r *run) ranker() plan.Ranker {
	if r.req.Reputation == nil {
		return nil
	}
	e := reputation.New(*r.req.Reputation, r.now(), reputation.DefaultParams)
	if e.Empty() {
		r.logf("reputation: no evidence yet: candidates in the seed's order")
		return nil
	}
	q := e.Quarantined()
	held := "none"
	if len(q) > 0 {
		held = strings.Join(q, "; ")
	}
	r.logf("reputation: %d observation(s); candidates ranked by expected cost to a working runner, pinned to good data centers; quarantined: %s",
		len(r.req.Reputation.Observations), held)
	return e.Rank
}
