package runpod

import (
	"context"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/org/runpod-gpu/pkg/lazyre"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/wire"
)

// Catalog query values.
const (
	ProductPod        = "POD"
	ProductCluster    = "CLUSTER"
	ProductServerless = "SERVERLESS"

	CloudSecure    = "SECURE"
	CloudCommunity = "COMMUNITY"
)

// Availability is a catalog stock level.
type Availability string

// Availability levels.
const (
	AvailabilityNone   Availability = "NONE"
	AvailabilityLow    Availability = "LOW"
	AvailabilityMedium Availability = "MEDIUM"
	AvailabilityHigh   Availability = "HIGH"
)

// InStock reports whether the level is LOW, MEDIUM or HIGH. An absent level
// (availability not requested) or an unknown one is not in stock.
func (a Availability) InStock() bool {
	return a == AvailabilityLow || a == AvailabilityMedium || a == AvailabilityHigh
}

// GPUType is one entry of the GPU catalog.
type GPUType struct {
	ID           string                 `json:"id"` // use for pod creation, e.g. "NVIDIA GeForce RTX 4090"
	Name         string                 `json:"name"`
	Pool         string                 `json:"pool"` // serverless pool; "" when none
	Manufacturer string                 `json:"manufacturer"`
	Memory       int                    `json:"memory"` // VRAM in GB
	Secure       bool                   `json:"secure"`
	Community    bool                   `json:"community"`
	Price        GPUPrice               `json:"price"`
	MaxCount     GPUMaxCount            `json:"maxCount"`
	Availability Availability           `json:"availability,omitempty"` // only with include=AVAILABILITY
	DataCenters  []ResourceAvailability `json:"dataCenters,omitempty"`  // only with include=AVAILABILITY
	CudaVersions []CudaAvailability     `json:"cudaVersions,omitempty"` // only with include=AVAILABILITY
}

// GPUPrice is the list price in USD per hour of one GPU, per cloud.
type GPUPrice struct {
	Secure     wire.Float `json:"secure"`
	Community  wire.Float `json:"community"`
	Serverless wire.Float `json:"serverless,omitempty"` // 0 when the GPU is in no serverless pool
}

// GPUMaxCount is the largest GPU count one pod of the type can have, per cloud.
type GPUMaxCount struct {
	Secure    int `json:"secure"`
	Community int `json:"community"`
}

// ResourceAvailability is the stock of one GPU (or CPU flavor) in one data
// center, or of one data center for a GPU type.
type ResourceAvailability struct {
	ID           string       `json:"id"`
	Name         string       `json:"name"`
	Availability Availability `json:"availability"`
}

// CudaAvailability says whether machines on one CUDA version have capacity now.
type CudaAvailability struct {
	Version   string `json:"version"` // "12.8"
	Available bool   `json:"available"`
}

// GPUQuery filters GET /v2/catalog/gpus. Every filter but Include and Product
// scopes availability, so it requires Include (as the API does).
type GPUQuery struct {
	Include        bool     // include=AVAILABILITY; requires Product
	Product        string   // ProductPod, ProductCluster or ProductServerless
	Count          int      // GPU count per pod; 0 = API default (1)
	Cloud          string   // CloudSecure or CloudCommunity; "" = API default (SECURE)
	CountryCodes   []string // ISO 3166-1 alpha-2, uppercase
	CudaVersions   []string // exact "major.minor" set; excludes MinCudaVersion
	MinCudaVersion string   // "12" or "12.6" floor; excludes CudaVersions
}

var (
	countryCodeRE = lazyre.Regexp{Pattern: `^[A-Z]{2}$`}
	cudaVersionRE = lazyre.Regexp{Pattern: `^\d+\.\d+$`}
	cudaFloorRE   = lazyre.Regexp{Pattern: `^\d+(\.\d+)?$`}
)

// values validates q and renders its query string.
func (q GPUQuery) values(op string) (url.Values, error) {
	v := url.Values{}
	scoped := q.Count != 0 || q.Cloud != "" || len(q.CountryCodes) > 0 || len(q.CudaVersions) > 0 || q.MinCudaVersion != ""
	switch {
	case q.Include && q.Product == "":
		return nil, invalidArgument(op, "include=AVAILABILITY needs a product (%s, %s or %s)", ProductPod, ProductCluster, ProductServerless)
	case !q.Include && q.Product != "":
		return nil, invalidArgument(op, "product %q is valid only with include=AVAILABILITY", q.Product)
	case !q.Include && scoped:
		return nil, invalidArgument(op, "count, cloud, countryCodes, cudaVersions and minCudaVersion are valid only with include=AVAILABILITY")
	case q.Product != "" && q.Product != ProductPod && q.Product != ProductCluster && q.Product != ProductServerless:
		return nil, invalidArgument(op, "product %q: want %s, %s or %s", q.Product, ProductPod, ProductCluster, ProductServerless)
	case q.Count < 0:
		return nil, invalidArgument(op, "count %d: want a positive GPU count", q.Count)
	case q.Cloud != "" && q.Cloud != CloudSecure && q.Cloud != CloudCommunity:
		return nil, invalidArgument(op, "cloud %q: want %s or %s", q.Cloud, CloudSecure, CloudCommunity)
	case len(q.CudaVersions) > 0 && q.MinCudaVersion != "":
		return nil, invalidArgument(op, "cudaVersions and minCudaVersion are mutually exclusive")
	case q.MinCudaVersion != "" && !cudaFloorRE.MatchString(q.MinCudaVersion):
		return nil, invalidArgument(op, "minCudaVersion %q: want major or major.minor, e.g. 12.6", q.MinCudaVersion)
	}
	for _, c := range q.CountryCodes {
		if !countryCodeRE.MatchString(c) {
			return nil, invalidArgument(op, "countryCodes entry %q: want an uppercase ISO 3166-1 alpha-2 code, e.g. FR", c)
		}
	}
	for _, cv := range q.CudaVersions {
		if !cudaVersionRE.MatchString(cv) {
			return nil, invalidArgument(op, "cudaVersions entry %q: want major.minor, e.g. 12.8", cv)
		}
	}
	if q.Include {
		v.Set("include", "AVAILABILITY")
		v.Set("product", q.Product)
	}
	if q.Count > 0 {
		v.Set("count", strconv.Itoa(q.Count))
	}
	if q.Cloud != "" {
		v.Set("cloud", q.Cloud)
	}
	if len(q.CountryCodes) > 0 {
		v.Set("countryCodes", strings.Join(q.CountryCodes, ","))
	}
	if len(q.CudaVersions) > 0 {
		v.Set("cudaVersions", strings.Join(q.CudaVersions, ","))
	}
	if q.MinCudaVersion != "" {
		v.Set("minCudaVersion", q.MinCudaVersion)
	}
	return v, nil
}

