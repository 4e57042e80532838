package plan

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/golden"

	"github.com/org/runpod-gpu/pkg/money"
)

const (
	rtx4090 = "NVIDIA GeForce RTX 4090"
	l40s    = "NVIDIA L40S"
	a6000   = "NVIDIA RTX A6000"
	a100    = "NVIDIA A100 80GB PCIe"
	h100    = "NVIDIA H100 80GB HBM3"
	a4000   = "NVIDIA RTX A4000" // cheap, never reviewed
	a2000   = "NVIDIA RTX A2000"
)

var reviewed = []Tier{
	{Name: "ada", GPUIDs: []string{rtx4090, l40s}},
	{Name: "ampere", GPUIDs: []string{a6000, a100}},
	{Name: "hopper", GPUIDs: []string{h100}},
}

func offer(id string, mem int, cloud string, price float64, avail string, dcs ...string) Offer {
	o := Offer{GPUID: id, MemoryGB: mem, Cloud: cloud, PricePerHour: money.PerHour(price), Availability: avail}
	for _, dc := range dcs {
		parts := strings.SplitN(dc, "=", 2)
		o.DataCenters = append(o.DataCenters, DataCenterStock{ID: parts[0], Availability: parts[1]})
	}
	return o
}

func market() []Offer {
	return []Offer{
		offer(rtx4090, 24, CloudSecure, 0.69, "HIGH", "US-TX-3=HIGH", "EU-RO-1=LOW"),
		offer(l40s, 48, CloudSecure, 0.86, "MEDIUM", "US-KS-2=MEDIUM"),
		offer(a6000, 48, CloudSecure, 0.49, "LOW", "EU-SE-1=LOW"),
		offer(a100, 80, CloudSecure, 1.64, "HIGH", "US-TX-3=HIGH"),
		offer(h100, 80, CloudSecure, 2.99, "LOW", "EU-RO-1=LOW"),
		offer(a4000, 16, CloudSecure, 0.17, "HIGH", "US-TX-3=HIGH"),
	}
}

func baseInput() Input {
	return Input{Tiers: reviewed, Offers: market(), GPUCount: 1, MinVRAMGB: 8, MaxPriceCandidates: 3, MaxAttempts: 6}
}

// describe renders candidates compactly: "live-1 ampere RTX A6000 secure 0.49".
func describe(p Plan) []string {
	var out []string
	for _, c := range p.Candidates {
		price := "?"
		if c.PriceKnown {
			price = fmt.Sprintf("%.2f", c.PricePerHour.Dollars())
		}
		s := fmt.Sprintf("%s %s %s %s %s", c.Name, c.Tier, strings.TrimPrefix(c.GPUID, "NVIDIA "), strings.ToLower(c.Cloud), price)
		if len(c.DataCenterIDs) > 0 {
			s += " @" + strings.Join(c.DataCenterIDs, ",")
		}
		out = append(out, s)
	}
	return out
}

