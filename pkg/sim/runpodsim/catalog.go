package runpodsim

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// price is the list price of one GPU of g in cloud.
func (g *GPUType) price(cloud string) float64 {
	if cloud == Community {
		return g.CommunityPrice
	}
	return g.SecurePrice
}

// maxCount is the GPU count of the largest machine of gpuID in cloud (0: none).
func (m *market) maxCount(gpuID, cloud string) int {
	n := 0
	for _, h := range m.hosts {
		if h.profile.GPUTypeID == gpuID && h.profile.Cloud == cloud {
			n = max(n, h.profile.GPUCount)
		}
	}
	return n
}

// level turns placeable pods into the catalog's coarse availability.
func level(units int) string {
	switch {
	case units <= 0:
		return "NONE"
	case units <= 2:
		return "LOW"
	case units <= 9:
		return "MEDIUM"
	}
	return "HIGH"
}

// gpuQuery is a parsed GET /v2/catalog/gpus query.
type gpuQuery struct {
	availability bool
	pods         bool // product includes POD: the only stock the simulator models
	count        int
	cloud        string
	countries    []string
	exact        []cudaVersion
	floor        *cudaVersion
}

var (
	countryPattern = regexp.MustCompile(`^[A-Z]{2}$`)
	productValues  = enumSet("POD", "CLUSTER", "SERVERLESS")
	cloudValues    = enumSet(Secure, Community)
)

// listParam reads a comma-separated (or repeated) query parameter; empty entries are dropped.
func listParam(q url.Values, key string) []string {
	var out []string
	for _, v := range q[key] {
		for _, item := range strings.Split(v, ",") {
			if item = strings.TrimSpace(item); item != "" {
				out = append(out, item)
			}
		}
	}
	return out
}

// unprocessable is a 422 whose errors name each malformed query value.
func unprocessable(errs []string) response {
	resp := problemResponse(http.StatusUnprocessableEntity, "Request validation failed.")
	resp.problem.Errors = errs
	return resp
}

// parseGPUQuery applies the catalog's rules: malformed values are 422, filters
// that need include=AVAILABILITY without it (or product without include) are 400.
func parseGPUQuery(q url.Values) (gpuQuery, *response) {
	gq := gpuQuery{count: 1, cloud: Secure}
	var errs []string
	include, products := listParam(q, "include"), listParam(q, "product")
	if len(include) > 1 {
		errs = append(errs, fmt.Sprintf("include: at most 1 value allowed, got %d", len(include)))
	}
	for _, v := range include {
		if v != "AVAILABILITY" {
			errs = append(errs, fmt.Sprintf("include: %q is not one of [AVAILABILITY]", v))
		}
	}
	for _, v := range products {
		if !productValues[v] {
			errs = append(errs, fmt.Sprintf("product: %q is not one of [POD CLUSTER SERVERLESS]", v))
		}
		gq.pods = gq.pods || v == "POD"
	}
	if raw := q.Get("count"); raw != "" {
		n, err := parseDigits(raw)
		if err != nil || n < 1 {
			errs = append(errs, fmt.Sprintf("count: %q is not an integer of at least 1", raw))
		}
		gq.count = n
	}
	if raw := q.Get("cloud"); raw != "" {
		if !cloudValues[raw] {
			errs = append(errs, fmt.Sprintf("cloud: %q is not one of [SECURE COMMUNITY]", raw))
		}
		gq.cloud = raw
	}
	gq.countries = listParam(q, "countryCodes")
	for _, c := range gq.countries {
		if !countryPattern.MatchString(c) {
			errs = append(errs, fmt.Sprintf("countryCodes: %q is not an upper-case ISO 3166-1 alpha-2 code", c))
		}
	}
	exact := listParam(q, "cudaVersions")
	for _, raw := range exact {
		v, err := parseVersion(raw, false)
		if err != nil {
			errs = append(errs, fmt.Sprintf("cudaVersions: %v", err))
		}
		gq.exact = append(gq.exact, v)
	}
	floorRaw := q.Get("minCudaVersion")
	if floorRaw != "" {
		v, err := parseVersion(floorRaw, true)
		if err != nil {
			errs = append(errs, fmt.Sprintf("minCudaVersion: %v", err))
		}
		gq.floor = &v
	}
	if len(errs) > 0 {
		resp := unprocessable(errs)
		return gq, &resp
	}
	gq.availability = len(include) > 0
	var rule string
	switch {
	case gq.availability && len(products) == 0:
		rule = "product is required with include=AVAILABILITY"
	case !gq.availability && len(products) > 0:
		rule = "product is valid only with include=AVAILABILITY"
	case !gq.availability && (len(gq.countries) > 0 || len(exact) > 0 || floorRaw != ""):
		rule = "countryCodes, cudaVersions and minCudaVersion are valid only with include=AVAILABILITY"
	case len(exact) > 0 && floorRaw != "":
		rule = "cudaVersions and minCudaVersion are mutually exclusive"
	}
	if rule != "" {
		resp := problemResponse(http.StatusBadRequest, "%s", rule)
		return gq, &resp
	}
	return gq, nil
}

