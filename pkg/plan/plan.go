// Package plan turns the reviewed GPU allowlist and one live catalog read into
// the ordered list of candidates the provisioner tries: cheapest in-stock live
// offers first, then one static slot per reviewed tier so every tier stays
// reachable within the attempt budget.
//
// The allowlist is the eligibility boundary: live data only orders and filters
// GPU types a maintainer reviewed; it never adds one.
package plan

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/org/runpod-gpu/pkg/mdtable"
	"github.com/org/runpod-gpu/pkg/money"
)

// Clouds RunPod rents pods from.
const (
	CloudSecure    = "SECURE"
	CloudCommunity = "COMMUNITY"
)

// Availability levels the catalog reports; NONE means out of stock.
const availabilityNone = "NONE"

// Tier is a reviewed group of exact RunPod GPU type ids.
type Tier struct {
	Name   string
	GPUIDs []string
}

// DataCenterStock is one data center's stock of a GPU type in one cloud.
type DataCenterStock struct {
	ID           string
	Availability string // NONE, LOW, MEDIUM or HIGH
}

// Offer is what the catalog says about one GPU type in one cloud.
type Offer struct {
	GPUID        string
	MemoryGB     int
	Cloud        string
	PricePerHour money.Rate // list price for one GPU; 0 means the cloud has no offer
	Availability string     // overall availability; NONE means out of stock
	DataCenters  []DataCenterStock
}

// Input is everything a plan is built from.
type Input struct {
	Tiers []Tier
	// Offers are the live catalog offers of every cloud read; ignored when CatalogErr is set.
	Offers []Offer
	// KnownGPUIDs are all ids the catalog returned (any stock), to warn about typos.
	KnownGPUIDs []string
	// CatalogErr is the catalog read's failure; the plan then falls back to static candidates.
	CatalogErr error

	GPUCount           int
	MinVRAMGB          int
	MaxPriceCandidates int
	MaxAttempts        int
	Clouds             []string // allowed clouds; empty means SECURE only
	// Continents (lower-case DataCenterRegion names such as "europe") and
	// Countries (ISO codes such as "US") restrict data centers: one on one of
	// the continents (DataCenterRegions) or in one of the countries
	// (CountryDataCenters, from the catalog filtered by country) is in (InRegions).
	Continents         []string
	Countries          []string
	DataCenterRegions  map[string]string // data-center id → region enum, e.g. "EUROPE"
	CountryDataCenters map[string]bool   // the data centers in Countries
	Zones              []string          // exact data-center ids
	// PerDataCenter plans one live candidate per data center with stock (DCOffer:
	// secure and community compete on price, each pinned to its zone) instead
	// of one per GPU type with RunPod choosing among the data centers. Provision turns
	// it on when regions, zones or the community cloud are configured.
	PerDataCenter bool
	// Rank optionally reorders and pins the candidates (rank.go).
	Rank Ranker
}

// Source says where a candidate came from.
type Source string

// Candidate sources.
const (
	SourceLive   Source = "live"
	SourceStatic Source = "static"
)

// Candidate is one single-GPU-type attempt.
type Candidate struct {
	N     int    // 1-based attempt number; the runner label is <prefix>-c<N>
	Name  string // e.g. "live-1" or "static-ada"
	Tier  string
	GPUID string
	Cloud string
	// PricePerHour is the list price per pod (per GPU × count); PriceKnown is false for
	// static candidates the catalog did not price.
	PricePerHour  money.Rate
	PriceKnown    bool
	Source        Source
	DataCenterIDs []string // placement restriction; nil lets RunPod choose
	GPUCount      int      // GPUs per pod, for the instance type
	// Region is the continent(s) of DataCenterIDs, for the plan table; "" when
	// RunPod chooses anywhere or the continent is not known.
	Region string
	// NetworkVolumeID is the network volume the pod mounts (volume.go); "" for none.
	NetworkVolumeID string
}