// ListGPUTypes lists the GPU catalog (GET /v2/catalog/gpus).
func (c *Client) ListGPUTypes(ctx context.Context, q GPUQuery) ([]GPUType, error) {
	const op = "list GPU types"
	query, err := q.values(op)
	if err != nil {
		return nil, err
	}
	var out struct {
		GPUs []GPUType `json:"gpus"`
	}
	if err := c.getJSON(ctx, call{op: op, method: "GET", path: "/v2/catalog/gpus", query: query}, &out); err != nil {
		return nil, err
	}
	return out.GPUs, nil
}

// ServerlessPrice is the catalog's Serverless price per hour of the dearest
// card of pools (price.serverless); ok is false when no card of them has one.
func ServerlessPrice(types []GPUType, pools ...string) (price money.Rate, ok bool) {
	for _, t := range types {
		if p := money.PerHour(float64(t.Price.Serverless)); t.Pool != "" && slices.Contains(pools, t.Pool) && p > 0 {
			price, ok = max(price, p), true
		}
	}
	return price, ok
}

// GetGPUType reads one GPU type by id (GET /v2/catalog/gpus/{id}); ids contain
// spaces and are escaped here.
func (c *Client) GetGPUType(ctx context.Context, id string) (*GPUType, error) {
	op := "get GPU type " + strconv.Quote(id)
	if strings.TrimSpace(id) == "" {
		return nil, invalidArgument(op, "GPU type id is empty")
	}
	var out GPUType
	if err := c.getJSON(ctx, call{op: op, method: "GET", path: "/v2/catalog/gpus/" + url.PathEscape(id)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DataCenter is one entry of the data-center catalog.
type DataCenter struct {
	ID                 string                 `json:"id"` // "US-TX-3"
	Name               string                 `json:"name"`
	Region             string                 `json:"region"` // continental region, e.g. "EUROPE"
	GlobalNetwork      bool                   `json:"globalNetwork"`
	NetworkVolumeTypes []string               `json:"networkVolumeTypes"`
	Compliance         []string               `json:"compliance"`
	GPUAvailability    []ResourceAvailability `json:"gpuAvailability,omitempty"` // only with IncludeGPUAvailability
	CPUAvailability    []ResourceAvailability `json:"cpuAvailability,omitempty"` // only with IncludeCPUAvailability
}

// DataCenterQuery filters GET /v2/catalog/datacenters; values within one
// filter are ORed (regions) or ANDed (compliance, volume types) by the API.
type DataCenterQuery struct {
	IncludeGPUAvailability bool
	IncludeCPUAvailability bool
	Regions                []string // e.g. "EUROPE", "NORTH_AMERICA"
	Compliance             []string // e.g. "GDPR"
	NetworkVolumeTypes     []string // "STANDARD", "HIGH_PERFORMANCE"
	GlobalNetwork          *bool    // nil = either
}

func (q DataCenterQuery) values() url.Values {
	v := url.Values{}
	var include []string
	if q.IncludeGPUAvailability {
		include = append(include, "GPU_AVAILABILITY")
	}
	if q.IncludeCPUAvailability {
		include = append(include, "CPU_AVAILABILITY")
	}
	setList := func(key string, list []string) {
		if len(list) > 0 {
			v.Set(key, strings.Join(list, ","))
		}
	}
	setList("include", include)
	setList("regions", q.Regions)
	setList("compliance", q.Compliance)
	setList("networkVolumeTypes", q.NetworkVolumeTypes)
	if q.GlobalNetwork != nil {
		v.Set("globalNetwork", strconv.FormatBool(*q.GlobalNetwork))
	}
	return v
}

// ListDataCenters lists data centers (GET /v2/catalog/datacenters).
func (c *Client) ListDataCenters(ctx context.Context, q DataCenterQuery) ([]DataCenter, error) {
	var out struct {
		DataCenters []DataCenter `json:"dataCenters"`
	}
	cl := call{op: "list data centers", method: "GET", path: "/v2/catalog/datacenters", query: q.values()}
	if err := c.getJSON(ctx, cl, &out); err != nil {
		return nil, err
	}
	return out.DataCenters, nil
}