func (gq gpuQuery) inCountries(m *market, dcID string) bool {
	return len(gq.countries) == 0 || slices.Contains(gq.countries, m.dcByID[dcID].CountryCode)
}

// matches reports whether h is a machine the query's availability speaks of.
func (gq gpuQuery) matches(m *market, gpuID string, h *host) bool {
	p := h.profile
	if p.GPUTypeID != gpuID || p.Cloud != gq.cloud || p.GPUCount < gq.count || !gq.inCountries(m, p.DataCenterID) {
		return false
	}
	if gq.floor != nil && h.driver.less(*gq.floor) {
		return false
	}
	return len(gq.exact) == 0 || slices.Contains(gq.exact, h.driver)
}

type gpuTypeBody struct {
	ID           string            `json:"id"`
	Name         string            `json:"name"`
	Pool         *string           `json:"pool"`
	Manufacturer string            `json:"manufacturer"`
	Memory       int               `json:"memory"`
	Secure       bool              `json:"secure"`
	Community    bool              `json:"community"`
	Price        priceBody         `json:"price"`
	MaxCount     maxCountBody      `json:"maxCount"`
	Availability string            `json:"availability,omitempty"`
	DataCenters  []availabilityRow `json:"dataCenters,omitempty"`
	CudaVersions []cudaRow         `json:"cudaVersions,omitempty"`
}

type priceBody struct {
	Secure     float64  `json:"secure"`
	Community  float64  `json:"community"`
	Serverless *float64 `json:"serverless,omitempty"`
}

type maxCountBody struct {
	Secure    int `json:"secure"`
	Community int `json:"community"`
}

type availabilityRow struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Availability string `json:"availability"`
}

type cudaRow struct {
	Version   string `json:"version"`
	Available bool   `json:"available"`
}

func (s *Server) renderGPUType(g *GPUType, gq gpuQuery) gpuTypeBody {
	m := s.market
	b := gpuTypeBody{
		ID: g.ID, Name: g.Name, Manufacturer: g.Manufacturer, Memory: g.MemoryGB,
		Price:    priceBody{Secure: g.SecurePrice, Community: g.CommunityPrice},
		MaxCount: maxCountBody{Secure: m.maxCount(g.ID, Secure), Community: m.maxCount(g.ID, Community)},
	}
	b.Secure, b.Community = b.MaxCount.Secure > 0, b.MaxCount.Community > 0
	if g.Pool != "" {
		pool := g.Pool
		b.Pool = &pool
	}
	if g.ServerlessPrice > 0 {
		price := g.ServerlessPrice
		b.Price.Serverless = &price
	}
	if !gq.availability {
		return b
	}
	total := 0
	perDC := map[string]int{}
	offered := map[string]bool{}
	cudaFree := map[cudaVersion]bool{}
	if gq.pods {
		for _, h := range m.hosts {
			if !gq.matches(m, g.ID, h) {
				continue
			}
			units := h.free / gq.count
			total += units
			perDC[h.profile.DataCenterID] += units
			offered[h.profile.DataCenterID] = true
			cudaFree[h.driver] = cudaFree[h.driver] || units > 0
		}
	}
	b.Availability = level(total)
	for _, dc := range m.dcs {
		if offered[dc.ID] {
			b.DataCenters = append(b.DataCenters, availabilityRow{ID: dc.ID, Name: dc.Name, Availability: level(perDC[dc.ID])})
		}
	}
	versions := make([]cudaVersion, 0, len(cudaFree))
	for v := range cudaFree {
		versions = append(versions, v)
	}
	slices.SortFunc(versions, func(a, b cudaVersion) int {
		if a.less(b) {
			return -1
		}
		if b.less(a) {
			return 1
		}
		return 0
	})
	for _, v := range versions {
		b.CudaVersions = append(b.CudaVersions, cudaRow{Version: v.String(), Available: cudaFree[v]})
	}
	return b
}

// offeredIn reports whether any machine of gpuID stands in the query's countries.
func (s *Server) offeredIn(gpuID string, gq gpuQuery) bool {
	for _, h := range s.market.hosts {
		if h.profile.GPUTypeID == gpuID && gq.inCountries(s.market, h.profile.DataCenterID) {
			return true
		}
	}
	return false
}

type dataCenterBody struct {
	ID                 string            `json:"id"`
	Name               string            `json:"name"`
	Region             string            `json:"region"`
	GlobalNetwork      bool              `json:"globalNetwork"`
	NetworkVolumeTypes []string          `json:"networkVolumeTypes"`
	Compliance         []string          `json:"compliance"`
	GPUAvailability    []availabilityRow `json:"gpuAvailability,omitempty"`
}

// dcQuery is a parsed GET /v2/catalog/datacenters query.
type dcQuery struct {
	gpuAvailability bool
	regions         []string
	volumes         []string
	compliance      []string
	global          *bool
}

