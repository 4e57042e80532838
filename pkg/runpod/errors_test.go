package runpod

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/org/runpod-gpu/pkg/redact"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestErrorClassification(t *testing.T) {
	createReq := CreatePodRequest{Name: "rg-1-1-c1", Image: "img", GPU: &CreateGPU{ID: "NVIDIA L4", Count: 1}}
	tests := []struct {
		name     string
		create   bool // call CreatePod instead of GetPod
		status   int
		body     string
		wantKind ErrorKind
		wantIs   error
		wantErr  string
	}{
		{name: "capacity on create", create: true, status: 400, body: problemJSON(400, "There are no instances currently available"),
			wantKind: KindCapacity, wantIs: ErrCapacity,
			wantErr: `runpod: create pod "rg-1-1-c1": 400 Bad Request: There are no instances currently available (capacity)`},
		{name: "unexplained 400 on create counts as capacity", create: true, status: 400, body: problemJSON(400, "request could not be processed"),
			wantKind: KindCapacity, wantIs: ErrCapacity},
		{name: "rule violation on create", create: true, status: 400, body: problemJSON(400, "gpu.minCudaVersion and gpu.allowedCudaVersions are mutually exclusive"),
			wantKind: KindBadRequest, wantIs: ErrBadRequest},
		{name: "rule and capacity words read as capacity", create: true, status: 400, body: problemJSON(400, "invalid placement: no capacity in US-TX-3"),
			wantKind: KindCapacity, wantIs: ErrCapacity},
		{name: "400 elsewhere", status: 400, body: problemJSON(400, "bad id"), wantKind: KindBadRequest, wantIs: ErrBadRequest},
		{name: "401", status: 401, body: problemJSON(401, "missing bearer token"), wantKind: KindUnauthorized, wantIs: ErrUnauthorized,
			wantErr: "runpod: get pod p1: 401 Unauthorized: missing bearer token (unauthorized)"},
		{name: "402", create: true, status: 402, body: problemJSON(402, "Your account balance is too low"), wantKind: KindInsufficientBalance, wantIs: ErrInsufficientBalance},
		{name: "403", create: true, status: 403, body: problemJSON(403, "access denied"), wantKind: KindForbidden, wantIs: ErrForbidden},
		{name: "404", status: 404, body: problemJSON(404, "pod not found"), wantKind: KindNotFound, wantIs: ErrNotFound},
		{name: "404 in v1 shape", status: 404, body: `{"error":"pod not found","status":404}`, wantKind: KindNotFound, wantIs: ErrNotFound,
			wantErr: "runpod: get pod p1: 404 Not Found: pod not found (not found)"},
		{name: "409", status: 409, body: problemJSON(409, "pod belongs to a cluster"), wantKind: KindConflict, wantIs: ErrConflict},
		{name: "422 with field errors", create: true, status: 422,
			body:     `{"title":"Unprocessable Entity","status":422,"detail":"Request validation failed.","errors":["$: additional properties 'bogus' not allowed"]}`,
			wantKind: KindInvalidRequest, wantIs: ErrInvalidRequest,
			wantErr: `runpod: create pod "rg-1-1-c1": 422 Unprocessable Entity: Request validation failed. [$: additional properties 'bogus' not allowed] (invalid request)`},
		{name: "422 with object errors", status: 422, body: `{"title":"Unprocessable Entity","status":422,"detail":"x","errors":[{"message":"$.gpu: bad"}]}`,
			wantKind: KindInvalidRequest, wantIs: ErrInvalidRequest, wantErr: "[$.gpu: bad]"},
		{name: "429 after retries", status: 429, body: problemJSON(429, "rate limit exceeded for the minute window"), wantKind: KindRateLimited, wantIs: ErrRateLimited},
		{name: "500 after retries", status: 500, body: problemJSON(500, "upstream"), wantKind: KindServer, wantIs: ErrServer},
		{name: "408 after retries", status: 408, body: "", wantKind: KindServer, wantIs: ErrServer,
			wantErr: "runpod: get pod p1: 408 Request Timeout (server error)"},
		{name: "503 on create", create: true, status: 503, body: problemJSON(503, "try later"), wantKind: KindServer, wantIs: ErrServer},
		{name: "html error page", status: 502, body: "<html><body>\n<h1>502 Bad Gateway</h1>\n</body></html>", wantKind: KindServer, wantIs: ErrServer,
			wantErr: "runpod: get pod p1: 502 Bad Gateway: <html><body> <h1>502 Bad Gateway</h1> </body></html> (server error)"},
		{name: "JSON string body", create: true, status: 500, body: `"create pod: Spot pods are no longer offered"`, wantKind: KindServer, wantIs: ErrServer,
			wantErr: `500 Internal Server Error: create pod: Spot pods are no longer offered (server error)`},
		{name: "unclassified status", status: 418, body: problemJSON(418, "teapot"), wantKind: KindUnexpected, wantIs: ErrUnexpected},
		{name: "unknown status text", status: 599, body: "", wantKind: KindServer, wantIs: ErrServer, wantErr: "runpod: get pod p1: 599 error (server error)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFake(t)
			fake.answer("GET /v2/pods/{id}", tc.status, tc.body)
			fake.answer("POST /v2/pods", tc.status, tc.body)
			client, _ := fake.client()

			var err error
			if tc.create {
				_, err = client.CreatePod(context.Background(), createReq)
			} else {
				_, err = client.GetPod(context.Background(), "p1")
			}

			var apiErr *APIError
			assert.Assert(t, errors.As(err, &apiErr), "got %v", err)
			assert.Equal(t, apiErr.Kind, tc.wantKind)
			assert.Equal(t, apiErr.StatusCode, tc.status)
			if tc.wantIs != nil {
				assert.Check(t, errors.Is(err, tc.wantIs))
			}
			for _, other := range []error{ErrCapacity, ErrNotFound, ErrTransport, ErrServer, ErrRateLimited} {
				if other != tc.wantIs {
					assert.Check(t, !errors.Is(err, other), "%v must not match %v", err, other)
				}
			}
			if tc.wantErr != "" {
				assert.Check(t, is.Contains(err.Error(), tc.wantErr))
			}
		})
	}
}

