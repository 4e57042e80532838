package runpod

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/org/runpod-gpu/pkg/version"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestRequestsCarryAuthAndUserAgent(t *testing.T) {
	fake := newFake(t)
	fake.answer("GET /v2/pods/{id}", 200, `{"id":"p1"}`)
	client, _ := fake.client()

	_, err := client.GetPod(context.Background(), "p1")

	assert.NilError(t, err)
	got := fake.received()
	assert.Equal(t, len(got), 1)
	assert.Equal(t, got[0].authorization, "Bearer "+testAPIKey)
	assert.Equal(t, got[0].userAgent, version.UserAgent())
	assert.Equal(t, got[0].accept, "application/json")
}

func TestKeyNeverFollowsARedirectToAnotherHost(t *testing.T) {
	var elsewhereAuth []string
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhereAuth = append(elsewhereAuth, r.Header.Get("Authorization"))
		writeRaw(w, 200, `{"id":"p1"}`)
	}))
	defer elsewhere.Close()
	fake := newFake(t)
	fake.handle("GET /v2/pods/{id}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+r.URL.Path, http.StatusTemporaryRedirect)
	})
	client, _ := fake.client()

	_, err := client.GetPod(context.Background(), "p1")

	assert.NilError(t, err)
	assert.Equal(t, fake.received()[0].authorization, "Bearer "+testAPIKey)
	assert.DeepEqual(t, elsewhereAuth, []string{""})
}

func TestBaseURL(t *testing.T) {
	tests := []struct {
		name     string
		base     func(srv string) string
		wantPath string
		wantErr  string
	}{
		{name: "plain", base: func(srv string) string { return srv }, wantPath: "/v2/pods/p1"},
		{name: "trailing slash", base: func(srv string) string { return srv + "/" }, wantPath: "/v2/pods/p1"},
		{name: "proxy prefix", base: func(srv string) string { return srv + "/runpod" }, wantPath: "/runpod/v2/pods/p1"},
		{name: "no scheme", base: func(string) string { return "api.runpod.io" }, wantErr: `base URL "api.runpod.io": want an absolute http(s) URL`},
		{name: "wrong scheme", base: func(string) string { return "ftp://api.runpod.io" }, wantErr: "want an absolute http(s) URL"},
		{name: "plain http off loopback", base: func(string) string { return "http://api.runpod.example" },
			wantErr: `base URL "http://api.runpod.example": want an https:// URL without user info`},
		{name: "user info", base: func(srv string) string { return strings.Replace(srv, "http://", "http://me:hunter2@", 1) },
			wantErr: `base URL "http://***@127.0.0.1`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var gotPath string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				gotPath = r.URL.Path
				writeRaw(w, 200, `{"id":"p1"}`)
			}))
			defer srv.Close()
			client := New(tc.base(srv.URL), testAPIKey, WithPolicy(newTestPolicy().policy))

			_, err := client.GetPod(context.Background(), "p1")

			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				assert.Check(t, errors.Is(err, ErrInvalidRequest))
				assert.Equal(t, gotPath, "", "nothing was sent")
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, gotPath, tc.wantPath)
		})
	}
}

func TestDefaults(t *testing.T) {
	client := New("", testAPIKey)
	assert.Equal(t, client.base.String(), DefaultBaseURL)
	assert.Equal(t, client.maxListPages, 0, "no page bound: the listing is bounded by time")
	assert.Equal(t, client.listBudget, DefaultListPodsBudget)
	assert.Equal(t, client.Policy().Redactor().Redact("k="+testAPIKey), "k=***", "the key is registered with the policy's redactor")
}

func TestWithHTTPClientKeepsTheCallersClient(t *testing.T) {
	var viaCaller int
	fake := newFake(t)
	fake.answer("GET /v2/pods/{id}", 200, `{"id":"p1"}`)
	callers := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		viaCaller++
		return http.DefaultTransport.RoundTrip(r)
	})}
	client := New(fake.server.URL, testAPIKey, WithHTTPClient(callers), WithPolicy(newTestPolicy().policy))

	_, err := client.GetPod(context.Background(), "p1")

	assert.NilError(t, err)
	assert.Equal(t, viaCaller, 1, "requests go out through the caller's transport")
	_, wrapped := callers.Transport.(roundTripFunc)
	assert.Check(t, wrapped, "the caller's client itself is not modified")
}

