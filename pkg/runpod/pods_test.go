package runpod

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/org/runpod-gpu/pkg/sim/contract"
	"gotest.tools/v3/assert"
)

// examplePod returns the OpenAPI getPod example, renamed, as a JSON object.
func examplePod(t *testing.T, id string) map[string]any {
	t.Helper()
	examples := responseExamples(t, "getPod")
	assert.Assert(t, len(examples) > 0)
	var pod map[string]any
	assert.NilError(t, json.Unmarshal(examples[0].value, &pod))
	pod["id"], pod["name"] = id, "pod-"+id
	return pod
}

func TestListPodsFollowsCursors(t *testing.T) {
	page := func(t *testing.T, next any, ids ...string) string {
		pods := []any{}
		for _, id := range ids {
			pods = append(pods, examplePod(t, id))
		}
		body := map[string]any{"pods": pods}
		if next != nil {
			body["nextCursor"] = next
		}
		b, err := json.Marshal(body)
		assert.NilError(t, err)
		// The fake's pages are themselves what the contract (with delta 2) allows.
		assert.NilError(t, contract.RunPod().ValidateResponse("GET", "/v2/pods", 200, b))
		return string(b)
	}
	tests := []struct {
		name        string
		maxPages    int
		limit       int
		pages       func(t *testing.T) map[string]string // cursor → body
		wantIDs     []string
		wantQueries []string
		wantIs      error
		wantErr     string
	}{
		{
			name:        "one page",
			pages:       func(t *testing.T) map[string]string { return map[string]string{"": page(t, nil, "a", "b")} },
			wantIDs:     []string{"a", "b"},
			wantQueries: []string{""},
		},
		{
			name:  "three pages",
			limit: 2,
			pages: func(t *testing.T) map[string]string {
				return map[string]string{"": page(t, "c1", "a", "b"), "c1": page(t, "c2", "c", "d"), "c2": page(t, "", "e")}
			},
			wantIDs:     []string{"a", "b", "c", "d", "e"},
			wantQueries: []string{"limit=2", "cursor=c1&limit=2", "cursor=c2&limit=2"},
		},
		{
			name: "null cursor ends",
			pages: func(t *testing.T) map[string]string {
				return map[string]string{"": page(t, json.RawMessage("null"), "a")}
			},
			wantIDs:     []string{"a"},
			wantQueries: []string{""},
		},
		{
			name:     "bound reached with pages left",
			maxPages: 2,
			pages: func(t *testing.T) map[string]string {
				return map[string]string{"": page(t, "c1", "a"), "c1": page(t, "c2", "b"), "c2": page(t, "", "c")}
			},
			wantQueries: []string{"", "cursor=c1"},
			wantIs:      ErrPageBound,
			wantErr:     "runpod: list pods: page bound exceeded: 2 pages read and the server has more; the list is incomplete (page bound exceeded)",
		},
		{
			name:     "bound reached exactly",
			maxPages: 2,
			pages: func(t *testing.T) map[string]string {
				return map[string]string{"": page(t, "c1", "a"), "c1": page(t, "", "b")}
			},
			wantIDs:     []string{"a", "b"},
			wantQueries: []string{"", "cursor=c1"},
		},
		{
			name: "repeated cursor",
			pages: func(t *testing.T) map[string]string {
				return map[string]string{"": page(t, "c1", "a"), "c1": page(t, "c1", "b")}
			},
			wantQueries: []string{"", "cursor=c1"},
			wantIs:      ErrMalformedResponse,
			wantErr:     "page 2 repeats an earlier cursor",
		},
		{
			name:        "bare array",
			pages:       func(t *testing.T) map[string]string { return map[string]string{"": `[{"id":"a"}]`} },
			wantIDs:     []string{"a"},
			wantQueries: []string{""},
		},
		{
			name:        "no pods member",
			pages:       func(t *testing.T) map[string]string { return map[string]string{"": `{"items":[]}`} },
			wantQueries: []string{""},
			wantIs:      ErrMalformedResponse,
			wantErr:     `no "pods" array`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pages := tc.pages(t)
			fake := newFake(t)
			fake.handle("GET /v2/pods", func(w http.ResponseWriter, r *http.Request) {
				body, ok := pages[r.URL.Query().Get("cursor")]
				if !ok {
					writeRaw(w, 400, problemJSON(400, "unknown cursor"))
					return
				}
				writeRaw(w, 200, body)
			})
			var opts []Option
			if tc.maxPages > 0 {
				opts = append(opts, WithMaxListPages(tc.maxPages))
			}
			client, _ := fake.client(opts...)

			pods, err := client.ListPods(context.Background(), ListPodsQuery{Limit: tc.limit})

			var queries []string
			for _, r := range fake.received() {
				queries = append(queries, r.query)
			}
			assert.DeepEqual(t, queries, tc.wantQueries)
			if tc.wantIs != nil {
				assert.Check(t, errors.Is(err, tc.wantIs), "got %v", err)
				assert.ErrorContains(t, err, tc.wantErr)
				assert.Check(t, pods == nil, "an incomplete listing returns no pods")
				return
			}
			assert.NilError(t, err)
			var ids []string
			for _, p := range pods {
				ids = append(ids, p.ID)
			}
			assert.DeepEqual(t, ids, tc.wantIDs)
		})
	}
}

