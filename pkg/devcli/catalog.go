package devcli

import (
	"context"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/plan"
	"github.com/org/runpod-gpu/pkg/runpod"
)

// offerFlags are the flags offers and up share.
type offerFlags struct {
	gpus         string
	instanceType string
	regions      []string
	zones        []string
	cloud        string
	// refused are flags RunPod pods cannot honour; set means refused.
	port      []string
	spot, k8s bool
}

func (f *offerFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.gpus, "gpus", "", "GPU name and count, NAME[:COUNT], e.g. RTX4090:1, H100:8, A100-80GB:2 (whole-token match)")
	fl.StringVar(&f.instanceType, "instance-type", "", `exact RunPod GPU id instead of --gpus, e.g. "NVIDIA H100 80GB HBM3" (count from --gpus-count)`)
	fl.Int("gpus-count", 1, "GPU count with --instance-type")
	fl.StringSliceVar(&f.regions, "region", nil, "continent (europe, north_america, asia, …) or ISO country code (US, CA, …); repeatable; none means anywhere")
	fl.StringSliceVar(&f.zones, "zone", nil, "data-center id to pin, e.g. EU-RO-1; repeatable")
	fl.StringVar(&f.cloud, "cloud", "all", "cloud tier: secure, community or all (they compete on price)")
	// Refused up front, with the reason; hidden so help does not offer them.
	fl.StringSliceVar(&f.port, "port", nil, "refused: pod ports are published on random public ports")
	fl.BoolVar(&f.spot, "spot", false, "refused: the REST API has no interruptible pods")
	fl.BoolVar(&f.k8s, "k8s", false, "refused: pods are containers without systemd")
	for _, name := range []string{"port", "spot", "k8s"} {
		_ = fl.MarkHidden(name)
	}
	_ = cmd.RegisterFlagCompletionFunc("cloud", cobra.FixedCompletions([]string{"secure", "community", "all"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("region", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return config.Continents(), cobra.ShellCompDirectiveNoFileComp
	})
}

// query is a validated offer request.
type query struct {
	name       string // as typed, for messages
	exact      bool   // name is an exact GPU id (--instance-type)
	count      int
	continents []string // lower case
	countries  []string // upper case
	zones      []string
	clouds     []string // SECURE and/or COMMUNITY
}

var gpusRE = regexp.MustCompile(`^([^:]+)(?::(\d+))?$`)

// parse validates the flags before any API call.
func (f *offerFlags) parse(cmd *cobra.Command) (query, error) {
	var q query
	switch {
	case len(f.port) > 0 || cmd.Flags().Changed("port"):
		return q, fail(ExitUsage, "--port is not supported on RunPod: pod ports are published on random public ports, not the requested number (22/tcp is always published for SSH)")
	case f.spot:
		return q, fail(ExitUsage, "--spot is not supported on RunPod: the REST API has no interruptible pods")
	case f.k8s:
		return q, fail(ExitUsage, "--k8s is not supported on RunPod: pods are containers without systemd, so k3s cannot run")
	case f.gpus == "" && f.instanceType == "":
		return q, fail(ExitUsage, "--gpus NAME[:COUNT] (e.g. --gpus RTX4090:1) or --instance-type ID is required")
	case f.gpus != "" && f.instanceType != "":
		return q, fail(ExitUsage, "--gpus and --instance-type are exclusive: --instance-type takes an exact RunPod GPU id, counted by --gpus-count")
	}
	if f.instanceType != "" {
		q.name, q.exact = strings.TrimSpace(f.instanceType), true
		q.count, _ = cmd.Flags().GetInt("gpus-count")
	} else {
		m := gpusRE.FindStringSubmatch(strings.TrimSpace(f.gpus))
		if m == nil || strings.TrimSpace(m[1]) == "" {
			return q, fail(ExitUsage, "--gpus %q: want NAME[:COUNT], e.g. RTX4090:1 or H100:8", f.gpus)
		}
		q.name, q.count = strings.TrimSpace(m[1]), 1
		if m[2] != "" {
			n, err := strconv.Atoi(m[2])
			if err != nil {
				return q, fail(ExitUsage, "--gpus %q: count %q is not a number", f.gpus, m[2])
			}
			q.count = n
		}
	}
	if q.count < 1 || q.count > 16 {
		return q, fail(ExitUsage, "GPU count %d: want 1 to 16", q.count)
	}
	for _, r := range f.regions {
		r = strings.TrimSpace(r)
		switch {
		case config.IsContinent(strings.ToLower(r)):
			q.continents = appendOnce(q.continents, strings.ToLower(r))
		case config.IsCountryCode(strings.ToUpper(r)):
			q.countries = appendOnce(q.countries, strings.ToUpper(r))
		default:
			return q, fail(ExitUsage, "--region %q: want a continent (%s) or an ISO 3166-1 country code such as US", r, strings.Join(config.Continents(), ", "))
		}
	}
	for _, z := range f.zones {
		q.zones = appendOnce(q.zones, strings.ToUpper(strings.TrimSpace(z)))
	}
	switch strings.ToLower(strings.TrimSpace(f.cloud)) {
	case "all", "":
		q.clouds = []string{runpod.CloudSecure, runpod.CloudCommunity}
	case "secure":
		q.clouds = []string{runpod.CloudSecure}
	case "community":
		q.clouds = []string{runpod.CloudCommunity}
	default:
		return q, fail(ExitUsage, "--cloud %q: want secure, community or all", f.cloud)
	}
	return q, nil
}

func appendOnce(list []string, s string) []string {
	for _, v := range list {
		if v == s {
			return list
		}
	}
	return append(list, s)
}

// where describes the query's place and tiers for messages.
func (q query) where() string {
	var parts []string
	if places := append(append(append([]string{}, q.continents...), q.countries...), q.zones...); len(places) > 0 {
		parts = append(parts, "in "+strings.Join(places, ", "))
	} else {
		parts = append(parts, "anywhere")
	}
	var tiers []string
	for _, c := range q.clouds {
		tiers = append(tiers, strings.ToLower(c))
	}
	return strings.Join(parts, " ") + " (" + strings.Join(tiers, ", ") + " cloud)"
}

// offerSet is one reading of the catalog for a query.
type offerSet struct {
	gpuIDs []string
	offers []plan.DCOffer
}

// readOffers reads the data centers once and the GPU catalog once per cloud
// tier, resolves the GPU name on whole tokens, and returns one offer per data
// center with the GPU in stock, cheapest first.
func (a *app) readOffers(ctx context.Context, q query) (offerSet, error) {
	var set offerSet
	cctx, cancel := a.bound(ctx, callTimeout)
	dcs, err := a.client.ListDataCenters(cctx, runpod.DataCenterQuery{})
	cancel()
	if err != nil {
		return set, apiError("read the data centers", err)
	}
	regions := map[string]string{}
	var known []string
	for _, dc := range dcs {
		regions[dc.ID] = dc.Region
		known = append(known, dc.ID)
	}
	for i, z := range q.zones {
		id, ok := foldFind(known, z)
		if !ok {
			sort.Strings(known)
			return set, fail(ExitUsage, "--zone %q is not a RunPod data center; known: %s", z, strings.Join(known, ", "))
		}
		q.zones[i] = id
	}
	var offers []plan.Offer
	var catalog []plan.CatalogGPU
	seen := map[string]bool{}
	for _, cloud := range q.clouds {
		cctx, cancel := a.bound(ctx, callTimeout)
		// Countries are matched per data center with the continents (either), not as this read's filter.
		gpus, err := a.client.ListGPUTypes(cctx, runpod.GPUQuery{Include: true, Product: runpod.ProductPod, Count: q.count, Cloud: cloud})
		cancel()
		if err != nil {
			return set, apiError("read the GPU catalog ("+strings.ToLower(cloud)+" cloud)", err)
		}
		for _, g := range gpus {
			offers = append(offers, catalogOffer(g, cloud))
			if !seen[g.ID] {
				seen[g.ID] = true
				catalog = append(catalog, plan.CatalogGPU{ID: g.ID, Name: g.Name})
			}
		}
	}
	ids, err := matchName(q, catalog)
	if err != nil {
		return set, err
	}
	inCountries, err := a.countryDataCenters(ctx, q)
	if err != nil {
		return set, err
	}
	set.gpuIDs = ids
	set.offers = plan.DataCenterOffers(offers, q.count, plan.DCFilter{
		GPUIDs: ids, Continents: q.continents, Countries: q.countries, DataCenterRegions: regions, CountryDataCenters: inCountries, Zones: q.zones,
	})
	return set, nil
}

// countryDataCenters reads the catalog filtered by the query's countries and
// returns the data centers it lists (the data-center list names no country).
// They are matched with the continents — either — rather than filtering the
// offers, which would leave nothing for the continents: --region europe
// --region US is Europe and the United States.
func (a *app) countryDataCenters(ctx context.Context, q query) (map[string]bool, error) {
	out := map[string]bool{}
	if len(q.countries) == 0 {
		return out, nil
	}
	for _, cloud := range q.clouds {
		cctx, cancel := a.bound(ctx, callTimeout)
		gpus, err := a.client.ListGPUTypes(cctx, runpod.GPUQuery{Include: true, Product: runpod.ProductPod, Count: q.count, Cloud: cloud, CountryCodes: q.countries})
		cancel()
		if err != nil {
			return nil, apiError("read the GPU catalog in "+strings.Join(q.countries, ", ")+" ("+strings.ToLower(cloud)+" cloud)", err)
		}
		for _, g := range gpus {
			for _, dc := range g.DataCenters {
				out[dc.ID] = true
			}
		}
	}
	return out, nil
}

func matchName(q query, catalog []plan.CatalogGPU) ([]string, error) {
	if q.exact {
		for _, g := range catalog {
			if g.ID == q.name {
				return []string{g.ID}, nil
			}
		}
		hint := ""
		if ids, err := plan.MatchGPUName(q.name, catalog); err == nil {
			hint = "; did you mean " + quoted(ids) + "?"
		}
		return nil, fail(ExitUsage, "--instance-type %q is not an exact RunPod GPU id%s (use --gpus for names like H100)", q.name, hint)
	}
	ids, err := plan.MatchGPUName(q.name, catalog)
	if err != nil {
		return nil, withCode(ExitUsage, err)
	}
	return ids, nil
}

func quoted(ids []string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = strconv.Quote(id)
	}
	return strings.Join(q, ", ")
}

