package runpod

import (
	"context"
	"errors"
	"net/url"
	"testing"

	"gotest.tools/v3/assert"
)

func TestListGPUTypesQuery(t *testing.T) {
	tests := []struct {
		name      string
		query     GPUQuery
		wantQuery url.Values
		wantErr   string
	}{
		{name: "plain catalog", query: GPUQuery{}, wantQuery: url.Values{}},
		{
			name:  "planning read",
			query: GPUQuery{Include: true, Product: ProductPod, Cloud: CloudSecure, Count: 1, MinCudaVersion: "12.6"},
			wantQuery: url.Values{"include": {"AVAILABILITY"}, "product": {"POD"}, "cloud": {"SECURE"}, "count": {"1"},
				"minCudaVersion": {"12.6"}},
		},
		{
			name:      "countries and exact CUDA set",
			query:     GPUQuery{Include: true, Product: ProductPod, CountryCodes: []string{"FR", "DE"}, CudaVersions: []string{"12.8", "13.0"}},
			wantQuery: url.Values{"include": {"AVAILABILITY"}, "product": {"POD"}, "countryCodes": {"FR,DE"}, "cudaVersions": {"12.8,13.0"}},
		},
		{name: "bare major floor", query: GPUQuery{Include: true, Product: ProductServerless, MinCudaVersion: "12"},
			wantQuery: url.Values{"include": {"AVAILABILITY"}, "product": {"SERVERLESS"}, "minCudaVersion": {"12"}}},
		{name: "include without product", query: GPUQuery{Include: true}, wantErr: "include=AVAILABILITY needs a product"},
		{name: "product without include", query: GPUQuery{Product: ProductPod}, wantErr: `product "POD" is valid only with include=AVAILABILITY`},
		{name: "filter without include", query: GPUQuery{Cloud: CloudSecure}, wantErr: "valid only with include=AVAILABILITY"},
		{name: "unknown product", query: GPUQuery{Include: true, Product: "VM"}, wantErr: `product "VM": want POD, CLUSTER or SERVERLESS`},
		{name: "negative count", query: GPUQuery{Include: true, Product: ProductPod, Count: -2}, wantErr: "count -2"},
		{name: "unknown cloud", query: GPUQuery{Include: true, Product: ProductPod, Cloud: "secure"}, wantErr: `cloud "secure"`},
		{name: "both CUDA filters", query: GPUQuery{Include: true, Product: ProductPod, CudaVersions: []string{"12.8"}, MinCudaVersion: "12.6"}, wantErr: "mutually exclusive"},
		{name: "lowercase country", query: GPUQuery{Include: true, Product: ProductPod, CountryCodes: []string{"fr"}}, wantErr: `countryCodes entry "fr"`},
		{name: "bad CUDA entry", query: GPUQuery{Include: true, Product: ProductPod, CudaVersions: []string{"12"}}, wantErr: `cudaVersions entry "12"`},
		{name: "bad CUDA floor", query: GPUQuery{Include: true, Product: ProductPod, MinCudaVersion: "12.x"}, wantErr: `minCudaVersion "12.x"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFake(t)
			fake.answer("GET /v2/catalog/gpus", 200, `{"gpus":[{"id":"NVIDIA L4","memory":24,"price":{"secure":"0.43","community":0.3},"availability":"LOW"}]}`)
			client, _ := fake.client()

			gpus, err := client.ListGPUTypes(context.Background(), tc.query)

			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				assert.Check(t, errors.Is(err, ErrInvalidRequest))
				assert.Equal(t, len(fake.received()), 0)
				return
			}
			assert.NilError(t, err)
			got, err := url.ParseQuery(fake.received()[0].query)
			assert.NilError(t, err)
			assert.DeepEqual(t, got, tc.wantQuery)
			assert.Equal(t, len(gpus), 1)
			assert.Equal(t, float64(gpus[0].Price.Secure), 0.43, "a string price decodes")
			assert.Check(t, gpus[0].Availability.InStock())
		})
	}
}

func TestGetGPUTypeEscapesTheID(t *testing.T) {
	fake := newFake(t)
	fake.answer("GET /v2/catalog/gpus/{id}", 200, `{"id":"NVIDIA GeForce RTX 4090","memory":24,"cudaVersions":[{"version":"12.8","available":true}]}`)
	client, _ := fake.client()

	gpu, err := client.GetGPUType(context.Background(), "NVIDIA GeForce RTX 4090")

	assert.NilError(t, err)
	got := fake.received()[0]
	assert.Equal(t, got.escapedPath, "/v2/catalog/gpus/NVIDIA%20GeForce%20RTX%204090")
	assert.Equal(t, got.path, "/v2/catalog/gpus/NVIDIA GeForce RTX 4090")
	assert.DeepEqual(t, gpu.CudaVersions, []CudaAvailability{{Version: "12.8", Available: true}})
}

func TestGetGPUTypeNotFound(t *testing.T) {
	fake := newFake(t)
	fake.answer("GET /v2/catalog/gpus/{id}", 404, problemJSON(404, "resource not found"))
	client, _ := fake.client()

	_, err := client.GetGPUType(context.Background(), "NVIDIA Imaginary")

	assert.Check(t, errors.Is(err, ErrNotFound))
	assert.ErrorContains(t, err, `runpod: get GPU type "NVIDIA Imaginary": 404 Not Found: resource not found (not found)`)
}

func TestListDataCentersQuery(t *testing.T) {
	yes := true
	tests := []struct {
		name      string
		query     DataCenterQuery
		wantQuery url.Values
	}{
		{name: "all", query: DataCenterQuery{}, wantQuery: url.Values{}},
		{
			name:      "gpu stock in Europe",
			query:     DataCenterQuery{IncludeGPUAvailability: true, Regions: []string{"EUROPE"}},
			wantQuery: url.Values{"include": {"GPU_AVAILABILITY"}, "regions": {"EUROPE"}},
		},
		{
			name: "every filter",
			query: DataCenterQuery{IncludeGPUAvailability: true, IncludeCPUAvailability: true, Regions: []string{"EUROPE", "ASIA"},
				Compliance: []string{"GDPR", "SOC_2_TYPE_2"}, NetworkVolumeTypes: []string{"STANDARD"}, GlobalNetwork: &yes},
			wantQuery: url.Values{"include": {"GPU_AVAILABILITY,CPU_AVAILABILITY"}, "regions": {"EUROPE,ASIA"},
				"compliance": {"GDPR,SOC_2_TYPE_2"}, "networkVolumeTypes": {"STANDARD"}, "globalNetwork": {"true"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFake(t)
			fake.answer("GET /v2/catalog/datacenters", 200, `{"dataCenters":[{"id":"EU-RO-1","region":"EUROPE","gpuAvailability":[{"id":"NVIDIA L4","name":"L4","availability":"NONE"}]}]}`)
			client, _ := fake.client()

			dcs, err := client.ListDataCenters(context.Background(), tc.query)

			assert.NilError(t, err)
			got, err := url.ParseQuery(fake.received()[0].query)
			assert.NilError(t, err)
			assert.DeepEqual(t, got, tc.wantQuery)
			assert.Equal(t, dcs[0].ID, "EU-RO-1")
			assert.Check(t, !dcs[0].GPUAvailability[0].Availability.InStock())
		})
	}
}

func TestAvailabilityInStock(t *testing.T) {
	for level, want := range map[Availability]bool{
		AvailabilityHigh: true, AvailabilityMedium: true, AvailabilityLow: true,
		AvailabilityNone: false, "": false, "PLENTY": false,
	} {
		assert.Equal(t, level.InStock(), want, "level %q", level)
	}
}