func TestListPodsQueryNames(t *testing.T) {
	// The client's delta-2 names are the contract package's.
	assert.Equal(t, listPodsLimitParam, contract.ListPodsLimitParam)
	assert.Equal(t, listPodsCursorParam, contract.ListPodsCursorParam)

	fake := newFake(t)
	fake.answer("GET /v2/pods", 200, `{"pods":[]}`)
	client, _ := fake.client()
	pods, err := client.ListPods(context.Background(), ListPodsQuery{IncludeClusterPods: true})
	assert.NilError(t, err)
	assert.Equal(t, len(pods), 0)
	assert.Equal(t, fake.received()[0].query, "includeClusterPods=true")
}

func TestCreatePod(t *testing.T) {
	fake := newFake(t)
	var sent CreatePodRequest
	fake.handle("POST /v2/pods", func(w http.ResponseWriter, r *http.Request) {
		assert.Check(t, json.NewDecoder(r.Body).Decode(&sent))
		pod := examplePod(t, "newpod")
		pod["name"] = sent.Name
		pod["status"], pod["startedAt"], pod["runtime"] = "PROVISIONING", nil, nil
		writeJSON(w, http.StatusCreated, pod)
	})
	client, _ := fake.client()
	req := CreatePodRequest{
		Name: "rg-1-1-c1", Image: "ghcr.io/actions/actions-runner@sha256:abc",
		GPU:  &CreateGPU{ID: "NVIDIA GeForce RTX 4090", Count: 1, MinCudaVersion: "12.6"},
		Disk: 40, Env: map[string]string{"RUNNER_JIT_CONFIG": "jit"},
		Entrypoint: []string{"/bin/bash", "-c"}, Cmd: []string{"exec /start.sh"},
	}

	pod, err := client.CreatePod(context.Background(), req)

	assert.NilError(t, err)
	assert.DeepEqual(t, sent, req)
	assert.Equal(t, pod.ID, "newpod")
	assert.Equal(t, pod.Status, PodProvisioning)
	assert.Check(t, !pod.StartedAt.Known())
	assert.Check(t, pod.Runtime == nil)
	assert.Equal(t, fake.received()[0].userAgent, "runpod-gpu/dev")
}

func TestDeletePod(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		body    string
		wantErr error
	}{
		{name: "deleted", status: http.StatusNoContent},
		{name: "already gone", status: http.StatusNotFound, body: problemJSON(404, "pod not found"), wantErr: ErrNotFound},
		{name: "cluster member", status: http.StatusConflict, body: problemJSON(409, "pod belongs to a cluster"), wantErr: ErrConflict},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFake(t)
			fake.answer("DELETE /v2/pods/{id}", tc.status, tc.body)
			client, _ := fake.client()

			err := client.DeletePod(context.Background(), "p1")

			if tc.wantErr == nil {
				assert.NilError(t, err)
			} else {
				assert.Check(t, errors.Is(err, tc.wantErr), "got %v", err)
			}
			got := fake.received()
			assert.Equal(t, len(got), 1)
			assert.Equal(t, got[0].method+" "+got[0].path, "DELETE /v2/pods/p1")
		})
	}
}

