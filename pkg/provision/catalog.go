package provision

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/plan"
	"github.com/org/runpod-gpu/pkg/runpod"
)

// plan reads the catalog once per allowed cloud (one read by default) and,
// when regions or zones are configured, the data-center list (regions need it
// to filter — a continent or a country, either — zones to name their continent). With regions, zones or
// the community cloud the plan is one candidate per data center in stock
// (plan.DCOffer); otherwise one per GPU type, RunPod choosing where. A
// catalog failure falls back to the static reviewed candidates.
func (r *run) plan(ctx context.Context) plan.Plan { return plan.Build(r.planInput(ctx)) }

// planInput is the plan's input from the catalog reads (see plan).
func (r *run) planInput(ctx context.Context) plan.Input {
	cfg := r.planConfig() // reputation.go: the seed's cloud before the record holds evidence
	continents, countries := cfg.SplitRegions()
	in := plan.Input{
		GPUCount: cfg.GPUCount, MinVRAMGB: cfg.MinVRAMGB, MaxPriceCandidates: cfg.MaxPriceCandidates,
		MaxAttempts: cfg.MaxProvisionAttempts, Continents: continents, Countries: countries, Zones: cfg.Zones,
		PerDataCenter: len(cfg.Regions) > 0 || len(cfg.Zones) > 0 || slices.Contains(cfg.Clouds, config.CloudCommunity),
	}
	for _, t := range cfg.GPUTiers {
		in.Tiers = append(in.Tiers, plan.Tier{Name: t.Name, GPUIDs: t.GPUIDs})
	}
	for _, c := range cfg.Clouds {
		in.Clouds = append(in.Clouds, string(c))
	}
	known := map[string]bool{}
	for _, cloud := range cfg.Clouds {
		gpus, err := r.deps.RunPod.ListGPUTypes(ctx, runpod.GPUQuery{
			Include: true, Product: runpod.ProductPod, Cloud: string(cloud), Count: cfg.GPUCount,
			MinCudaVersion: cfg.MinCUDAVersion.String(), // countries: see countryDataCenters
		})
		if err != nil {
			in.CatalogErr = errors.Join(in.CatalogErr, err)
			continue
		}
		for _, g := range gpus {
			if !known[g.ID] {
				known[g.ID] = true
				in.KnownGPUIDs = append(in.KnownGPUIDs, g.ID)
			}
			in.Offers = append(in.Offers, offer(g, cloud))
		}
	}
	if in.CatalogErr == nil && len(countries) > 0 {
		in.CountryDataCenters, in.CatalogErr = r.countryDataCenters(ctx, countries)
	}
	if in.CatalogErr == nil && (len(cfg.Regions) > 0 || len(cfg.Zones) > 0) {
		dcs, err := r.deps.RunPod.ListDataCenters(ctx, runpod.DataCenterQuery{})
		switch {
		case err == nil:
			in.DataCenterRegions = map[string]string{}
			for _, dc := range dcs {
				in.DataCenterRegions[dc.ID] = dc.Region
			}
		case len(cfg.Regions) > 0:
			in.CatalogErr = err // regions cannot be applied without the list
		default:
			// Zones alone pin the data centers; only the table's continent is unknown.
			w := fmt.Sprintf("data-center list unavailable (%v): the plan shows no continent for the zones", err)
			r.res.Warnings = append(r.res.Warnings, w)
			r.logf("warning: %s", w)
		}
	}
	in.Rank = r.ranker() // reputation.go
	return in
}

// countryDataCenters reads the catalog filtered by the configured countries
// (per allowed cloud) and returns the data centers it lists: the data-center
// list names no country, and filtering the offers themselves by country would
// leave nothing for the configured continents (regions mean either).
func (r *run) countryDataCenters(ctx context.Context, countries []string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, cloud := range r.cfg.Clouds {
		gpus, err := r.deps.RunPod.ListGPUTypes(ctx, runpod.GPUQuery{Include: true, Product: runpod.ProductPod, Cloud: string(cloud),
			Count: r.cfg.GPUCount, CountryCodes: countries})
		if err != nil {
			return nil, err
		}
		for _, g := range gpus {
			for _, dc := range g.DataCenters {
				out[dc.ID] = true
			}
		}
	}
	return out, nil
}

// offer turns one catalog entry into the plan's view of it in one cloud.
func offer(g runpod.GPUType, cloud config.Cloud) plan.Offer {
	o := plan.Offer{GPUID: g.ID, MemoryGB: g.Memory, Cloud: string(cloud), Availability: string(g.Availability)}
	switch {
	case cloud == config.CloudSecure && g.Secure:
		o.PricePerHour = money.PerHour(float64(g.Price.Secure))
	case cloud == config.CloudCommunity && g.Community:
		o.PricePerHour = money.PerHour(float64(g.Price.Community))
	}
	if g.Availability == "" {
		o.Availability = string(runpod.AvailabilityNone) // asked for and absent: not known to be in stock
	}
	for _, dc := range g.DataCenters {
		o.DataCenters = append(o.DataCenters, plan.DataCenterStock{ID: dc.ID, Availability: string(dc.Availability)})
	}
	return o
}