func TestErrorsAreRedacted(t *testing.T) {
	jitConfig := base64.StdEncoding.EncodeToString([]byte(`{"runner":"rg-1-1-c1","token":"AAJIT-secret"}`))
	echo := `{"title":"Unprocessable Entity","status":422,"detail":"key ` + testAPIKey + ` rejected",` +
		`"errors":["$.env.RUNNER_JIT_CONFIG: ` + jitConfig + ` is too long"]}`
	fake := newFake(t)
	fake.answer("GET /v2/pods/{id}", 422, echo)
	fake.answer("DELETE /v2/pods/{id}", 500, "proxy says: Bearer "+testAPIKey)
	client, tp := fake.client()
	client.Policy().Redactor().Add(jitConfig)

	_, getErr := client.GetPod(context.Background(), "p1")
	deleteErr := client.DeletePod(context.Background(), "p1")

	for _, err := range []error{getErr, deleteErr} {
		var apiErr *APIError
		assert.Assert(t, errors.As(err, &apiErr))
		fields := strings.Join(append([]string{err.Error(), apiErr.Title, apiErr.Detail}, apiErr.Errors...), "\n")
		assert.Check(t, !strings.Contains(fields, testAPIKey), fields)
		assert.Check(t, !strings.Contains(fields, jitConfig), fields)
		assert.Check(t, is.Contains(fields, redact.Redacted))
	}
	assert.Check(t, is.Contains(getErr.Error(), "key *** rejected"))
	assert.Check(t, !strings.Contains(tp.log(), testAPIKey), "policy log lines are redacted too")
	assert.Check(t, is.Contains(tp.log(), "proxy says: Bearer ***"))
}

func TestTransportErrors(t *testing.T) {
	tests := []struct {
		name         string
		create       bool
		wantRequests int
	}{
		{name: "lost create answer is not re-sent", create: true, wantRequests: 1},
		{name: "lost read answer is retried", create: false, wantRequests: reqpolicy.DefaultMaxAttempts},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFake(t)
			fake.handle("POST /v2/pods", hangUp)
			fake.handle("GET /v2/pods/{id}", hangUp)
			client, _ := fake.client()

			var err error
			if tc.create {
				_, err = client.CreatePod(context.Background(), CreatePodRequest{Name: "rg-1-1-c1", Image: "img", GPU: &CreateGPU{ID: "NVIDIA L4"}})
			} else {
				_, err = client.GetPod(context.Background(), "p1")
			}

			assert.Check(t, errors.Is(err, ErrTransport), "got %v", err)
			assert.Equal(t, len(fake.received()), tc.wantRequests)
		})
	}
}