// InstanceType names the candidate as DCOffer.InstanceType names an offer:
// "<GPU id> x<count> <cloud>", e.g. "NVIDIA GeForce RTX 4090 x1 community".
func (c Candidate) InstanceType() string {
	return fmt.Sprintf("%s x%d %s", c.GPUID, max(c.GPUCount, 1), strings.ToLower(c.Cloud))
}

// Plan is the ordered candidate list with what the planner noticed on the way.
type Plan struct {
	Candidates    []Candidate
	CatalogFailed bool
	Warnings      []string
	// Dropped says why reviewed GPU types got no live candidate, by GPU id.
	Dropped map[string]string
	// Volume says how a network volume restricted the plan (volume.go); nil without one.
	Volume *VolumeNote
}

// Build computes the plan. It never returns more than MaxAttempts candidates.
func Build(in Input) Plan {
	p := Plan{Dropped: map[string]string{}}
	count := max(in.GPUCount, 1)
	tierOf, order := reviewedOrder(in)

	memory := map[string]int{}
	var live []Candidate
	if in.CatalogErr != nil {
		p.CatalogFailed = true
		p.Warnings = append(p.Warnings, fmt.Sprintf("catalog unavailable (%v): using static reviewed candidates only", in.CatalogErr))
	} else {
		p.Warnings = append(p.Warnings, unknownIDWarnings(in, order)...)
		live = liveCandidates(in, tierOf, order, count, memory, p.Dropped)
	}

	budget := in.MaxAttempts
	if budget <= 0 {
		budget = 1
	}
	// Reserve one static slot per tier inside the attempt budget, shrinking the
	// live prefix if needed, so a cheap-but-broken live offer cannot crowd a tier out.
	livePrefix := min(len(live), max(in.MaxPriceCandidates, 0), max(budget-len(in.Tiers), 0))
	live = live[:livePrefix]

	priced := map[string]bool{}
	for _, c := range live {
		priced[c.GPUID] = true
	}
	static := staticCandidates(in, priced, memory, p.Dropped)
	if _, placeable := staticZones(in); !placeable {
		p.Warnings = append(p.Warnings, fmt.Sprintf("no RunPod data center is in the configured regions (%s): no static candidate is planned", strings.Join(append(slices.Clone(in.Continents), in.Countries...), ", ")))
	}

	all := append(live, static...)
	if len(all) > budget {
		all = all[:budget]
	}
	all = in.rank(all)
	number(in, all, count)
	p.Candidates = all
	return p
}

// reviewedOrder maps each reviewed GPU id to its tier and to its place in
// the review (tiers in order, ids in order within each).
func reviewedOrder(in Input) (tierOf map[string]string, order map[string]int) {
	tierOf = map[string]string{}
	order = map[string]int{}
	for _, t := range in.Tiers {
		for _, id := range t.GPUIDs {
			tierOf[id] = t.Name
			// An id reviewed in two tiers keeps its first place: a second
			// listing must not take the place of the next new id.
			if _, seen := order[id]; !seen {
				order[id] = len(order)
			}
		}
	}
	return tierOf, order
}

// number numbers and names the ranked candidates, fills in their GPU count
// and region, and prices each static one at its cloud's list price.
func number(in Input, all []Candidate, count int) {
	// A static candidate is created in one cloud, so it is priced at that
	// cloud's list price: a cheaper offer in another cloud would understate the
	// worst case and let the spend ceiling pass a dearer pod.
	type gpuCloud struct{ id, cloud string }
	listPrice := map[gpuCloud]money.Rate{}
	for _, o := range in.Offers {
		if in.CatalogErr == nil && o.PricePerHour > 0 {
			listPrice[gpuCloud{o.GPUID, strings.ToUpper(o.Cloud)}] = o.PricePerHour * money.Rate(count)
		}
	}
	staticN := map[string]int{}
	for i := range all {
		c := &all[i]
		c.N, c.GPUCount = i+1, count
		if c.Region == "" {
			c.Region = regionOf(in, c.DataCenterIDs)
		}
		if c.Source == SourceLive {
			c.Name = fmt.Sprintf("live-%d", i+1)
			continue
		}
		staticN[c.Tier]++
		c.Name = fmt.Sprintf("static-%s-%d", c.Tier, staticN[c.Tier])
		// A static candidate still carries the list price when the catalog knows it, for the worst-case bound.
		if price, ok := listPrice[gpuCloud{c.GPUID, strings.ToUpper(c.Cloud)}]; ok {
			c.PricePerHour, c.PriceKnown = price, true
		}
	}
}

