package runpodsim_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/golden"

	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// The default market as the catalog shows it; regenerate with -update.
func TestDefaultMarketCatalogGolden(t *testing.T) {
	tests := []struct {
		name   string
		target string
	}{
		{name: "gpus.golden", target: "/v2/catalog/gpus"},
		{name: "gpus-secure-availability.golden", target: "/v2/catalog/gpus?include=AVAILABILITY&product=POD&cloud=SECURE&count=1&minCudaVersion=12.6"},
		{name: "datacenters-gpu-availability.golden", target: "/v2/catalog/datacenters?include=GPU_AVAILABILITY"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(t)
			r := s.do(http.MethodGet, tc.target, nil)
			assert.Equal(t, r.status, http.StatusOK)
			var pretty bytes.Buffer
			assert.NilError(t, json.Indent(&pretty, r.body, "", "  "))
			golden.Assert(t, pretty.String(), tc.name)
		})
	}
}

type gpuType struct {
	ID           string `json:"id"`
	Secure       bool   `json:"secure"`
	Community    bool   `json:"community"`
	Availability string `json:"availability"`
	MaxCount     struct {
		Secure    int `json:"secure"`
		Community int `json:"community"`
	} `json:"maxCount"`
	DataCenters []struct {
		ID           string `json:"id"`
		Availability string `json:"availability"`
	} `json:"dataCenters"`
	CudaVersions []struct {
		Version   string `json:"version"`
		Available bool   `json:"available"`
	} `json:"cudaVersions"`
}

// catalogMarket has A40s on three drivers, in two countries and both clouds:
// US-KS-2 secure 12.6 (8 GPUs) and 12.8 (1 GPU), EU-RO-1 community 13.0 (2 GPUs).
func catalogMarket() runpodsim.Market {
	return smallMarket(
		runpodsim.HostProfile{ID: "ks-126", DriverCUDA: "12.6", GPUCount: 8, Healthy: true},
		runpodsim.HostProfile{ID: "ks-128", DriverCUDA: "12.8", GPUCount: 1, Healthy: true},
		runpodsim.HostProfile{ID: "ro-130", DataCenterID: "EU-RO-1", Cloud: runpodsim.Community, DriverCUDA: "13.0", GPUCount: 2, Healthy: true},
	)
}

func TestCatalogGPUFilters(t *testing.T) {
	type summary struct {
		Availability string
		DataCenters  []string // id=level
		CUDA         []string
	}
	tests := []struct {
		name  string
		query string
		want  *summary // nil: the type is dropped from the list
	}{
		{name: "without availability", query: "", want: &summary{}},
		{name: "secure by default", query: "?include=AVAILABILITY&product=POD",
			want: &summary{"MEDIUM", []string{"US-KS-2=MEDIUM"}, []string{"12.6", "12.8"}}},
		{name: "community", query: "?include=AVAILABILITY&product=POD&cloud=COMMUNITY",
			want: &summary{"LOW", []string{"EU-RO-1=LOW"}, []string{"13.0"}}},
		{name: "count skips small machines", query: "?include=AVAILABILITY&product=POD&count=2",
			want: &summary{"MEDIUM", []string{"US-KS-2=MEDIUM"}, []string{"12.6"}}},
		{name: "count beyond every machine", query: "?include=AVAILABILITY&product=POD&count=16",
			want: &summary{"NONE", nil, nil}},
		{name: "minCudaVersion compares numerically", query: "?include=AVAILABILITY&product=POD&minCudaVersion=12.7",
			want: &summary{"LOW", []string{"US-KS-2=LOW"}, []string{"12.8"}}},
		{name: "minCudaVersion takes a bare major", query: "?include=AVAILABILITY&product=POD&minCudaVersion=12",
			want: &summary{"MEDIUM", []string{"US-KS-2=MEDIUM"}, []string{"12.6", "12.8"}}},
		{name: "cudaVersions match exactly", query: "?include=AVAILABILITY&product=POD&cudaVersions=12.8,11.8",
			want: &summary{"LOW", []string{"US-KS-2=LOW"}, []string{"12.8"}}},
		{name: "serverless stock is not modelled", query: "?include=AVAILABILITY&product=SERVERLESS",
			want: &summary{"NONE", nil, nil}},
		{name: "countries narrow the list", query: "?include=AVAILABILITY&product=POD&countryCodes=FR,DE", want: nil},
		{name: "countries scope availability", query: "?include=AVAILABILITY&product=POD&countryCodes=RO",
			want: &summary{"NONE", nil, nil}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(t, runpodsim.WithMarket(catalogMarket()))
			r := s.do(http.MethodGet, "/v2/catalog/gpus"+tc.query, nil)
			assert.Equal(t, r.status, http.StatusOK, "body: %s", r.body)
			var list struct{ GPUs []gpuType }
			r.decode(t, &list)
			if tc.want == nil {
				assert.Equal(t, len(list.GPUs), 0)
				return
			}
			assert.Equal(t, len(list.GPUs), 1)
			g := list.GPUs[0]
			got := summary{Availability: g.Availability}
			for _, dc := range g.DataCenters {
				got.DataCenters = append(got.DataCenters, dc.ID+"="+dc.Availability)
			}
			for _, v := range g.CudaVersions {
				got.CUDA = append(got.CUDA, v.Version)
			}
			assert.DeepEqual(t, got, *tc.want)
			assert.Assert(t, g.Secure && g.Community)
			assert.Equal(t, g.MaxCount.Secure, 8)
			assert.Equal(t, g.MaxCount.Community, 2)
		})
	}
}