func parseDCQuery(q url.Values) (dcQuery, *response) {
	var dq dcQuery
	var errs []string
	check := func(key string, values []string, allowed map[string]bool) []string {
		for _, v := range values {
			if !allowed[v] {
				errs = append(errs, fmt.Sprintf("%s: %q is not an allowed value", key, v))
			}
		}
		return values
	}
	for _, v := range check("include", listParam(q, "include"), enumSet("GPU_AVAILABILITY", "CPU_AVAILABILITY")) {
		dq.gpuAvailability = dq.gpuAvailability || v == "GPU_AVAILABILITY"
	}
	dq.regions = check("regions", listParam(q, "regions"), regions)
	dq.volumes = check("networkVolumeTypes", listParam(q, "networkVolumeTypes"), volumeTypes)
	dq.compliance = check("compliance", listParam(q, "compliance"), complianceKinds)
	switch raw := q.Get("globalNetwork"); raw {
	case "":
	case "true", "false":
		global := raw == "true"
		dq.global = &global
	default:
		errs = append(errs, fmt.Sprintf("globalNetwork: %q is not true or false", raw))
	}
	if len(errs) > 0 {
		resp := unprocessable(errs)
		return dq, &resp
	}
	return dq, nil
}

// keeps applies the filters: regions OR, volume types and compliance AND.
func (dq dcQuery) keeps(dc *DataCenter) bool {
	if len(dq.regions) > 0 && !slices.Contains(dq.regions, dc.Region) {
		return false
	}
	for _, v := range dq.volumes {
		if !slices.Contains(dc.NetworkVolumeTypes, v) {
			return false
		}
	}
	for _, c := range dq.compliance {
		if !slices.Contains(dc.Compliance, c) {
			return false
		}
	}
	return dq.global == nil || *dq.global == dc.GlobalNetwork
}

func (s *Server) renderDataCenter(dc *DataCenter, dq dcQuery) dataCenterBody {
	b := dataCenterBody{
		ID: dc.ID, Name: dc.Name, Region: dc.Region, GlobalNetwork: dc.GlobalNetwork,
		NetworkVolumeTypes: append([]string{}, dc.NetworkVolumeTypes...),
		Compliance:         append([]string{}, dc.Compliance...),
	}
	if !dq.gpuAvailability {
		return b
	}
	for i := range s.market.gpus {
		g := &s.market.gpus[i]
		units, offered := 0, false
		for _, h := range s.market.hosts {
			if h.profile.GPUTypeID == g.ID && h.profile.DataCenterID == dc.ID {
				units += h.free
				offered = true
			}
		}
		if offered {
			b.GPUAvailability = append(b.GPUAvailability, availabilityRow{ID: g.ID, Name: g.Name, Availability: level(units)})
		}
	}
	return b
}

// catalogList is a catalog listing's GET: the entries its query keeps,
// rendered, under key.
func catalogList[Q, T, B any](key string, parse func(url.Values) (Q, *response), entries func() []T, keep func(*T, Q) bool, render func(*T, Q) B) handler {
	return func(r *http.Request, _ []byte, _ time.Time) response {
		q, bad := parse(r.URL.Query())
		if bad != nil {
			return *bad
		}
		out := []B{}
		for i, all := 0, entries(); i < len(all); i++ {
			if keep(&all[i], q) {
				out = append(out, render(&all[i], q))
			}
		}
		return ok(http.StatusOK, map[string][]B{key: out})
	}
}

// catalogGet is a catalog entry's GET …/{id}: the entry rendered, or a 404
// naming what was not found.
func catalogGet[Q, T, B any](what string, parse func(url.Values) (Q, *response), byID map[string]*T, render func(*T, Q) B) handler {
	return func(r *http.Request, _ []byte, _ time.Time) response {
		q, bad := parse(r.URL.Query())
		if bad != nil {
			return *bad
		}
		v := byID[r.PathValue("id")]
		if v == nil {
			return problemResponse(http.StatusNotFound, "%s %q not found", what, r.PathValue("id"))
		}
		return ok(http.StatusOK, render(v, q))
	}
}

// registerCatalog serves the GPU types and data centers, each filtered and
// shaped by its query.
func (s *Server) registerCatalog() {
	gpus := func() []GPUType { return s.market.gpus }
	// The list drops types with no data center in the query's countries.
	offered := func(g *GPUType, gq gpuQuery) bool { return len(gq.countries) == 0 || s.offeredIn(g.ID, gq) }
	s.handle("/v2/catalog/gpus", map[string]handler{http.MethodGet: s.bodiless(catalogList("gpus", parseGPUQuery, gpus, offered, s.renderGPUType))})
	s.handle("/v2/catalog/gpus/{id}", map[string]handler{http.MethodGet: s.bodiless(catalogGet("GPU type", parseGPUQuery, s.market.gpuByID, s.renderGPUType))})
	dcs := func() []DataCenter { return s.market.dcs }
	keeps := func(dc *DataCenter, dq dcQuery) bool { return dq.keeps(dc) }
	s.handle("/v2/catalog/datacenters", map[string]handler{http.MethodGet: s.bodiless(catalogList("dataCenters", parseDCQuery, dcs, keeps, s.renderDataCenter))})
	s.handle("/v2/catalog/datacenters/{id}", map[string]handler{http.MethodGet: s.bodiless(catalogGet("data center", parseDCQuery, s.market.dcByID, s.renderDataCenter))})
}