// liveCandidates filters and orders the live offers of reviewed GPU types:
// one candidate per type (the cheapest allowed cloud, with the data centers
// RunPod may choose from), or with PerDataCenter one per data center in stock.
func liveCandidates(in Input, tierOf map[string]string, order map[string]int, count int, memory map[string]int, dropped map[string]string) []Candidate {
	reason := dropReasons{}
	best, eligible := bestOffers(in, tierOf, count, memory, reason)
	var out []Candidate
	if in.PerDataCenter {
		out = dataCenterCandidates(in, eligible, tierOf, order, count)
		for _, c := range out {
			best[c.GPUID] = c
		}
		for _, o := range eligible {
			if _, ok := best[o.GPUID]; !ok {
				reason.note(o.GPUID, noDataCenterReason(in, o.Cloud))
			}
		}
	} else {
		for _, c := range best {
			out = append(out, c)
		}
		sort.SliceStable(out, func(i, j int) bool {
			if out[i].PricePerHour != out[j].PricePerHour {
				return out[i].PricePerHour < out[j].PricePerHour
			}
			return order[out[i].GPUID] < order[out[j].GPUID] // ties keep allowlist order
		})
	}
	for id := range best {
		delete(reason, id)
	}
	for id, why := range reason {
		dropped[id] = why
	}
	return out
}

// dropReasons keeps, for each GPU id, the first reason one of its offers
// could not be a candidate.
type dropReasons map[string]string

func (r dropReasons) note(id, why string) {
	if _, ok := r[id]; !ok {
		r[id] = why
	}
}

// bestOffers picks, per reviewed GPU type, the cheapest usable offer's
// candidate (secure wins a tie); with PerDataCenter it only collects the
// usable offers (reviewed, allowed, priced and in stock somewhere) as
// eligible. It records each type's memory, and in reason why an offer was
// unusable.
func bestOffers(in Input, tierOf map[string]string, count int, memory map[string]int, reason dropReasons) (best map[string]Candidate, eligible []Offer) {
	best = map[string]Candidate{}
	for _, o := range in.Offers {
		tier, reviewed := tierOf[o.GPUID]
		if !reviewed {
			continue // the allowlist is the boundary
		}
		if o.MemoryGB > 0 {
			memory[o.GPUID] = o.MemoryGB
		}
		switch {
		case !cloudAllowed(in.Clouds, o.Cloud):
			continue
		case o.MemoryGB < in.MinVRAMGB:
			reason.note(o.GPUID, fmt.Sprintf("%d GB VRAM is below min_vram_gb %d", o.MemoryGB, in.MinVRAMGB))
			continue
		case o.PricePerHour <= 0:
			reason.note(o.GPUID, "no offer in "+strings.ToLower(o.Cloud)+" cloud")
			continue
		case strings.EqualFold(o.Availability, availabilityNone):
			reason.note(o.GPUID, "out of stock in "+strings.ToLower(o.Cloud)+" cloud")
			continue
		}
		if in.PerDataCenter {
			eligible = append(eligible, o)
			continue
		}
		dcs, ok := placement(in, o)
		if !ok {
			reason.note(o.GPUID, "no stock in the configured regions/zones ("+strings.ToLower(o.Cloud)+" cloud)")
			continue
		}
		c := Candidate{
			Tier: tier, GPUID: o.GPUID, Cloud: o.Cloud, Source: SourceLive,
			PricePerHour: o.PricePerHour * money.Rate(count), PriceKnown: true, DataCenterIDs: dcs,
		}
		// One candidate per type: the cheapest cloud wins; secure wins a tie.
		if prev, ok := best[o.GPUID]; !ok || c.PricePerHour < prev.PricePerHour ||
			(c.PricePerHour == prev.PricePerHour && c.Cloud == CloudSecure) {
			best[o.GPUID] = c
		}
	}
	return best, eligible
}