func TestDeleteIsRetried(t *testing.T) {
	fake := newFake(t)
	fake.sequence("DELETE /v2/pods/{id}",
		func(w http.ResponseWriter, r *http.Request) { writeRaw(w, 503, "") },
		func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	client, _ := fake.client()

	assert.NilError(t, client.DeletePod(context.Background(), "p1"))
	assert.Equal(t, len(fake.received()), 2, "DELETE is idempotent, so a 503 is retried")
}

func TestPodAction(t *testing.T) {
	tests := []struct {
		action     string
		status     int
		wantPod    bool
		wantStatus PodStatus
		wantErr    error
	}{
		{action: ActionStop, status: 200, wantPod: true, wantStatus: PodExited},
		{action: ActionStart, status: 200, wantPod: true, wantStatus: PodRunning},
		{action: ActionRestart, status: 409, wantErr: ErrConflict},
		{action: ActionTerminate, status: 204},
	}
	for _, tc := range tests {
		t.Run(tc.action, func(t *testing.T) {
			fake := newFake(t)
			fake.handle("POST /v2/pods/{id}/action", func(w http.ResponseWriter, r *http.Request) {
				switch tc.status {
				case 200:
					pod := examplePod(t, r.PathValue("id"))
					pod["status"] = string(tc.wantStatus)
					writeJSON(w, 200, pod)
				case 204:
					w.WriteHeader(http.StatusNoContent)
				default:
					writeRaw(w, tc.status, problemJSON(tc.status, "action not valid for current pod status"))
				}
			})
			client, _ := fake.client()

			pod, err := client.PodAction(context.Background(), "p1", tc.action)

			got := fake.received()
			assert.Equal(t, len(got), 1)
			assert.Equal(t, string(got[0].body), fmt.Sprintf(`{"action":%q}`, tc.action))
			if tc.wantErr != nil {
				assert.Check(t, errors.Is(err, tc.wantErr))
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, pod != nil, tc.wantPod)
			if tc.wantPod {
				assert.Equal(t, pod.Status, tc.wantStatus)
			}
		})
	}
}

func TestMalformedSuccessAnswers(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		wantErr string
	}{
		{name: "not JSON", body: "<html>ok</html>", wantErr: "runpod: get pod p1: 200 malformed response: invalid character '<'"},
		{name: "wrong type", body: `{"id":42}`, wantErr: "cannot unmarshal number"},
		{name: "bad time", body: `{"id":"p1","startedAt":"soon"}`, wantErr: `timestamp "soon"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFake(t)
			fake.answer("GET /v2/pods/{id}", 200, tc.body)
			client, _ := fake.client()

			_, err := client.GetPod(context.Background(), "p1")

			assert.ErrorContains(t, err, tc.wantErr)
			assert.Check(t, errors.Is(err, ErrMalformedResponse))
		})
	}
}

func TestUnusableRecords(t *testing.T) {
	createReq := CreatePodRequest{Name: "rg-1-1-c1", Image: "img@sha256:abc", GPU: &CreateGPU{ID: "NVIDIA L40S", Count: 1}}
	tests := []struct {
		name    string
		route   string
		answer  func(t *testing.T) any
		call    func(c *Client) error
		wantErr string
	}{
		{
			name: "get answers another pod's record", route: "GET /v2/pods/{id}",
			answer:  func(t *testing.T) any { return examplePod(t, "other") },
			call:    func(c *Client) error { _, err := c.GetPod(context.Background(), "p1"); return err },
			wantErr: `runpod: get pod p1: unusable record: the answer describes pod "other" (unusable record)`,
		},
		{
			name: "create answers {}", route: "POST /v2/pods",
			answer:  func(*testing.T) any { return map[string]any{} },
			call:    func(c *Client) error { _, err := c.CreatePod(context.Background(), createReq); return err },
			wantErr: `runpod: create pod "rg-1-1-c1": unusable record: the answer names no pod id (unusable record)`,
		},
		{
			name: "create answers a malformed id", route: "POST /v2/pods",
			answer: func(t *testing.T) any {
				p := examplePod(t, "../p9")
				p["name"] = "rg-1-1-c1"
				return p
			},
			call:    func(c *Client) error { _, err := c.CreatePod(context.Background(), createReq); return err },
			wantErr: `the answer names a malformed pod id "../p9"`,
		},
		{
			name: "create answers another pod's name", route: "POST /v2/pods",
			answer: func(t *testing.T) any {
				p := examplePod(t, "p9")
				p["name"] = "rg-1-1-c2"
				return p
			},
			call:    func(c *Client) error { _, err := c.CreatePod(context.Background(), createReq); return err },
			wantErr: `the answer describes pod "p9" named "rg-1-1-c2", not the requested name`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFake(t)
			fake.handle(tc.route, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, tc.answer(t)) })
			client, _ := fake.client()

			err := tc.call(client)

			assert.ErrorContains(t, err, tc.wantErr)
			assert.Check(t, errors.Is(err, ErrUnusableRecord))
			var apiErr *APIError
			assert.Assert(t, errors.As(err, &apiErr))
			assert.Equal(t, apiErr.Kind, KindUnusableRecord)
		})
	}
}

// A malformed pod id is refused before anything is sent: sent, the API
// would answer 404, which a deletion takes for "already gone".
func TestMalformedPodIDsAreNeverSent(t *testing.T) {
	ctx := context.Background()
	for _, id := range []string{"a/b", "../pods", "p1 ", "p1\nx", `p"1`, "-p1", strings.Repeat("p", 65), "p1?x=1", "%2e%2e"} {
		for name, call := range map[string]func(*Client) error{
			"get":    func(c *Client) error { _, err := c.GetPod(ctx, id); return err },
			"delete": func(c *Client) error { return c.DeletePod(ctx, id) },
			"action": func(c *Client) error { _, err := c.PodAction(ctx, id, ActionStop); return err },
		} {
			t.Run(fmt.Sprintf("%s %q", name, id), func(t *testing.T) {
				fake := newFake(t)
				client, _ := fake.client()

				err := call(client)

				assert.Check(t, errors.Is(err, ErrInvalidRequest), "got %v", err)
				assert.Check(t, !errors.Is(err, ErrNotFound))
				assert.ErrorContains(t, err, "is malformed")
				assert.Equal(t, len(fake.received()), 0, "nothing was sent")
			})
		}
	}
	for _, id := range []string{"xedezhzb9la3ye", "pod_abc123", "p1", strings.Repeat("p", 64)} {
		assert.Check(t, ValidPodID(id), id)
	}
}
