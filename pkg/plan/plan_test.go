package plan

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/golden"
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
	o := Offer{GPUID: id, MemoryGB: mem, Cloud: cloud, PricePerHour: price, Availability: avail}
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
			price = fmt.Sprintf("%.2f", c.PricePerHour)
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

func TestWorstCaseAndTable(t *testing.T) {
	p := Build(baseInput())
	w := p.WorstCase(420*time.Second, time.Hour)
	// (0.49+0.69+0.86+1.64+2.99) × 420/3600 + 2.99 × 1
	assert.Check(t, is.Equal(fmt.Sprintf("%.4f", w.USD), "3.7682"))
	assert.Check(t, is.Len(w.Unpriced, 0))
	assert.Equal(t, w.String(), "$3.77")

	failed := baseInput()
	failed.CatalogErr = errors.New("down")
	fw := Build(failed).WorstCase(420*time.Second, time.Hour)
	assert.Check(t, is.Len(fw.Unpriced, 5))
	assert.Check(t, is.Contains(fw.String(), "+ 5 unpriced candidate(s)"))
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
	w := p.WorstCase(420*time.Second, time.Hour)
	// (0.34+0.49+0.69+0.89+0.86+2.99) × 420/3600 + 2.99: per-pod prices bound the run
	assert.Check(t, is.Equal(fmt.Sprintf("%.4f", w.USD), "3.7203"))
}
