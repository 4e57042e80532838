package plan

import (
	"slices"
	"strings"
)

// Ranker reorders a built plan's candidates and narrows their placement from
// evidence the planner does not hold (pkg/reputation's Estimator.Rank). It
// gets the plan's input (for the offers' per-data-center stock) and the
// candidates, within the attempt budget, before they are numbered.
type Ranker func(in Input, candidates []Candidate) []Candidate

// rank applies in.Rank and holds its answer to the planner's boundary: only
// candidates the plan made (no new GPU type, cloud or source, each at most
// once), with their tier and price unchanged, and a placement never wider
// than the plan's: a ranker that names data centers outside a zone
// restriction gets the restriction back.
func (in Input) rank(cands []Candidate) []Candidate {
	if in.Rank == nil || len(cands) == 0 {
		return cands
	}
	given := make([]Candidate, len(cands))
	for i, c := range cands {
		c.DataCenterIDs = slices.Clone(c.DataCenterIDs)
		given[i] = c
	}
	used := make([]bool, len(cands))
	var out []Candidate
	for _, c := range in.Rank(in, slices.Clone(given)) {
		i := match(cands, used, c)
		if i < 0 {
			continue
		}
		used[i] = true
		orig := cands[i]
		dcs := c.DataCenterIDs
		if len(orig.DataCenterIDs) > 0 {
			dcs = slices.DeleteFunc(slices.Clone(dcs), func(id string) bool { return !containsFold(orig.DataCenterIDs, id) })
			if len(dcs) == 0 {
				dcs = slices.Clone(orig.DataCenterIDs)
			}
		}
		orig.DataCenterIDs = uniqueFold(dcs)
		out = append(out, orig)
	}
	return out
}

// match is the unused planned candidate the ranker's c stands for: the same
// GPU type, cloud and source, and, among several (one per data center when
// the plan is per data center), the one whose placement c keeps: its data
// centers all among the planned one's. Without that, the first unused one of
// the type; -1 when none is left.
func match(cands []Candidate, used []bool, c Candidate) int {
	first := -1
	for i, o := range cands {
		if used[i] || o.GPUID != c.GPUID || o.Cloud != c.Cloud || o.Source != c.Source {
			continue
		}
		if first < 0 {
			first = i
		}
		if len(o.DataCenterIDs) > 0 && len(c.DataCenterIDs) > 0 &&
			!slices.ContainsFunc(c.DataCenterIDs, func(id string) bool { return !containsFold(o.DataCenterIDs, id) }) {
			return i
		}
	}
	return first
}

// uniqueFold drops repeated ids (case-insensitively), keeping the first.
func uniqueFold(ids []string) []string {
	var out []string
	for _, id := range ids {
		if !slices.ContainsFunc(out, func(o string) bool { return strings.EqualFold(o, id) }) {
			out = append(out, id)
		}
	}
	return out
}
