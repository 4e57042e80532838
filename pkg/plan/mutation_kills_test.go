package plan

import (
	"errors"
	"testing"
	"time"

	"gotest.tools/v3/assert"
)

var errTest = errors.New("catalog down")

// Boundaries of Build that the table in plan_test.go does not pin: each row
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

// The VRAM floor admits a GPU with exactly that much memory.
func TestDataCenterOffersVRAMFloorIsInclusive(t *testing.T) {
	offers := []Offer{offer(l40s, 48, CloudSecure, 0.86, "HIGH", "US-KS-2=HIGH"), offer(rtx4090, 24, CloudSecure, 0.69, "HIGH", "US-TX-3=HIGH")}

	got := DataCenterOffers(offers, 1, DCFilter{MinVRAMGB: 48})

	assert.DeepEqual(t, got, []DCOffer{{GPUID: l40s, GPUCount: 1, Cloud: CloudSecure, MemoryGB: 48, DataCenterID: "US-KS-2", PricePerHour: 0.86, Availability: "HIGH"}})
}

// nameTokens splits at every character but a-z and 0-9, the ends of both
// ranges included.
func TestNameTokensKeepTheEndsOfEachRange(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"A100-SXM4-80GB", []string{"a100", "sxm4", "80gb"}},
		{"az09", []string{"az09"}},
		{"Z9 a0", []string{"z9", "a0"}},
		{"x/y_z", []string{"x", "y", "z"}},
	} {
		assert.DeepEqual(t, nameTokens(tc.in), tc.want)
	}
}

// Generic words are ambiguous only when they match several types: one match
// is the answer.
func TestMatchGPUNameGenericWordsWithOneMatch(t *testing.T) {
	got, err := MatchGPUName("RTX", []CatalogGPU{{ID: "NVIDIA RTX A4000", Name: "RTX A4000"}, {ID: "NVIDIA L4", Name: "L4"}})

	assert.NilError(t, err)
	assert.DeepEqual(t, got, []string{"NVIDIA RTX A4000"})
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

// The worst case is every priced candidate for the startup timeout, then the
// dearest for the whole lifetime: exact dollars for a 30 min startup and a
// 2 h lifetime (a lifetime of 1 h would hide a division for a product).
func TestWorstCaseExactDollars(t *testing.T) {
	p := Plan{Candidates: []Candidate{
		{Name: "live-1", PricePerHour: 0.5, PriceKnown: true},
		{Name: "live-2", PricePerHour: 1.0, PriceKnown: true},
		{Name: "static-ada-1"},
	}}

	w := p.WorstCase(30*time.Minute, 2*time.Hour)

	assert.Equal(t, w.USD, 0.5*0.5+1.0*0.5+1.0*2)
	assert.Equal(t, w.String(), "$2.75 + 1 unpriced candidate(s) (static-ada-1)")
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

// Without a GPU filter every type ranks the same, so a price and cloud tie
// falls to the GPU id, alphabetically: the order stays stable.
func TestDataCenterOffersTieWithoutFilterGoesToTheGPUID(t *testing.T) {
	offers := []Offer{offer(rtx4090, 24, CloudSecure, 0.5, "HIGH", "US-TX-3=HIGH"), offer(l40s, 48, CloudSecure, 0.5, "HIGH", "US-TX-3=HIGH")}

	var got []string
	for _, o := range DataCenterOffers(offers, 1, DCFilter{}) {
		got = append(got, o.GPUID)
	}

	assert.DeepEqual(t, got, []string{rtx4090, l40s}) // "NVIDIA GeForce…" < "NVIDIA L40S"
}

// family: leading letters when a digit follows them (0 and 9 included), the
// first two digits of a bare number, "" otherwise.
func TestFamilyEdges(t *testing.T) {
	for in, want := range map[string]string{
		"a0": "a", "h9": "h", "l40s": "l", "h100": "h",
		"50": "50", "4090": "40", "5": "", "9": "", "rtx": "", "": "",
	} {
		assert.Equal(t, family(in), want, "family(%q)", in)
	}
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