func TestCatalogAvailabilityFollowsStock(t *testing.T) {
	s := newSim(t, runpodsim.WithMarket(catalogMarket()))
	full := func() []bool {
		r := s.do(http.MethodGet, "/v2/catalog/gpus/"+url.PathEscape(a40)+"?include=AVAILABILITY&product=POD&cudaVersions=12.8", nil)
		assert.Equal(t, r.status, http.StatusOK)
		var g gpuType
		r.decode(t, &g)
		var out []bool
		for _, v := range g.CudaVersions {
			out = append(out, v.Available)
		}
		return out
	}
	assert.DeepEqual(t, full(), []bool{true})
	req := podRequest("takes-the-12.8-gpu", a40)
	req["gpu"] = map[string]any{"id": a40, "allowedCudaVersions": []string{"12.8"}}
	s.mustCreate(req)
	assert.DeepEqual(t, full(), []bool{false}) // offered, but full
}

func TestCatalogQueryErrors(t *testing.T) {
	tests := []struct {
		query      string
		wantStatus int
		wantInBody string
	}{
		{query: "?include=AVAILABILITY", wantStatus: 400, wantInBody: "product is required with include=AVAILABILITY"},
		{query: "?product=POD", wantStatus: 400, wantInBody: "product is valid only with include=AVAILABILITY"},
		{query: "?minCudaVersion=12.6", wantStatus: 400, wantInBody: "valid only with include=AVAILABILITY"},
		{query: "?countryCodes=US", wantStatus: 400, wantInBody: "valid only with include=AVAILABILITY"},
		{query: "?include=AVAILABILITY&product=POD&minCudaVersion=12.6&cudaVersions=12.8", wantStatus: 400, wantInBody: "mutually exclusive"},
		{query: "?include=AVAILABILITY&product=POD&minCudaVersion=twelve", wantStatus: 422, wantInBody: "minCudaVersion"},
		{query: "?include=AVAILABILITY&product=POD&cudaVersions=12", wantStatus: 422, wantInBody: `\"12\" is not a major.minor version`},
		{query: "?include=AVAILABILITY&product=POD&countryCodes=usa", wantStatus: 422, wantInBody: "countryCodes"},
		{query: "?include=AVAILABILITY&product=POD&count=0", wantStatus: 422, wantInBody: "count"},
		{query: "?include=AVAILABILITY&product=POD&cloud=PRIVATE", wantStatus: 422, wantInBody: "cloud"},
		{query: "?include=PRICES&product=POD", wantStatus: 422, wantInBody: "include"},
		{query: "?include=AVAILABILITY&product=VM", wantStatus: 422, wantInBody: "product"},
	}
	s := newSim(t)
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			r := s.do(http.MethodGet, "/v2/catalog/gpus"+tc.query, nil)
			assert.Equal(t, r.status, tc.wantStatus)
			assert.Check(t, is.Contains(string(r.body), tc.wantInBody))
		})
	}
}