func TestBuild(t *testing.T) {
	tests := []struct {
		name        string
		mutate      func(*Input)
		want        []string
		wantWarn    string
		wantDropped map[string]string
	}{
		{
			name: "cheapest first, capped, then one static slot per tier",
			want: []string{
				"live-1 ampere RTX A6000 secure 0.49",
				"live-2 ada GeForce RTX 4090 secure 0.69",
				"live-3 ada L40S secure 0.86",
				"static-ampere-1 ampere A100 80GB PCIe secure 1.64",
				"static-hopper-1 hopper H100 80GB HBM3 secure 2.99",
			},
		},
		{
			name: "equal prices keep allowlist order",
			mutate: func(in *Input) {
				in.Offers = []Offer{offer(a100, 80, CloudSecure, 0.5, "HIGH"), offer(rtx4090, 24, CloudSecure, 0.5, "HIGH"), offer(a6000, 48, CloudSecure, 0.5, "HIGH")}
			},
			want: []string{
				"live-1 ada GeForce RTX 4090 secure 0.50",
				"live-2 ampere RTX A6000 secure 0.50",
				"live-3 ampere A100 80GB PCIe secure 0.50",
				"static-ada-1 ada L40S secure ?",
				"static-hopper-1 hopper H100 80GB HBM3 secure ?",
			},
		},
		{
			name:   "out of stock is dropped from live but stays a static fallback",
			mutate: func(in *Input) { in.Offers[2] = offer(a6000, 48, CloudSecure, 0.49, "NONE") },
			want: []string{
				"live-1 ada GeForce RTX 4090 secure 0.69",
				"live-2 ada L40S secure 0.86",
				"live-3 ampere A100 80GB PCIe secure 1.64",
				"static-ampere-1 ampere RTX A6000 secure 0.49",
				"static-hopper-1 hopper H100 80GB HBM3 secure 2.99",
			},
			wantDropped: map[string]string{a6000: "out of stock in secure cloud"},
		},
		{
			name: "no offer in an allowed cloud",
			mutate: func(in *Input) {
				in.Offers[0] = offer(rtx4090, 24, CloudSecure, 0, "NONE")
				in.Offers = append(in.Offers, offer(rtx4090, 24, CloudCommunity, 0.34, "HIGH"))
			},
			want: []string{
				"live-1 ampere RTX A6000 secure 0.49",
				"live-2 ada L40S secure 0.86",
				"live-3 ampere A100 80GB PCIe secure 1.64",
				"static-ada-1 ada GeForce RTX 4090 secure ?",
				"static-hopper-1 hopper H100 80GB HBM3 secure 2.99",
			},
			wantDropped: map[string]string{rtx4090: "no offer in secure cloud"},
		},
		{
			name:   "VRAM floor drops live and static candidates",
			mutate: func(in *Input) { in.MinVRAMGB = 48 },
			want: []string{
				"live-1 ampere RTX A6000 secure 0.49",
				"live-2 ada L40S secure 0.86",
				"live-3 ampere A100 80GB PCIe secure 1.64",
				"static-hopper-1 hopper H100 80GB HBM3 secure 2.99",
			},
			wantDropped: map[string]string{rtx4090: "24 GB VRAM is below min_vram_gb 48"},
		},
		{
			name: "a cheap unreviewed type is never planned",
			mutate: func(in *Input) {
				in.Offers = append(in.Offers, offer(a2000, 12, CloudSecure, 0.05, "HIGH"))
				in.MaxPriceCandidates = 8
				in.MaxAttempts = 8
			},
			want: []string{
				"live-1 ampere RTX A6000 secure 0.49",
				"live-2 ada GeForce RTX 4090 secure 0.69",
				"live-3 ada L40S secure 0.86",
				"live-4 ampere A100 80GB PCIe secure 1.64",
				"live-5 hopper H100 80GB HBM3 secure 2.99",
			},
		},
		{
			name:   "live cap of one",
			mutate: func(in *Input) { in.MaxPriceCandidates = 1 },
			want: []string{
				"live-1 ampere RTX A6000 secure 0.49",
				"static-ada-1 ada GeForce RTX 4090 secure 0.69",
				"static-ampere-1 ampere A100 80GB PCIe secure 1.64",
				"static-hopper-1 hopper H100 80GB HBM3 secure 2.99",
				"static-ada-2 ada L40S secure 0.86",
			},
		},
		{
			name:   "tier reservation shrinks the live prefix so every tier is reachable",
			mutate: func(in *Input) { in.MaxPriceCandidates = 4; in.MaxAttempts = 4 },
			want: []string{
				"live-1 ampere RTX A6000 secure 0.49",
				"static-ada-1 ada GeForce RTX 4090 secure 0.69",
				"static-ampere-1 ampere A100 80GB PCIe secure 1.64",
				"static-hopper-1 hopper H100 80GB HBM3 secure 2.99",
			},
		},
		{
			name: "static candidates skip GPU ids already priced",
			mutate: func(in *Input) {
				in.Tiers = []Tier{{Name: "ada", GPUIDs: []string{rtx4090, l40s}}, {Name: "ampere", GPUIDs: []string{a6000}}}
				in.MaxPriceCandidates = 3
			},
			want: []string{
				"live-1 ampere RTX A6000 secure 0.49",
				"live-2 ada GeForce RTX 4090 secure 0.69",
				"live-3 ada L40S secure 0.86",
			},
		},
		{
			name:     "catalog failure falls back to static candidates",
			mutate:   func(in *Input) { in.CatalogErr = errors.New("503 Service Unavailable") },
			wantWarn: "catalog unavailable (503 Service Unavailable)",
			want: []string{
				"static-ada-1 ada GeForce RTX 4090 secure ?",
				"static-ampere-1 ampere RTX A6000 secure ?",
				"static-hopper-1 hopper H100 80GB HBM3 secure ?",
				"static-ada-2 ada L40S secure ?",
				"static-ampere-2 ampere A100 80GB PCIe secure ?",
			},
		},
		{
			name: "continents restrict data centers",
			mutate: func(in *Input) {
				in.Continents = []string{"europe"}
				in.DataCenterRegions = map[string]string{"US-TX-3": "NORTH_AMERICA", "US-KS-2": "NORTH_AMERICA", "EU-RO-1": "EUROPE", "EU-SE-1": "EUROPE"}
			},
			want: []string{ // static candidates stay on the continent too
				"live-1 ampere RTX A6000 secure 0.49 @EU-SE-1",
				"live-2 ada GeForce RTX 4090 secure 0.69 @EU-RO-1",
				"live-3 hopper H100 80GB HBM3 secure 2.99 @EU-RO-1",
				"static-ada-1 ada L40S secure 0.86 @EU-RO-1,EU-SE-1",
				"static-ampere-1 ampere A100 80GB PCIe secure 1.64 @EU-RO-1,EU-SE-1",
			},
			wantDropped: map[string]string{l40s: "no stock in the configured regions/zones (secure cloud)"},
		},
		{
			name:   "zones pin data centers, static candidates too",
			mutate: func(in *Input) { in.Zones = []string{"US-TX-3"} },
			want: []string{
				"live-1 ada GeForce RTX 4090 secure 0.69 @US-TX-3",
				"live-2 ampere A100 80GB PCIe secure 1.64 @US-TX-3",
				"static-ada-1 ada L40S secure 0.86 @US-TX-3",
				"static-ampere-1 ampere RTX A6000 secure 0.49 @US-TX-3",
				"static-hopper-1 hopper H100 80GB HBM3 secure 2.99 @US-TX-3",
			},
		},
		{
			name:   "community offers are ignored when community is off",
			mutate: func(in *Input) { in.Offers = append(in.Offers, offer(a100, 80, CloudCommunity, 0.20, "HIGH")) },
			want: []string{
				"live-1 ampere RTX A6000 secure 0.49",
				"live-2 ada GeForce RTX 4090 secure 0.69",
				"live-3 ada L40S secure 0.86",
				"static-ampere-1 ampere A100 80GB PCIe secure 1.64",
				"static-hopper-1 hopper H100 80GB HBM3 secure 2.99",
			},
		},
		{
			name: "community on: secure and community compete on price",
			mutate: func(in *Input) {
				in.Clouds = []string{CloudSecure, CloudCommunity}
				in.Offers = append(in.Offers, offer(a100, 80, CloudCommunity, 0.20, "HIGH"), offer(rtx4090, 24, CloudCommunity, 0.69, "LOW"))
			},
			want: []string{
				"live-1 ampere A100 80GB PCIe community 0.20",
				"live-2 ampere RTX A6000 secure 0.49",
				"live-3 ada GeForce RTX 4090 secure 0.69",
				"static-ada-1 ada L40S secure 0.86",
				"static-hopper-1 hopper H100 80GB HBM3 secure 2.99",
			},
		},
		{
			name: "a static candidate is priced in its own cloud, not at a cheaper community price",
			mutate: func(in *Input) {
				in.Clouds = []string{CloudSecure, CloudCommunity}
				in.Offers = append(in.Offers, offer(rtx4090, 24, CloudCommunity, 0.34, "HIGH"))
				in.MaxPriceCandidates = 0
			},
			want: []string{
				"static-ada-1 ada GeForce RTX 4090 secure 0.69",
				"static-ampere-1 ampere RTX A6000 secure 0.49",
				"static-hopper-1 hopper H100 80GB HBM3 secure 2.99",
				"static-ada-2 ada L40S secure 0.86",
				"static-ampere-2 ampere A100 80GB PCIe secure 1.64",
			},
		},
		{
			name:   "gpu count multiplies the price",
			mutate: func(in *Input) { in.GPUCount = 2; in.MaxPriceCandidates = 1; in.MaxAttempts = 4 },
			want: []string{
				"live-1 ampere RTX A6000 secure 0.98",
				"static-ada-1 ada GeForce RTX 4090 secure 1.38",
				"static-ampere-1 ampere A100 80GB PCIe secure 3.28",
				"static-hopper-1 hopper H100 80GB HBM3 secure 5.98",
			},
		},
		{
			name: "unknown reviewed id is warned about",
			mutate: func(in *Input) {
				in.Tiers = append(in.Tiers, Tier{Name: "typo", GPUIDs: []string{"NVIDIA RTX 4090"}})
				in.KnownGPUIDs = []string{rtx4090, l40s, a6000, a100, h100, a4000}
			},
			wantWarn: `GPU id "NVIDIA RTX 4090" in gpu_tiers is not in the RunPod catalog (a typo?)`,
			want: []string{
				"live-1 ampere RTX A6000 secure 0.49",
				"live-2 ada GeForce RTX 4090 secure 0.69",
				"static-ada-1 ada L40S secure 0.86",
				"static-ampere-1 ampere A100 80GB PCIe secure 1.64",
				"static-hopper-1 hopper H100 80GB HBM3 secure 2.99",
				"static-typo-1 typo RTX 4090 secure ?",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := baseInput()
			if tc.mutate != nil {
				tc.mutate(&in)
			}
			p := Build(in)
			assert.DeepEqual(t, describe(p), tc.want)
			assert.Check(t, len(p.Candidates) <= in.MaxAttempts)
			for i, c := range p.Candidates {
				assert.Check(t, is.Equal(c.N, i+1))
			}
			if tc.wantWarn != "" {
				assert.Check(t, is.Contains(strings.Join(p.Warnings, "\n"), tc.wantWarn))
			}
			for id, why := range tc.wantDropped {
				assert.Check(t, is.Equal(p.Dropped[id], why), id)
			}
		})
	}
}

