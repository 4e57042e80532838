package runpodsim_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// fuzzServe sends one request straight to the handler and checks the answer
// against the contract; outside data must never cause a 5xx.
func fuzzServe(t testing.TB, s *runpodsim.Server, method, path, rawQuery, body string) int {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.URL.RawQuery = rawQuery
	req.Header.Set("Authorization", "Bearer fuzz")
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	checkContract(t, method, path, rec.Code, rec.Header(), rec.Body.Bytes())
	assert.Assert(t, rec.Code < 500, "%s %s?%s %q: %d %s", method, path, rawQuery, body, rec.Code, rec.Body)
	return rec.Code
}

func FuzzCreatePodBody(f *testing.F) {
	f.Add(`{"name":"x","image":"i","gpu":{"id":"NVIDIA GeForce RTX 4090","count":1,"minCudaVersion":"12.6"},"ports":["22/tcp"]}`)
	f.Add(`{"name":"x","image":"i","gpu":{"id":"NVIDIA H200","count":8,"allowedCudaVersions":["13.0"]},"cloud":"SECURE","dataCenterIds":["US-TX-3"]}`)
	f.Add(`{"name":"x","image":"i","gpu":{"id":"NVIDIA L4"},"mounts":{"persistent":{"size":20,"path":"/w"}},"globalNetworking":true,"startJupyter":true}`)
	f.Add(`{"name":"x","cpu":{"id":"cpu3c","vcpuCount":2}}`)
	f.Add(`{"name":"x","image":"i","gpu":{"id":"NVIDIA L4","count":99999999999999999999}}`)
	f.Add(`{"name":"x","image":"i","gpu":{"id":"NVIDIA L4"},"ports":["99999/tcp","22/udp","8888/http"]}`)
	f.Add(`[1,2]`)
	f.Add(``)
	s, err := runpodsim.New()
	assert.NilError(f, err)
	f.Fuzz(func(t *testing.T, body string) {
		fuzzServe(t, s, http.MethodPost, "/v2/pods", "", body)
	})
}

func FuzzCatalogQuery(f *testing.F) {
	f.Add("include=AVAILABILITY&product=POD&cloud=SECURE&count=1&minCudaVersion=12.6")
	f.Add("include=AVAILABILITY&product=POD,SERVERLESS&countryCodes=US,RO&cudaVersions=12.8,13.0")
	f.Add("include=AVAILABILITY&product=POD&minCudaVersion=12.99999999999999999999")
	f.Add("include=GPU_AVAILABILITY&regions=EUROPE&compliance=GDPR&globalNetwork=true&networkVolumeTypes=STANDARD")
	f.Add("count=%zz&cloud=;")
	s, err := runpodsim.New()
	assert.NilError(f, err)
	f.Fuzz(func(t *testing.T, query string) {
		for _, path := range []string{"/v2/catalog/gpus", "/v2/catalog/gpus/NVIDIA%20L4", "/v2/catalog/datacenters", "/v2/catalog/datacenters/US-KS-2"} {
			code := fuzzServe(t, s, http.MethodGet, path, query, "")
			assert.Assert(t, code == 200 || code == 400 || code == 422, "%s?%s: %d", path, query, code)
		}
	})
}

func FuzzListPodsQuery(f *testing.F) {
	f.Add("limit=2&cursor=cG9kcy1hZnRlcjox")
	f.Add("limit=99999999999999999999999")
	f.Add("cursor=%%%")
	f.Add("cursor=cG9kcy1hZnRlcjotMQ")
	s, err := runpodsim.New()
	assert.NilError(f, err)
	for _, gpu := range []string{"NVIDIA L4", "NVIDIA GeForce RTX 4090", "NVIDIA H200"} {
		fuzzServe(f, s, http.MethodPost, "/v2/pods", "", `{"name":"p","image":"i","gpu":{"id":"`+gpu+`"}}`)
	}
	f.Fuzz(func(t *testing.T, query string) {
		code := fuzzServe(t, s, http.MethodGet, "/v2/pods", query, "")
		assert.Assert(t, code == 200 || code == 400 || code == 422, "?%s: %d", query, code)
	})
}