func TestCatalogGetGPUType(t *testing.T) {
	s := newSim(t)
	r := s.do(http.MethodGet, "/v2/catalog/gpus/"+url.PathEscape("NVIDIA GeForce RTX 4090"), nil)
	assert.Equal(t, r.status, http.StatusOK)
	var g struct {
		ID    string
		Name  string
		Pool  string
		Price struct{ Secure, Community float64 }
	}
	r.decode(t, &g)
	assert.Equal(t, g.ID, "NVIDIA GeForce RTX 4090")
	assert.Equal(t, g.Name, "RTX 4090")
	assert.Equal(t, g.Pool, "ADA_24")
	assert.Equal(t, g.Price.Secure, 0.69)
	assert.Equal(t, g.Price.Community, 0.34)

	// The single-type endpoint keeps a type that is not in the countries asked for.
	r = s.do(http.MethodGet, "/v2/catalog/gpus/"+url.PathEscape("NVIDIA H200")+"?include=AVAILABILITY&product=POD&countryCodes=JP", nil)
	assert.Equal(t, r.status, http.StatusOK)
	var h200 gpuType
	r.decode(t, &h200)
	assert.Equal(t, h200.Availability, "NONE")
	assert.Equal(t, len(h200.DataCenters), 0)

	r = s.do(http.MethodGet, "/v2/catalog/gpus/"+url.PathEscape("NVIDIA Imaginary"), nil)
	assert.Equal(t, r.status, http.StatusNotFound)
}

func TestCatalogDataCenters(t *testing.T) {
	tests := []struct {
		query      string
		wantIDs    []string
		wantStatus int
	}{
		{query: "", wantIDs: []string{"US-KS-2", "US-TX-3", "US-CA-2", "CA-MTL-1", "EU-RO-1", "EU-SE-1", "EUR-IS-1", "EU-NL-1", "AP-JP-1", "OC-AU-1"}},
		{query: "?regions=EUROPE,ASIA", wantIDs: []string{"EU-RO-1", "EU-SE-1", "EUR-IS-1", "EU-NL-1", "AP-JP-1"}},
		{query: "?compliance=GDPR,SOC_2_TYPE_2", wantIDs: []string{"EU-NL-1"}},
		{query: "?networkVolumeTypes=STANDARD,HIGH_PERFORMANCE", wantIDs: []string{"US-KS-2", "EU-RO-1"}},
		{query: "?globalNetwork=false&regions=NORTH_AMERICA", wantIDs: []string{"US-CA-2"}},
		{query: "?regions=MOON", wantStatus: 422},
		{query: "?globalNetwork=maybe", wantStatus: 422},
		{query: "?include=DISK_AVAILABILITY", wantStatus: 422},
	}
	s := newSim(t)
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			r := s.do(http.MethodGet, "/v2/catalog/datacenters"+tc.query, nil)
			if tc.wantStatus != 0 {
				assert.Equal(t, r.status, tc.wantStatus)
				return
			}
			assert.Equal(t, r.status, http.StatusOK)
			var list struct{ DataCenters []struct{ ID string } }
			r.decode(t, &list)
			var ids []string
			for _, dc := range list.DataCenters {
				ids = append(ids, dc.ID)
			}
			assert.DeepEqual(t, ids, tc.wantIDs)
		})
	}

	r := s.do(http.MethodGet, "/v2/catalog/datacenters/OC-AU-1?include=GPU_AVAILABILITY", nil)
	assert.Equal(t, r.status, http.StatusOK)
	var dc struct {
		Region          string
		GPUAvailability []struct{ ID, Availability string }
	}
	r.decode(t, &dc)
	assert.Equal(t, dc.Region, "OCEANIA")
	assert.DeepEqual(t, dc.GPUAvailability, []struct{ ID, Availability string }{{ID: "NVIDIA H100 PCIe", Availability: "LOW"}})
	assert.Equal(t, s.do(http.MethodGet, "/v2/catalog/datacenters/MARS-1", nil).status, http.StatusNotFound)
}