// Whatever the market does, every tier with a plannable GPU stays reachable
// within the attempt budget, and nothing outside the allowlist is planned.
func TestEveryTierReachable(t *testing.T) {
	for attempts := len(reviewed); attempts <= 8; attempts++ {
		for cap := 0; cap <= 8; cap++ {
			in := baseInput()
			in.MaxAttempts, in.MaxPriceCandidates = attempts, cap
			p := Build(in)
			tiers := map[string]bool{}
			for _, c := range p.Candidates {
				tiers[c.Tier] = true
				assert.Check(t, c.GPUID != a4000)
			}
			assert.Check(t, is.Len(tiers, len(reviewed)), "attempts=%d cap=%d: %v", attempts, cap, describe(p))
		}
	}
}

func TestTable(t *testing.T) {
	p := Build(baseInput())
	golden.Assert(t, p.Table(), "plan-table.golden.md")
}

// dcRegions places the per-data-center market's data centers on continents.
var dcRegions = map[string]string{"US-TX-3": "NORTH_AMERICA", "US-KS-2": "NORTH_AMERICA", "EU-RO-1": "EUROPE", "EU-SE-1": "EUROPE"}

// dcMarket has both clouds, several data centers per offer, and a cheap
// unreviewed type in stock everywhere.
func dcMarket() []Offer {
	return []Offer{
		offer(rtx4090, 24, CloudSecure, 0.69, "HIGH", "US-TX-3=HIGH", "EU-RO-1=LOW"),
		offer(rtx4090, 24, CloudCommunity, 0.34, "HIGH", "EU-RO-1=MEDIUM", "EU-SE-1=NONE", "US-TX-3=HIGH"),
		offer(l40s, 48, CloudSecure, 0.86, "MEDIUM", "US-KS-2=MEDIUM"),
		offer(a6000, 48, CloudSecure, 0.49, "LOW", "EU-SE-1=LOW"),
		offer(a100, 80, CloudSecure, 1.64, "HIGH", "US-TX-3=HIGH", "EU-RO-1=HIGH"),
		offer(a100, 80, CloudCommunity, 0.89, "LOW", "EU-SE-1=LOW"),
		offer(h100, 80, CloudSecure, 2.99, "LOW", "EU-RO-1=LOW"),
		offer(a4000, 16, CloudSecure, 0.17, "HIGH", "US-TX-3=HIGH", "EU-RO-1=HIGH", "EU-SE-1=HIGH"),
		offer(a4000, 16, CloudCommunity, 0.09, "HIGH", "EU-RO-1=HIGH"),
	}
}

