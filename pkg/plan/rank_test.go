package plan

import (
	"testing"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/money"
)

// The ranker may reorder, pin and drop, but the plan holds it to the
// boundary: no type it did not plan, no candidate twice, no price or tier
// change, no placement outside the zones.
func TestRankerStaysInsideTheBoundary(t *testing.T) {
	base := Input{
		Tiers: reviewed, GPUCount: 1, MaxPriceCandidates: 3, MaxAttempts: 6,
		Offers: []Offer{
			offer(rtx4090, 24, CloudSecure, 0.69, "HIGH", "EU-RO-1=HIGH", "US-KS-2=LOW"),
			offer(a6000, 48, CloudSecure, 0.49, "HIGH", "EU-RO-1=HIGH"),
			offer(a4000, 16, CloudSecure, 0.17, "HIGH", "EU-RO-1=HIGH"),
		},
	}
	tests := []struct {
		name  string
		zones []string
		rank  Ranker
		want  []string // GPU@placement in order
	}{
		{name: "no ranker: the seed's plan", want: []string{a6000 + "@", rtx4090 + "@", l40s + "@", a100 + "@", h100 + "@"}},
		{name: "reorder and pin", rank: func(_ Input, c []Candidate) []Candidate {
			c[0], c[1] = c[1], c[0]
			c[0].DataCenterIDs = []string{"US-KS-2"}
			return c
		}, want: []string{rtx4090 + "@US-KS-2", a6000 + "@", l40s + "@", a100 + "@", h100 + "@"}},
		{name: "an unreviewed type, a duplicate and a repricing are refused", rank: func(_ Input, c []Candidate) []Candidate {
			c[0].PricePerHour, c[0].Tier = money.PerHour(0.01), "free"
			return append([]Candidate{{GPUID: a4000, Cloud: CloudSecure, Source: SourceLive}, c[0]}, c...)
		}, want: []string{a6000 + "@", rtx4090 + "@", l40s + "@", a100 + "@", h100 + "@"}},
		{name: "a placement outside the zones falls back to the zones", zones: []string{"EU-RO-1"},
			rank: func(_ Input, c []Candidate) []Candidate {
				for i := range c {
					c[i].DataCenterIDs = []string{"US-KS-2", "EU-RO-1", "eu-ro-1"}
				}
				c[1].DataCenterIDs = []string{"US-KS-2"}
				return c
			}, want: []string{a6000 + "@EU-RO-1", rtx4090 + "@EU-RO-1", l40s + "@EU-RO-1", a100 + "@EU-RO-1", h100 + "@EU-RO-1"}},
		{name: "dropping is allowed", rank: func(_ Input, c []Candidate) []Candidate { return c[1:2] },
			want: []string{rtx4090 + "@"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := base
			in.Zones, in.Rank = tc.zones, tc.rank
			p := Build(in)
			var got []string
			for i, c := range p.Candidates {
				where := ""
				for j, dc := range c.DataCenterIDs {
					if j > 0 {
						where += ","
					}
					where += dc
				}
				got = append(got, c.GPUID+"@"+where)
				assert.Equal(t, c.N, i+1)
				if c.GPUID == a6000 {
					assert.Equal(t, c.PricePerHour, money.PerHour(0.49))
					assert.Equal(t, c.Tier, "ampere")
				}
			}
			assert.DeepEqual(t, got, tc.want)
		})
	}
}

// A ranker cannot move a planned GPU type to another cloud or source: such a
// candidate is not one the plan made, so it is dropped.
func TestRankerCannotChangeCloudOrSource(t *testing.T) {
	in := Input{
		Tiers: []Tier{{Name: "ada", GPUIDs: []string{rtx4090}}, {Name: "ampere", GPUIDs: []string{a6000}}}, MaxPriceCandidates: 3, MaxAttempts: 4,
		Offers: []Offer{offer(rtx4090, 24, CloudSecure, 0.69, "HIGH")},
	}
	for _, tc := range []struct {
		name string
		edit func(*Candidate)
	}{
		{name: "cloud", edit: func(c *Candidate) { c.Cloud = CloudCommunity }},
		{name: "source", edit: func(c *Candidate) { c.Source = SourceStatic }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in.Rank = func(_ Input, c []Candidate) []Candidate {
				tc.edit(&c[0]) // the live RTX 4090
				return c
			}
			assert.DeepEqual(t, describe(Build(in)), []string{"static-ampere-1 ampere RTX A6000 secure ?"})
		})
	}
}