func TestCreateAnswered5xxIsNotResent(t *testing.T) {
	fake := newFake(t)
	fake.sequence("POST /v2/pods",
		func(w http.ResponseWriter, r *http.Request) { writeRaw(w, 503, problemJSON(503, "upstream")) },
		func(w http.ResponseWriter, r *http.Request) { t.Error("create was re-sent") })
	fake.answer("GET /v2/pods/{id}", 200, `{"id":"p1","status":"RUNNING"}`)
	client, tp := fake.client()

	_, err := client.CreatePod(context.Background(), CreatePodRequest{Name: "rg-1-1-c1", Image: "img", GPU: &CreateGPU{ID: "NVIDIA L4"}})
	assert.Check(t, errors.Is(err, ErrServer))
	assert.Equal(t, len(tp.waits), 0)

	// The 503 set the shared cooldown: the next call waits for it first.
	_, err = client.GetPod(context.Background(), "p1")
	assert.NilError(t, err)
	assert.DeepEqual(t, tp.waits, []time.Duration{time.Second})
	assert.Equal(t, len(fake.received()), 2)
}

func TestReadsAreRetried(t *testing.T) {
	fake := newFake(t)
	fake.sequence("GET /v2/pods/{id}",
		func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "7")
			writeRaw(w, 429, problemJSON(429, "rate limit exceeded for the minute window"))
		},
		func(w http.ResponseWriter, r *http.Request) { writeRaw(w, 502, "") },
		func(w http.ResponseWriter, r *http.Request) { writeRaw(w, 200, `{"id":"p1","status":"RUNNING"}`) })
	client, tp := fake.client()

	pod, err := client.GetPod(context.Background(), "p1")

	assert.NilError(t, err)
	assert.Equal(t, pod.Status, PodRunning)
	assert.DeepEqual(t, tp.waits, []time.Duration{7 * time.Second, 2 * time.Second})
}

func TestWaitBeyondDeadline(t *testing.T) {
	fake := newFake(t)
	fake.handle("GET /v2/pods/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "120")
		writeRaw(w, 429, problemJSON(429, "rate limit exceeded for the minute window"))
	})
	client, tp := fake.client()
	ctx, cancel := tp.deadline(30 * time.Second)
	defer cancel()

	_, err := client.GetPod(ctx, "p1")

	var apiErr *APIError
	assert.Assert(t, errors.As(err, &apiErr))
	assert.Equal(t, apiErr.Kind, KindWaitExceedsDeadline)
	assert.Equal(t, apiErr.StatusCode, 429)
	assert.Check(t, errors.Is(err, reqpolicy.ErrWaitExceedsDeadline))
	var waitErr *reqpolicy.WaitError
	assert.Assert(t, errors.As(err, &waitErr))
	assert.Equal(t, waitErr.Wait, 2*time.Minute)
	assert.Equal(t, len(tp.waits), 0, "failed without sleeping")
	assert.Equal(t, len(fake.received()), 1)
	assert.Equal(t, err.Error(), "runpod: get pod p1: wait 2m0s (Retry-After after 429 Too Many Requests) exceeds the remaining deadline 30s (wait exceeds deadline)")
}

func TestErrorKindString(t *testing.T) {
	assert.Equal(t, KindCapacity.String(), "capacity")
	assert.Equal(t, ErrorKind(99).String(), "ErrorKind(99)")
	for kind := KindUnexpected; kind <= KindPageBound; kind++ {
		assert.Check(t, !strings.HasPrefix(kind.String(), "ErrorKind("), "kind %d has a name", int(kind))
		_, hasSentinel := kindSentinels[kind]
		assert.Check(t, hasSentinel || kind == KindWaitExceedsDeadline, "kind %s has a sentinel", kind)
	}
}