func dcInput() Input {
	return Input{
		Tiers: reviewed, Offers: dcMarket(), GPUCount: 1, MinVRAMGB: 8, MaxPriceCandidates: 4, MaxAttempts: 7,
		Clouds: []string{CloudSecure, CloudCommunity}, DataCenterRegions: dcRegions, PerDataCenter: true,
	}
}

func TestBuildPerDataCenter(t *testing.T) {
	tests := []struct {
		name        string
		mutate      func(*Input)
		want        []string
		wantWarn    string
		wantDropped map[string]string
	}{
		{
			name: "one candidate per data center; secure and community compete on price",
			want: []string{
				"live-1 ada GeForce RTX 4090 community 0.34 @EU-RO-1",
				"live-2 ada GeForce RTX 4090 community 0.34 @US-TX-3",
				"live-3 ampere RTX A6000 secure 0.49 @EU-SE-1",
				"live-4 ada GeForce RTX 4090 secure 0.69 @EU-RO-1",
				"static-ada-1 ada L40S secure 0.86",
				"static-ampere-1 ampere A100 80GB PCIe secure 1.64",
				"static-hopper-1 hopper H100 80GB HBM3 secure 2.99",
			},
		},
		{
			name:   "a zone pins every candidate, static ones too",
			mutate: func(in *Input) { in.Zones = []string{"EU-RO-1"} },
			want: []string{
				"live-1 ada GeForce RTX 4090 community 0.34 @EU-RO-1",
				"live-2 ada GeForce RTX 4090 secure 0.69 @EU-RO-1",
				"live-3 ampere A100 80GB PCIe secure 1.64 @EU-RO-1",
				"live-4 hopper H100 80GB HBM3 secure 2.99 @EU-RO-1",
				"static-ada-1 ada L40S secure 0.86 @EU-RO-1",
				"static-ampere-1 ampere RTX A6000 secure 0.49 @EU-RO-1",
			},
			wantDropped: map[string]string{
				l40s:  "no stock in the configured regions/zones (secure cloud)",
				a6000: "no stock in the configured regions/zones (secure cloud)",
			},
		},
		{
			name:   "a continent keeps its data centers only; static candidates stay on it",
			mutate: func(in *Input) { in.Continents = []string{"europe"} },
			want: []string{
				"live-1 ada GeForce RTX 4090 community 0.34 @EU-RO-1",
				"live-2 ampere RTX A6000 secure 0.49 @EU-SE-1",
				"live-3 ada GeForce RTX 4090 secure 0.69 @EU-RO-1",
				"live-4 ampere A100 80GB PCIe community 0.89 @EU-SE-1",
				"static-ada-1 ada L40S secure 0.86 @EU-RO-1,EU-SE-1",
				"static-hopper-1 hopper H100 80GB HBM3 secure 2.99 @EU-RO-1,EU-SE-1",
			},
			wantDropped: map[string]string{l40s: "no stock in the configured regions/zones (secure cloud)"},
		},
		{
			// regions: [europe, US] is Europe and the United States, not their (empty) intersection.
			name: "a continent and a country mean either",
			mutate: func(in *Input) {
				in.Continents, in.Countries = []string{"europe"}, []string{"US"}
				in.CountryDataCenters = map[string]bool{"US-TX-3": true, "US-KS-2": true}
			},
			want: []string{
				"live-1 ada GeForce RTX 4090 community 0.34 @EU-RO-1",
				"live-2 ada GeForce RTX 4090 community 0.34 @US-TX-3",
				"live-3 ampere RTX A6000 secure 0.49 @EU-SE-1",
				"live-4 ada GeForce RTX 4090 secure 0.69 @EU-RO-1",
				"static-ada-1 ada L40S secure 0.86 @EU-RO-1,EU-SE-1,US-KS-2,US-TX-3",
				"static-ampere-1 ampere A100 80GB PCIe secure 1.64 @EU-RO-1,EU-SE-1,US-KS-2,US-TX-3",
				"static-hopper-1 hopper H100 80GB HBM3 secure 2.99 @EU-RO-1,EU-SE-1,US-KS-2,US-TX-3",
			},
		},
		{
			name:     "a continent without data centers plans nothing rather than anywhere",
			mutate:   func(in *Input) { in.Continents = []string{"asia"} },
			wantWarn: "no RunPod data center is in the configured regions (asia): no static candidate is planned",
		},
		{
			name: "the allowlist is the boundary: the cheapest unreviewed offers are never planned",
			mutate: func(in *Input) {
				in.MaxPriceCandidates, in.MaxAttempts = 20, 20
			},
			want: []string{
				"live-1 ada GeForce RTX 4090 community 0.34 @EU-RO-1",
				"live-2 ada GeForce RTX 4090 community 0.34 @US-TX-3",
				"live-3 ampere RTX A6000 secure 0.49 @EU-SE-1",
				"live-4 ada GeForce RTX 4090 secure 0.69 @EU-RO-1",
				"live-5 ada GeForce RTX 4090 secure 0.69 @US-TX-3",
				"live-6 ada L40S secure 0.86 @US-KS-2",
				"live-7 ampere A100 80GB PCIe community 0.89 @EU-SE-1",
				"live-8 ampere A100 80GB PCIe secure 1.64 @EU-RO-1",
				"live-9 ampere A100 80GB PCIe secure 1.64 @US-TX-3",
				"live-10 hopper H100 80GB HBM3 secure 2.99 @EU-RO-1",
			},
		},
		{
			name:   "max_price_candidates caps data-center candidates; static ones skip GPU ids already priced",
			mutate: func(in *Input) { in.MaxPriceCandidates = 2 },
			want: []string{
				"live-1 ada GeForce RTX 4090 community 0.34 @EU-RO-1",
				"live-2 ada GeForce RTX 4090 community 0.34 @US-TX-3",
				"static-ada-1 ada L40S secure 0.86",
				"static-ampere-1 ampere RTX A6000 secure 0.49",
				"static-hopper-1 hopper H100 80GB HBM3 secure 2.99",
				"static-ampere-2 ampere A100 80GB PCIe secure 1.64",
			},
		},
		{
			name:   "the tier reservation shrinks the data-center prefix",
			mutate: func(in *Input) { in.MaxPriceCandidates, in.MaxAttempts = 10, 4 },
			want: []string{
				"live-1 ada GeForce RTX 4090 community 0.34 @EU-RO-1",
				"static-ada-1 ada L40S secure 0.86",
				"static-ampere-1 ampere RTX A6000 secure 0.49",
				"static-hopper-1 hopper H100 80GB HBM3 secure 2.99",
			},
		},
		{
			name:   "community off: secure data centers only",
			mutate: func(in *Input) { in.Clouds = nil; in.Zones = []string{"US-TX-3"} },
			want: []string{
				"live-1 ada GeForce RTX 4090 secure 0.69 @US-TX-3",
				"live-2 ampere A100 80GB PCIe secure 1.64 @US-TX-3",
				"static-ada-1 ada L40S secure 0.86 @US-TX-3",
				"static-ampere-1 ampere RTX A6000 secure 0.49 @US-TX-3",
				"static-hopper-1 hopper H100 80GB HBM3 secure 2.99 @US-TX-3",
			},
		},
		{
			name:   "gpu count prices the pod",
			mutate: func(in *Input) { in.GPUCount = 2; in.Zones = []string{"EU-SE-1"} },
			want: []string{
				"live-1 ampere RTX A6000 secure 0.98 @EU-SE-1",
				"live-2 ampere A100 80GB PCIe community 1.78 @EU-SE-1",
				"static-ada-1 ada GeForce RTX 4090 secure 1.38 @EU-SE-1",
				"static-hopper-1 hopper H100 80GB HBM3 secure 5.98 @EU-SE-1",
				"static-ada-2 ada L40S secure 1.72 @EU-SE-1",
			},
			wantDropped: map[string]string{rtx4090: "no stock in the configured regions/zones (secure cloud)"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := dcInput()
			if tc.mutate != nil {
				tc.mutate(&in)
			}
			p := Build(in)
			assert.DeepEqual(t, describe(p), tc.want)
			assert.Check(t, len(p.Candidates) <= in.MaxAttempts)
			for i, c := range p.Candidates {
				assert.Check(t, is.Equal(c.N, i+1))
				assert.Check(t, c.GPUID != a4000, "an unreviewed type was planned")
				if c.Source == SourceLive {
					assert.Check(t, is.Len(c.DataCenterIDs, 1), "a data-center candidate names its zone")
				}
			}
			if tc.wantWarn != "" {
				assert.Check(t, is.Contains(strings.Join(p.Warnings, "\n"), tc.wantWarn))
			}
			for id, why := range tc.wantDropped {
				assert.Check(t, is.Equal(p.Dropped[id], why), id)
			}
		})
	}
}

