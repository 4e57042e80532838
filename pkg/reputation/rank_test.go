package reputation_test

import (
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/plan"
	"github.com/org/runpod-gpu/pkg/reputation"
)

// twoClouds is a lane's per-data-center input with the community cloud:
// the A5000 is cheapest on community hosts in two data centers, then in the
// secure cloud in EU-RO-1; the L4 and H100 tiers are static slots.
func twoClouds() plan.Input {
	in := input()
	stock := func(id string) []plan.DataCenterStock { return []plan.DataCenterStock{{ID: id, Availability: "HIGH"}} }
	in.Offers = []plan.Offer{
		{GPUID: a5000, MemoryGB: 24, Cloud: plan.CloudCommunity, PricePerHour: money.PerHour(0.16), Availability: "HIGH",
			DataCenters: append(stock("US-CA-2"), stock("EU-RO-1")...)},
		{GPUID: a5000, MemoryGB: 24, Cloud: plan.CloudSecure, PricePerHour: money.PerHour(0.27), Availability: "HIGH", DataCenters: stock("EU-RO-1")},
	}
	in.Clouds = []string{plan.CloudSecure, plan.CloudCommunity}
	in.PerDataCenter = true
	return in
}

// instances renders candidates as "name GPU cloud@dc" for the tables below.
func instances(p plan.Plan) []string {
	var out []string
	for _, c := range p.Candidates {
		where := "any"
		if len(c.DataCenterIDs) > 0 {
			where = c.DataCenterIDs[0]
		}
		out = append(out, c.Name+" "+c.InstanceType()+"@"+where)
	}
	return out
}

// Before the record holds any evidence the lane orders as the seed's policy:
// the secure cloud's live offers, the static tier slots, then the community
// offers, however cheap; the plan's own order is the community first.
func TestColdRankPutsTheSeedsCloudFirst(t *testing.T) {
	tests := []struct {
		name string
		rank plan.Ranker
		want []string
	}{
		{name: "no ranker: the plan's order, cheapest first", rank: nil, want: []string{
			"live-1 NVIDIA RTX A5000 x1 community@EU-RO-1", "live-2 NVIDIA RTX A5000 x1 community@US-CA-2",
			"live-3 NVIDIA RTX A5000 x1 secure@EU-RO-1", "static-cheap-1 NVIDIA L4 x1 secure@any", "static-big-1 NVIDIA H100 80GB HBM3 x1 secure@any"}},
		{name: "an empty record: the seed's cloud first", rank: reputation.New(reputation.Record{}, now, reputation.DefaultParams).Rank, want: []string{
			"live-1 NVIDIA RTX A5000 x1 secure@EU-RO-1", "static-cheap-1 NVIDIA L4 x1 secure@any", "static-big-1 NVIDIA H100 80GB HBM3 x1 secure@any",
			"live-4 NVIDIA RTX A5000 x1 community@EU-RO-1", "live-5 NVIDIA RTX A5000 x1 community@US-CA-2"}},
		{name: "ColdRank itself", rank: reputation.ColdRank, want: []string{
			"live-1 NVIDIA RTX A5000 x1 secure@EU-RO-1", "static-cheap-1 NVIDIA L4 x1 secure@any", "static-big-1 NVIDIA H100 80GB HBM3 x1 secure@any",
			"live-4 NVIDIA RTX A5000 x1 community@EU-RO-1", "live-5 NVIDIA RTX A5000 x1 community@US-CA-2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := twoClouds()
			in.Rank = tc.rank
			assert.DeepEqual(t, instances(plan.Build(in)), tc.want)
		})
	}
}

// Two startup failures in a row end a run with no pod, and a GPU type's
// failures go together, so the second try is another type when the plan has
// one: a live one, else a static slot; a quarantined type stays last.
func TestRankTriesAnotherTypeSecond(t *testing.T) {
	h := time.Hour
	good := func(gpu, dc, cloud string) reputation.Observation {
		o := obs(now.Add(-h), gpu, dc, true)
		o.Cloud = cloud
		return o
	}
	tests := []struct {
		name string
		in   func() plan.Input
		obs  []reputation.Observation
		want []string
	}{
		{name: "the A5000 in two data centers, the L4 third: the L4 second", in: func() plan.Input {
			in := input()
			in.PerDataCenter = true
			return in
		}, obs: []reputation.Observation{good(a5000, "EU-RO-1", "SECURE"), good(a5000, "US-TX-3", "SECURE")},
			want: []string{"live-1 NVIDIA RTX A5000 x1 secure@EU-RO-1", "live-2 NVIDIA L4 x1 secure@EU-RO-1",
				"live-3 NVIDIA RTX A5000 x1 secure@US-TX-3", "static-big-1 NVIDIA H100 80GB HBM3 x1 secure@any"}},
		{name: "only A5000 offers live: the first static slot of another type second", in: twoClouds,
			obs: []reputation.Observation{good(a5000, "US-CA-2", "COMMUNITY"), good(a5000, "EU-RO-1", "COMMUNITY")},
			want: []string{"live-1 NVIDIA RTX A5000 x1 community@EU-RO-1", "static-cheap-1 NVIDIA L4 x1 secure@any",
				"live-3 NVIDIA RTX A5000 x1 community@US-CA-2", "live-4 NVIDIA RTX A5000 x1 secure@EU-RO-1",
				"static-big-1 NVIDIA H100 80GB HBM3 x1 secure@any"}},
		{name: "the other type quarantined: it stays last (its data center made doubtful too)", in: func() plan.Input {
			in := input()
			in.PerDataCenter = true
			in.Tiers = in.Tiers[:1]
			return in
		}, obs: []reputation.Observation{good(a5000, "EU-RO-1", "SECURE"), obs(now.Add(-3*h), l4, "EU-RO-1", false), obs(now.Add(-2*h), l4, "EU-RO-1", false)},
			want: []string{"live-1 NVIDIA RTX A5000 x1 secure@US-TX-3", "live-2 NVIDIA RTX A5000 x1 secure@EU-RO-1", "live-3 NVIDIA L4 x1 secure@EU-RO-1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in()
			in.Rank = reputation.New(reputation.Record{Observations: tc.obs}, now, reputation.DefaultParams).Rank
			assert.DeepEqual(t, instances(plan.Build(in)), tc.want)
		})
	}
}