// A ranker that names one candidate twice gets the next unused candidate of
// the same type, cloud and source (another data center of it), and nothing
// once those run out; never another GPU type.
func TestRankerRepeatTakesTheNextSameCandidate(t *testing.T) {
	in := Input{
		Tiers: []Tier{{Name: "ada", GPUIDs: []string{rtx4090}}, {Name: "ampere", GPUIDs: []string{a6000}}}, MaxPriceCandidates: 5, MaxAttempts: 5,
		Offers: []Offer{
			offer(rtx4090, 24, CloudSecure, 0.69, "HIGH", "EU-RO-1=HIGH", "US-TX-3=HIGH"),
			offer(a6000, 48, CloudSecure, 0.69, "HIGH", "US-KS-2=HIGH"),
		},
		PerDataCenter: true,
	}
	assert.DeepEqual(t, describe(Build(in)), []string{
		"live-1 ada GeForce RTX 4090 secure 0.69 @EU-RO-1",
		"live-2 ada GeForce RTX 4090 secure 0.69 @US-TX-3",
		"live-3 ampere RTX A6000 secure 0.69 @US-KS-2",
	})
	for _, tc := range []struct {
		name   string
		copies int
		want   []string
	}{
		{name: "twice", copies: 2, want: []string{
			"live-1 ada GeForce RTX 4090 secure 0.69 @EU-RO-1",
			"live-2 ada GeForce RTX 4090 secure 0.69 @US-TX-3",
		}},
		{name: "three times", copies: 3, want: []string{
			"live-1 ada GeForce RTX 4090 secure 0.69 @EU-RO-1",
			"live-2 ada GeForce RTX 4090 secure 0.69 @US-TX-3",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in.Rank = func(_ Input, c []Candidate) []Candidate {
				var out []Candidate
				for range tc.copies {
					first := c[0]
					first.DataCenterIDs = nil // no pin: keeps the plan's placement
					out = append(out, first)
				}
				return out
			}
			assert.DeepEqual(t, describe(Build(in)), tc.want)
		})
	}
}

// A GPU type reviewed in two tiers is planned twice as a static candidate,
// not next to each other; a ranker naming it twice gets both, in plan order.
func TestRankerRepeatFindsALaterDuplicate(t *testing.T) {
	in := Input{
		Tiers: []Tier{
			{Name: "ada", GPUIDs: []string{rtx4090}},
			{Name: "ampere", GPUIDs: []string{a6000}},
			{Name: "mixed", GPUIDs: []string{l40s, rtx4090}},
		},
		CatalogErr: errTest, MaxPriceCandidates: 3, MaxAttempts: 4,
	}
	assert.DeepEqual(t, describe(Build(in)), []string{
		"static-ada-1 ada GeForce RTX 4090 secure ?",
		"static-ampere-1 ampere RTX A6000 secure ?",
		"static-mixed-1 mixed L40S secure ?",
		"static-mixed-2 mixed GeForce RTX 4090 secure ?",
	})
	in.Rank = func(_ Input, c []Candidate) []Candidate { return []Candidate{c[0], c[0]} }

	assert.DeepEqual(t, describe(Build(in)), []string{
		"static-ada-1 ada GeForce RTX 4090 secure ?",
		"static-mixed-1 mixed GeForce RTX 4090 secure ?",
	})
}

// With one candidate per data center, a ranker that puts one data center of
// a type before another keeps that order: each ranked candidate stands for
// the planned one of its data center, not for the first of its type (which
// would undo every reordering within a type, and every reputation verdict
// about a data center, in a lane that rents from the community cloud).
func TestRankerReordersDataCentersOfOneType(t *testing.T) {
	in := Input{
		Tiers: []Tier{{Name: "ada", GPUIDs: []string{rtx4090}}, {Name: "ampere", GPUIDs: []string{a6000}}}, MaxPriceCandidates: 5, MaxAttempts: 5,
		Offers: []Offer{
			offer(rtx4090, 24, CloudSecure, 0.69, "HIGH", "EU-RO-1=HIGH", "US-TX-3=HIGH"),
			offer(a6000, 48, CloudSecure, 0.69, "HIGH", "US-KS-2=HIGH"),
		},
		PerDataCenter: true,
		Rank: func(_ Input, c []Candidate) []Candidate {
			return []Candidate{c[1], c[2], c[0]} // EU-RO-1 last
		},
	}
	assert.DeepEqual(t, describe(Build(in)), []string{
		"live-1 ada GeForce RTX 4090 secure 0.69 @US-TX-3",
		"live-2 ampere RTX A6000 secure 0.69 @US-KS-2",
		"live-3 ada GeForce RTX 4090 secure 0.69 @EU-RO-1",
	})
}