func TestInvalidArgumentsAreNotSent(t *testing.T) {
	ctx := context.Background()
	valid := func() CreatePodRequest {
		return CreatePodRequest{Name: "rg-1-1-c1", Image: "img", GPU: &CreateGPU{ID: "NVIDIA L4"}}
	}
	with := func(change func(*CreatePodRequest)) CreatePodRequest {
		r := valid()
		change(&r)
		return r
	}
	tests := []struct {
		name    string
		call    func(*Client) error
		wantErr string
	}{
		{name: "empty pod id", call: func(c *Client) error { _, err := c.GetPod(ctx, " "); return err }, wantErr: "pod id is empty"},
		{name: "delete empty id", call: func(c *Client) error { return c.DeletePod(ctx, "") }, wantErr: "pod id is empty"},
		{name: "unknown action", call: func(c *Client) error { _, err := c.PodAction(ctx, "p1", "explode"); return err }, wantErr: `action "explode": want start, stop, restart or terminate`},
		{name: "empty GPU type id", call: func(c *Client) error { _, err := c.GetGPUType(ctx, ""); return err }, wantErr: "GPU type id is empty"},
		{name: "negative list limit", call: func(c *Client) error { _, err := c.ListPods(ctx, ListPodsQuery{Limit: -1}); return err }, wantErr: "limit -1"},
		{name: "no name", call: createWith(with(func(r *CreatePodRequest) { r.Name = "" })), wantErr: "name is empty"},
		{name: "no image", call: createWith(with(func(r *CreatePodRequest) { r.Image = "" })), wantErr: "image is empty"},
		{name: "no gpu", call: createWith(with(func(r *CreatePodRequest) { r.GPU = nil })), wantErr: "gpu is missing"},
		{name: "no gpu id", call: createWith(with(func(r *CreatePodRequest) { r.GPU.ID = "" })), wantErr: "gpu.id is empty"},
		{name: "negative count", call: createWith(with(func(r *CreatePodRequest) { r.GPU.Count = -1 })), wantErr: "gpu.count -1"},
		{name: "bare major cuda floor", call: createWith(with(func(r *CreatePodRequest) { r.GPU.MinCudaVersion = "12" })), wantErr: `gpu.minCudaVersion "12": want major.minor`},
		{name: "both cuda constraints", call: createWith(with(func(r *CreatePodRequest) {
			r.GPU.MinCudaVersion, r.GPU.AllowedCudaVersions = "12.6", []string{"12.8"}
		})), wantErr: "mutually exclusive"},
		{name: "bad allowed cuda", call: createWith(with(func(r *CreatePodRequest) { r.GPU.AllowedCudaVersions = []string{"twelve"} })), wantErr: `entry "twelve"`},
		{name: "bad cloud", call: createWith(with(func(r *CreatePodRequest) { r.Cloud = "PRIVATE" })), wantErr: `cloud "PRIVATE"`},
		{name: "negative disk", call: createWith(with(func(r *CreatePodRequest) { r.Disk = -5 })), wantErr: "disk -5"},
		{name: "empty env key", call: createWith(with(func(r *CreatePodRequest) { r.Env = map[string]string{"": "v"} })), wantErr: "env has an empty key"},
		{name: "two mount kinds", call: createWith(with(func(r *CreatePodRequest) {
			r.Mounts = &Mounts{Persistent: &PersistentMount{Size: 20, Path: "/w"}, Network: []NetworkMount{{VolumeID: "v", Path: "/n"}}}
		})), wantErr: "mutually exclusive"},
		{name: "small persistent mount", call: createWith(with(func(r *CreatePodRequest) { r.Mounts = &Mounts{Persistent: &PersistentMount{Size: 5, Path: "/w"}} })), wantErr: "size ≥ 10 GB"},
		{name: "two network mounts", call: createWith(with(func(r *CreatePodRequest) {
			r.Mounts = &Mounts{Network: []NetworkMount{{VolumeID: "a", Path: "/a"}, {VolumeID: "b", Path: "/b"}}}
		})), wantErr: "2 entries"},
		{name: "network mount without path", call: createWith(with(func(r *CreatePodRequest) { r.Mounts = &Mounts{Network: []NetworkMount{{VolumeID: "a"}}} })), wantErr: "want volumeId and path"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFake(t)
			client, _ := fake.client()

			err := tc.call(client)

			assert.ErrorContains(t, err, tc.wantErr)
			assert.Check(t, errors.Is(err, ErrInvalidRequest))
			assert.Equal(t, len(fake.received()), 0, "nothing was sent")
		})
	}
}

func TestInvalidArgumentNeverEchoesEnvValues(t *testing.T) {
	client := New("http://127.0.0.1:1", testAPIKey)
	r := CreatePodRequest{Name: "n", Image: "i", GPU: &CreateGPU{ID: "g", MinCudaVersion: "bad"}, Env: map[string]string{"RUNNER_JIT_CONFIG": "jit-secret-value"}}

	_, err := client.CreatePod(context.Background(), r)

	assert.ErrorContains(t, err, "gpu.minCudaVersion")
	assert.Check(t, is.Contains(err.Error(), "(invalid request)"))
	assert.Check(t, !strings.Contains(err.Error(), "jit-secret-value"))
}

func createWith(r CreatePodRequest) func(*Client) error {
	return func(c *Client) error {
		_, err := c.CreatePod(context.Background(), r)
		return err
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
