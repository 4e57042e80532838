package registry

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/sim/registrysim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

var digest = "sha256:" + strings.Repeat("ab", 32)

func TestResolve(t *testing.T) {
	srv := httptest.NewServer(registrysim.Handler(map[string]string{"actions/actions-runner:latest": digest}))
	defer srv.Close()
	r := &Resolver{APIURL: srv.URL}
	got, err := r.Resolve(context.Background(), "ghcr.io/actions/actions-runner:latest")
	assert.NilError(t, err)
	assert.Equal(t, got, "ghcr.io/actions/actions-runner:latest@"+digest)

	pinned := "ghcr.io/actions/actions-runner@" + digest
	got, err = (&Resolver{APIURL: "http://127.0.0.1:1"}).Resolve(context.Background(), pinned)
	assert.NilError(t, err, "a pinned image needs no request")
	assert.Equal(t, got, pinned)

	_, err = r.Resolve(context.Background(), "ghcr.io/actions/missing:latest")
	assert.ErrorContains(t, err, "registry answered 404")
	// A refused connection is retried like any transport error; the fake
	// clock's sleeper makes the backoff cost nothing.
	clock := simclock.NewVirtual(time.Now())
	noWait := reqpolicy.New(reqpolicy.WithClock(clock), reqpolicy.WithSleeper((&sleeps{clock: clock}).sleep))
	_, err = (&Resolver{APIURL: "http://127.0.0.1:1", Policy: noWait}).Resolve(context.Background(), "ghcr.io/actions/actions-runner:latest")
	assert.ErrorContains(t, err, "resolve ghcr.io/actions/actions-runner:latest at registry http://127.0.0.1:1: ")
}

func TestResolveRejectsDigestlessAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Header().Set("Docker-Content-Digest", "md5:x") }))
	defer srv.Close()
	_, err := (&Resolver{APIURL: srv.URL}).Resolve(context.Background(), "ghcr.io/a/b:1")
	assert.ErrorContains(t, err, "no usable Docker-Content-Digest")
}

func TestParse(t *testing.T) {
	tests := []struct{ in, want, wantErr string }{
		{in: "ghcr.io/actions/actions-runner:latest", want: "ghcr.io/actions/actions-runner:latest"},
		{in: "ghcr.io/actions/actions-runner", want: "ghcr.io/actions/actions-runner:latest"},
		{in: "localhost:5000/a/b:v1.2", want: "localhost:5000/a/b:v1.2"},
		{in: "ghcr.io/a/b:1@" + digest, want: "ghcr.io/a/b:1@" + digest},
		{in: "ubuntu:22.04", wantErr: "no registry host"},
		{in: "ghcr.io/a/b@sha256:xyz", wantErr: "malformed digest"},
		{in: "ghcr.io/a/b:$(id)", wantErr: "malformed tag"},
		{in: "ghcr.io/A;B/c:1", wantErr: "malformed host or repository"},
		{in: "ghcr.io/a b/c", wantErr: "malformed host or repository"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			r, err := Parse(tc.in)
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, r.String(), tc.want)
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add("ghcr.io/actions/actions-runner:latest")
	f.Add("h.io/a@" + digest)
	f.Fuzz(func(t *testing.T, s string) {
		r, err := Parse(s)
		if err != nil {
			return
		}
		again, err := Parse(r.String())
		if err != nil || again != r {
			t.Fatalf("%q parses to %+v, which does not round-trip", s, r)
		}
		if strings.ContainsAny(r.String(), " ;$`'\"\\\n") {
			t.Fatalf("%q accepted with shell metacharacters", s)
		}
	})
}

// sleeps records the policy's waits and advances the clock instead of sleeping.
type sleeps struct {
	clock *simclock.Virtual
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	s.clock.Advance(d)
	return ctx.Err()
}

// answer is what the scripted registry does with one request: stall (hold it
// until the client gives up), or answer status with headers; a zero answer
// serves the real Handler.
type answer struct {
	stall  bool
	status int
	header map[string]string
}

// TestResolveBoundsEveryRequest drives the resolver through the request policy
// against a loopback registry whose answers are scripted per request.
func TestResolveBoundsEveryRequest(t *testing.T) {
	const image = "ghcr.io/actions/actions-runner:latest"
	tests := []struct {
		name           string
		answers        []answer // by request, in order; past the end, the real Handler answers
		timeout        time.Duration
		attemptTimeout time.Duration
		wantErr        []string
		wantRequests   int
		wantWaits      []time.Duration
	}{
		{
			name: "a stalled registry ends the resolution at its deadline", answers: []answer{{stall: true}},
			timeout: 200 * time.Millisecond, wantRequests: 1,
			wantErr: []string{"resolve " + image + " at registry http://127.0.0.1:", "no answer within the 200ms resolution deadline"},
		},
		{
			name: "a stalled attempt is retried inside the deadline", answers: []answer{{stall: true}},
			attemptTimeout: 50 * time.Millisecond, wantRequests: 4, wantWaits: []time.Duration{time.Second},
		},
		{
			name: "Retry-After beyond the deadline fails at once", answers: []answer{{status: 429, header: map[string]string{"Retry-After": "1000"}}},
			wantRequests: 1, wantErr: []string{"resolve " + image + " at registry http://127.0.0.1:", "does not fit the 1m0s resolution deadline", "Retry-After after 429"},
		},
		{
			name: "Retry-After on the token realm beyond the deadline fails at once", answers: []answer{{}, {status: 429, header: map[string]string{"Retry-After": "120"}}},
			wantRequests: 2, wantErr: []string{"registry token", "Retry-After after 429"},
		},
		{
			name: "a transient 503 is retried", answers: []answer{{status: 503}},
			wantRequests: 4, wantWaits: []time.Duration{time.Second},
		},
		{
			name: "Retry-After within the deadline is waited out", answers: []answer{{status: 429, header: map[string]string{"Retry-After": "7"}}},
			wantRequests: 4, wantWaits: []time.Duration{7 * time.Second},
		},
		{
			name: "a registry that keeps failing is given up on", answers: []answer{{status: 503}, {status: 503}, {status: 503}, {status: 503}, {status: 503}},
			wantRequests: 5, wantWaits: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second},
			wantErr: []string{"resolve " + image + " at registry http://127.0.0.1:", "registry answered 503"},
		},
		{
			name: "a missing image is an error at once", answers: []answer{{status: 404}},
			wantRequests: 1, wantErr: []string{"registry answered 404"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			real := registrysim.Handler(map[string]string{"actions/actions-runner:latest": digest})
			var mu sync.Mutex
			requests := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				n := requests
				requests++
				mu.Unlock()
				if n >= len(tc.answers) || !tc.answers[n].stall && tc.answers[n].status == 0 {
					real.ServeHTTP(w, r)
					return
				}
				a := tc.answers[n]
				if a.stall {
					select { // hold the request until the client gives up
					case <-r.Context().Done():
					case <-release:
					}
					return
				}
				for k, v := range a.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(a.status)
			}))
			defer srv.Close()
			defer close(release)
			clock := simclock.NewVirtual(time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC))
			rec := &sleeps{clock: clock}
			policy := reqpolicy.New(reqpolicy.WithClock(clock), reqpolicy.WithSleeper(rec.sleep), reqpolicy.WithJitter(func() float64 { return 1 }))
			r := &Resolver{APIURL: srv.URL, Policy: policy, Timeout: tc.timeout, AttemptTimeout: tc.attemptTimeout}
			// A guard far above every bound under test: the resolver, not
			// this context, must end a stall.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()

			start := time.Now()
			got, err := r.Resolve(ctx, image)
			elapsed := time.Since(start)

			if len(tc.wantErr) == 0 {
				assert.NilError(t, err)
				assert.Equal(t, got, image+"@"+digest)
			} else {
				assert.Assert(t, err != nil, "resolved to %s", got)
				for _, want := range tc.wantErr {
					assert.Check(t, is.Contains(err.Error(), want))
				}
			}
			assert.Check(t, elapsed < 10*time.Second, "resolution took %s", elapsed)
			mu.Lock()
			assert.Check(t, is.Equal(requests, tc.wantRequests))
			mu.Unlock()
			assert.Check(t, is.DeepEqual(rec.waits, tc.wantWaits))
		})
	}
}