func foldFind(list []string, s string) (string, bool) {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return v, true
		}
	}
	return "", false
}

// catalogOffer is the planner's view of one catalog entry in one cloud, as
// the lane builds it: no price when the cloud does not offer the type.
func catalogOffer(g runpod.GPUType, cloud string) plan.Offer {
	o := plan.Offer{GPUID: g.ID, MemoryGB: g.Memory, Cloud: cloud, Availability: string(g.Availability)}
	switch {
	case cloud == runpod.CloudSecure && g.Secure:
		o.PricePerHour = money.PerHour(float64(g.Price.Secure))
	case cloud == runpod.CloudCommunity && g.Community:
		o.PricePerHour = money.PerHour(float64(g.Price.Community))
	}
	for _, dc := range g.DataCenters {
		o.DataCenters = append(o.DataCenters, plan.DataCenterStock{ID: dc.ID, Availability: string(dc.Availability)})
	}
	return o
}

// stillInStock re-reads the catalog for the offer's cloud and count right
// before a create and reports whether its data center still has the GPU.
func (a *app) stillInStock(ctx context.Context, o plan.DCOffer) (bool, error) {
	cctx, cancel := a.bound(ctx, callTimeout)
	defer cancel()
	gpus, err := a.client.ListGPUTypes(cctx, runpod.GPUQuery{Include: true, Product: runpod.ProductPod, Count: o.GPUCount, Cloud: o.Cloud})
	if err != nil {
		return false, apiError("re-check the stock of "+o.DataCenterID, err)
	}
	for _, g := range gpus {
		if g.ID != o.GPUID {
			continue
		}
		for _, dc := range g.DataCenters {
			if dc.ID == o.DataCenterID {
				return dc.Availability.InStock(), nil
			}
		}
	}
	return false, nil
}

// errNoOffer is the no-capacity failure of a query.
func errNoOffer(q query, set offerSet) error {
	return fail(ExitNoCapacity, "no offer for %s x%d %s: nothing in stock (matched %s)", q.name, q.count, q.where(), quoted(set.gpuIDs))
}