// The table shows what the README calls an offer: instance type, region, zone.
func TestPerDataCenterTable(t *testing.T) {
	in := dcInput()
	in.Continents = []string{"europe"}
	p := Build(in)
	golden.Assert(t, p.Table(), "plan-table-per-dc.golden.md")
}

var errTest = errors.New("catalog down")

// Boundaries of Build that TestBuild's table does not pin: each row
// is the exact plan one broken comparison would change.
func TestBuildBoundaries(t *testing.T) {
	tests := []struct {
		name        string
		in          Input
		want        []string
		wantDropped map[string]string
	}{
		{
			name: "an attempt budget of 0 still tries one candidate",
			in:   Input{Tiers: reviewed, Offers: market(), MinVRAMGB: 8, MaxPriceCandidates: 3, MaxAttempts: 0},
			want: []string{"static-ada-1 ada GeForce RTX 4090 secure 0.69"},
		},
		{
			name: "a GPU exactly at the VRAM floor stays a static candidate",
			in: Input{Tiers: []Tier{{Name: "ampere", GPUIDs: []string{a6000}}},
				Offers: []Offer{offer(a6000, 48, CloudSecure, 0.49, "NONE")}, MinVRAMGB: 48, MaxPriceCandidates: 3, MaxAttempts: 3},
			want:        []string{"static-ampere-1 ampere RTX A6000 secure 0.49"},
			wantDropped: map[string]string{a6000: "out of stock in secure cloud"},
		},
		{
			name: "an offer of unknown memory (0 GB) does not drop the static candidate",
			in: Input{Tiers: []Tier{{Name: "ampere", GPUIDs: []string{a6000}}},
				Offers: []Offer{offer(a6000, 0, CloudSecure, 0.49, "HIGH")}, MinVRAMGB: 8, MaxPriceCandidates: 3, MaxAttempts: 3},
			want:        []string{"static-ampere-1 ampere RTX A6000 secure 0.49"},
			wantDropped: map[string]string{a6000: "0 GB VRAM is below min_vram_gb 8"},
		},
		{
			name: "static candidates use the only allowed cloud when secure is not allowed",
			in: Input{Tiers: []Tier{{Name: "ampere", GPUIDs: []string{a6000}}}, CatalogErr: errTest,
				Clouds: []string{"community"}, MaxPriceCandidates: 3, MaxAttempts: 3},
			want: []string{"static-ampere-1 ampere RTX A6000 community ?"},
		},
		{
			name: "secure and community at one price: secure wins whichever is listed first",
			in: Input{Tiers: []Tier{{Name: "ada", GPUIDs: []string{rtx4090}}}, Clouds: []string{CloudSecure, CloudCommunity},
				Offers:             []Offer{offer(rtx4090, 24, CloudCommunity, 0.5, "HIGH"), offer(rtx4090, 24, CloudSecure, 0.5, "HIGH")},
				MaxPriceCandidates: 3, MaxAttempts: 3},
			want: []string{"live-1 ada GeForce RTX 4090 secure 0.50"},
		},
		{
			name: "secure listed first keeps its tie against community",
			in: Input{Tiers: []Tier{{Name: "ada", GPUIDs: []string{rtx4090}}}, Clouds: []string{CloudSecure, CloudCommunity},
				Offers:             []Offer{offer(rtx4090, 24, CloudSecure, 0.5, "HIGH"), offer(rtx4090, 24, CloudCommunity, 0.5, "HIGH")},
				MaxPriceCandidates: 3, MaxAttempts: 3},
			want: []string{"live-1 ada GeForce RTX 4090 secure 0.50"},
		},
		{
			name: "per data center: a price tie between GPU types keeps allowlist order",
			in: Input{Tiers: []Tier{{Name: "ada", GPUIDs: []string{l40s, rtx4090}}, {Name: "ampere", GPUIDs: []string{a6000}}},
				Offers: []Offer{
					offer(a6000, 48, CloudSecure, 0.5, "HIGH", "US-TX-3=HIGH"),
					offer(rtx4090, 24, CloudSecure, 0.5, "HIGH", "US-TX-3=HIGH"),
					offer(l40s, 48, CloudSecure, 0.5, "HIGH", "US-TX-3=HIGH"),
				},
				PerDataCenter: true, MaxPriceCandidates: 3, MaxAttempts: 5},
			want: []string{
				"live-1 ada L40S secure 0.50 @US-TX-3",
				"live-2 ada GeForce RTX 4090 secure 0.50 @US-TX-3",
				"live-3 ampere RTX A6000 secure 0.50 @US-TX-3",
			},
		},
		{
			name: "per data center without regions: no data center in stock is said so",
			in: Input{Tiers: []Tier{{Name: "ada", GPUIDs: []string{rtx4090}}},
				Offers:        []Offer{offer(rtx4090, 24, CloudSecure, 0.69, "HIGH", "US-TX-3=NONE")},
				PerDataCenter: true, MaxPriceCandidates: 3, MaxAttempts: 3},
			want:        []string{"static-ada-1 ada GeForce RTX 4090 secure 0.69"},
			wantDropped: map[string]string{rtx4090: "no data center with stock in secure cloud"},
		},
		{
			name: "per data center with zones: no stock in them is said so",
			in: Input{Tiers: []Tier{{Name: "ada", GPUIDs: []string{rtx4090}}},
				Offers:        []Offer{offer(rtx4090, 24, CloudSecure, 0.69, "HIGH", "US-TX-3=HIGH")},
				Zones:         []string{"EU-RO-1"},
				PerDataCenter: true, MaxPriceCandidates: 3, MaxAttempts: 3},
			want:        []string{"static-ada-1 ada GeForce RTX 4090 secure 0.69 @EU-RO-1"},
			wantDropped: map[string]string{rtx4090: "no stock in the configured regions/zones (secure cloud)"},
		},
		{
			name: "per data center with continents: no stock in them is said so",
			in: Input{Tiers: []Tier{{Name: "ada", GPUIDs: []string{rtx4090}}},
				Offers:            []Offer{offer(rtx4090, 24, CloudSecure, 0.69, "HIGH", "US-TX-3=HIGH")},
				Continents:        []string{"europe"},
				DataCenterRegions: map[string]string{"US-TX-3": "NORTH_AMERICA", "EU-RO-1": "EUROPE"},
				PerDataCenter:     true, MaxPriceCandidates: 3, MaxAttempts: 3},
			want:        []string{"static-ada-1 ada GeForce RTX 4090 secure 0.69 @EU-RO-1"},
			wantDropped: map[string]string{rtx4090: "no stock in the configured regions/zones (secure cloud)"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := Build(tc.in)
			assert.DeepEqual(t, describe(p), tc.want)
			want := tc.wantDropped
			if want == nil {
				want = map[string]string{}
			}
			assert.DeepEqual(t, p.Dropped, want)
		})
	}
}