// TestResolveCancelled says a cancelled run is a cancellation, not a stalled registry.
func TestResolveCancelled(t *testing.T) {
	started := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		<-r.Context().Done()
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }() // the run is cancelled while the registry stalls
	_, err := (&Resolver{APIURL: srv.URL}).Resolve(ctx, "ghcr.io/a/b:1")
	assert.ErrorContains(t, err, "resolve ghcr.io/a/b:1 at registry "+srv.URL+": cancelled")
	assert.Check(t, errors.Is(err, context.Canceled))
}

// The configuration's image key (and its schema's pattern) accepts exactly
// the references provision resolves, up to the key's length limit: a
// configuration that validates never fails later on its image's form.
func FuzzConfigImageIsParsed(f *testing.F) {
	for _, s := range []string{config.DefaultImage, "ghcr.io/org/runner:v1", "localhost:5000/runner@sha256:" + strings.Repeat("0", 64),
		"myorg/runner:latest", "runner", "a.b/c", "registry.example.com:443/a/b/c:tag_1.2-x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, err := Parse(s)
		switch valid := config.ValidImage(s); {
		case valid && err != nil:
			t.Fatalf("the configuration accepts %q, provision refuses it: %v", s, err)
		case !valid && err == nil && len(s) <= 255:
			t.Fatalf("provision accepts %q, the configuration refuses it", s)
		}
	})
}

// Docker Hub's images are written docker.io/… but resolved at its registry
// API, registry-1.docker.io, its official images under library/; every other
// registry answers at its own host.
func TestAPIEndpoint(t *testing.T) {
	for _, tt := range []struct {
		image, wantBase, wantRepo string
	}{
		{"ghcr.io/actions/actions-runner:latest", "https://ghcr.io", "actions/actions-runner"},
		{"localhost:5000/runner", "https://localhost:5000", "runner"},
		{"docker.io/runpod/pytorch:2.4.0", "https://registry-1.docker.io", "runpod/pytorch"},
		{"docker.io/ubuntu:24.04", "https://registry-1.docker.io", "library/ubuntu"},
		{"index.docker.io/library/ubuntu:24.04", "https://registry-1.docker.io", "library/ubuntu"},
	} {
		ref, err := Parse(tt.image)
		assert.NilError(t, err)
		base, api := apiEndpoint(ref)
		assert.Check(t, is.Equal(base, tt.wantBase), tt.image)
		assert.Check(t, is.Equal(api.Repository, tt.wantRepo), tt.image)
		assert.Check(t, is.Equal(api.Tag, ref.Tag), tt.image)
	}
}