// dataCenterCandidates turns the eligible offers into one candidate per data
// center with stock, in DataCenterOffers' order (cheapest first, secure wins a
// tie, then allowlist order), each pinned to its data center and cloud. Several
// candidates may share a GPU id: a create that finds no capacity in one data
// center says nothing about the next.
func dataCenterCandidates(in Input, eligible []Offer, tierOf map[string]string, order map[string]int, count int) []Candidate {
	ids := make([]string, 0, len(order))
	for id := range order {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return order[ids[i]] < order[ids[j]] })
	offers := DataCenterOffers(eligible, count, DCFilter{
		GPUIDs: ids, Continents: in.Continents, Countries: in.Countries, DataCenterRegions: in.DataCenterRegions,
		CountryDataCenters: in.CountryDataCenters, Zones: in.Zones, MinVRAMGB: in.MinVRAMGB,
	})
	out := make([]Candidate, 0, len(offers))
	for _, o := range offers {
		out = append(out, Candidate{
			Tier: tierOf[o.GPUID], GPUID: o.GPUID, Cloud: o.Cloud, Source: SourceLive,
			PricePerHour: o.PricePerHour, PriceKnown: true, DataCenterIDs: []string{o.DataCenterID},
			Region: o.Region,
		})
	}
	return out
}

// noDataCenterReason says why an offer that is in stock overall gave no
// per-data-center candidate.
func noDataCenterReason(in Input, cloud string) string {
	if len(in.Zones) > 0 || len(in.Continents) > 0 || len(in.Countries) > 0 {
		return "no stock in the configured regions/zones (" + strings.ToLower(cloud) + " cloud)"
	}
	return "no data center with stock in " + strings.ToLower(cloud) + " cloud"
}

// staticCandidates interleaves the reviewed GPU types by tier (first of each
// tier, then second of each, …), skipping ids already priced live and ids the
// catalog showed to be below the VRAM floor.
func staticCandidates(in Input, priced map[string]bool, memory map[string]int, dropped map[string]string) []Candidate {
	cloud := CloudSecure
	if len(in.Clouds) > 0 && !cloudAllowed(in.Clouds, CloudSecure) {
		cloud = strings.ToUpper(in.Clouds[0])
	}
	queues := make([][]string, len(in.Tiers))
	for i, t := range in.Tiers {
		for _, id := range t.GPUIDs {
			if priced[id] {
				continue
			}
			if m, ok := memory[id]; ok && m < in.MinVRAMGB {
				continue
			}
			queues[i] = append(queues[i], id)
		}
	}
	zones, placeable := staticZones(in)
	if !placeable {
		return nil
	}
	var out []Candidate
	for round := 0; ; round++ {
		added := false
		for i, q := range queues {
			if round < len(q) {
				out = append(out, Candidate{Tier: in.Tiers[i].Name, GPUID: q[round], Cloud: cloud, Source: SourceStatic, DataCenterIDs: slices.Clone(zones)})
				added = true
			}
		}
		if !added {
			return out
		}
	}
}