// GPU ids the catalog does not know are warned about in allowlist order.
func TestUnknownGPUIDWarningsKeepAllowlistOrder(t *testing.T) {
	in := baseInput()
	in.KnownGPUIDs = []string{rtx4090, a100}

	p := Build(in)

	assert.DeepEqual(t, p.Warnings, []string{
		`GPU id "NVIDIA L40S" in gpu_tiers is not in the RunPod catalog (a typo?): it is only tried as a static candidate`,
		`GPU id "NVIDIA RTX A6000" in gpu_tiers is not in the RunPod catalog (a typo?): it is only tried as a static candidate`,
		`GPU id "NVIDIA H100 80GB HBM3" in gpu_tiers is not in the RunPod catalog (a typo?): it is only tried as a static candidate`,
	})
}

// A GPU id reviewed in two tiers keeps its first place in the allowlist, so
// price ties keep allowlist order and the plan is the same on every build
// (the second listing used to share its place with the next id, leaving the
// tie to map iteration order).
func TestAllowlistOrderWithAnIDInTwoTiers(t *testing.T) {
	in := Input{
		Tiers:              []Tier{{Name: "ada", GPUIDs: []string{rtx4090, l40s}}, {Name: "mixed", GPUIDs: []string{rtx4090, a6000}}},
		Offers:             []Offer{offer(a6000, 48, CloudSecure, 0.5, "HIGH"), offer(l40s, 48, CloudSecure, 0.5, "HIGH"), offer(rtx4090, 24, CloudSecure, 0.5, "HIGH")},
		MaxPriceCandidates: 3, MaxAttempts: 5,
	}
	for range 20 {
		var got []string
		for _, c := range Build(in).Candidates[:3] {
			got = append(got, c.GPUID)
		}
		assert.DeepEqual(t, got, []string{rtx4090, l40s, a6000})
	}
}