// staticZones returns the data centers static candidates may be created in,
// and false when the configured continents hold none of the data centers the
// list names. Zones pin them; continents restrict them through the data-center
// list, so a static candidate never lands where no live one could. Without the
// list (the catalog failed) continents cannot be applied and RunPod chooses
// within the zones only.
func staticZones(in Input) ([]string, bool) {
	if (len(in.Continents) == 0 && len(in.Countries) == 0) || len(in.DataCenterRegions) == 0 {
		if len(in.Zones) == 0 {
			return nil, true
		}
		return append([]string(nil), in.Zones...), true
	}
	var ids []string
	for id, region := range in.DataCenterRegions {
		if InRegions(in.Continents, in.Countries, region, in.CountryDataCenters[id]) && (len(in.Zones) == 0 || containsFold(in.Zones, id)) {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids, len(ids) > 0
}

// regionOf names the continents of a candidate's data centers for the plan
// table; "" when RunPod chooses anywhere or a data center's continent is not
// known (the list was not read).
func regionOf(in Input, dcs []string) string {
	seen := map[string]bool{}
	var regions []string
	for _, id := range dcs {
		r := strings.ToLower(in.DataCenterRegions[id])
		if r == "" {
			return ""
		}
		if !seen[r] {
			seen[r] = true
			regions = append(regions, r)
		}
	}
	sort.Strings(regions)
	return strings.Join(regions, ", ")
}

// placement returns the data centers a live offer may be created in, and false
// when region or zone filters leave none in stock.
func placement(in Input, o Offer) ([]string, bool) {
	if len(in.Zones) == 0 && len(in.Continents) == 0 && len(in.Countries) == 0 {
		return nil, true
	}
	var ids []string
	for _, dc := range o.DataCenters {
		if strings.EqualFold(dc.Availability, availabilityNone) {
			continue
		}
		if len(in.Zones) > 0 && !containsFold(in.Zones, dc.ID) {
			continue
		}
		if !InRegions(in.Continents, in.Countries, in.DataCenterRegions[dc.ID], in.CountryDataCenters[dc.ID]) {
			continue
		}
		ids = append(ids, dc.ID)
	}
	return ids, len(ids) > 0
}

func unknownIDWarnings(in Input, order map[string]int) []string {
	if len(in.KnownGPUIDs) == 0 {
		return nil
	}
	known := map[string]bool{}
	for _, id := range in.KnownGPUIDs {
		known[id] = true
	}
	var ids []string
	for id := range order {
		if !known[id] {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return order[ids[i]] < order[ids[j]] })
	var out []string
	for _, id := range ids {
		out = append(out, fmt.Sprintf("GPU id %q in gpu_tiers is not in the RunPod catalog (a typo?): it is only tried as a static candidate", id))
	}
	return out
}

func cloudAllowed(allowed []string, cloud string) bool {
	if len(allowed) == 0 {
		return strings.EqualFold(cloud, CloudSecure)
	}
	return containsFold(allowed, cloud)
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

// Table renders the plan as a Markdown table for logs and job summaries: each
// candidate's instance type ("<GPU id> x<count> <cloud>"), its list
// price per pod, and where it may land (region = continent, zone = data center;
// "any" where RunPod chooses, "-" where the continent is not known).
func (p Plan) Table() string {
	tb := mdtable.New("#", "candidate", "tier", "instance type", "$/h", "region", "zone")
	for _, c := range p.Candidates {
		price := "unpriced"
		if c.PriceKnown {
			price = strings.TrimPrefix(c.PricePerHour.Hourly().Format(money.Cents), "$")
		}
		region, zone := c.Region, "any"
		if len(c.DataCenterIDs) > 0 {
			zone = strings.Join(c.DataCenterIDs, ", ")
		}
		switch {
		case region != "":
		case len(c.DataCenterIDs) == 0:
			region = "any"
		default:
			region = "-"
		}
		tb.Row(fmt.Sprint(c.N), c.Name, c.Tier, c.InstanceType(), price, region, zone)
	}
	return tb.String()
}
