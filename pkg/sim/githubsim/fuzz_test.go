package githubsim

import (
	"bytes"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"

	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

func FuzzDecodeJITConfig(f *testing.F) {
	f.Add("eyJydW5uZXJfaWQiOjUsInNlY3JldCI6InMifQ==")
	f.Add("")
	f.Add("%%%")
	f.Add("bnVsbA==")
	f.Fuzz(func(t *testing.T, encoded string) {
		p, err := decodeJITConfig(encoded)
		if err == nil && (p.Secret == "" || p.RunnerID == 0) {
			t.Fatalf("accepted a config without secret or runner id: %+v", p)
		}
	})
}

func FuzzParseCreated(f *testing.F) {
	for _, seed := range []string{"2026-01-02", ">=2026-01-02", "<2026-01-02T10:00:00Z", "2026-01-01..2026-01-31", "*..2026-01-31", "*..*", "..", ">"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, v string) {
		r, ok := parseCreated(v)
		if ok && !r.from.IsZero() && !r.to.IsZero() && r.to.Before(r.from) && r.contains(r.from) {
			t.Fatalf("%q: empty range %v..%v contains its start", v, r.from, r.to)
		}
	})
}

func FuzzVerifyAppJWT(f *testing.F) {
	f.Add("eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiI3IiwiaWF0IjoxLCJleHAiOjYwfQ.c2ln")
	f.Add("a.b.c")
	f.Add("")
	key, _ := rsaKey(&testing.T{}, 0)
	s := New(WithApp(App{ID: 7, PublicKey: &key.PublicKey, InstallationID: 1}))
	f.Fuzz(func(t *testing.T, token string) {
		if _, err := s.verifyAppJWT(token); err == nil {
			t.Fatalf("accepted an unsigned token %q", token)
		}
	})
}

// fuzzHandler sends arbitrary bodies to a POST endpoint: the server must answer with one of
// the statuses GitHub documents for it, never panic or 500.
func fuzzHandler(f *testing.F, target string, allowed []int, seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	// The budget is lifted so millions of fuzz calls never meet the primary rate limit.
	s := New(WithClock(simclock.NewVirtual(start)), WithRateLimit(math.MaxInt), WithToken(appToken, Identity{AppID: gateAppID, AppSlug: gateAppSlug}))
	if err := s.AddRepo(Repo{Owner: "octo", Name: "gpu-lib"}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequest("POST", "http://api.github.test"+target, bytes.NewReader(body))
		req.Header.Set("Authorization", "token "+appToken)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if !slices.Contains(allowed, rec.Code) {
			t.Fatalf("status %d for body %q: %s", rec.Code, body, rec.Body)
		}
	})
}

func FuzzCreateCheckRunBody(f *testing.F) {
	fuzzHandler(f, "/repos/octo/gpu-lib/check-runs",
		[]int{http.StatusCreated, http.StatusBadRequest, http.StatusUnprocessableEntity},
		`{"name":"g","head_sha":"`+sha('a')+`","conclusion":"success","output":{"title":"t","summary":"s"}}`,
		`{"name":"g","head_sha":"`+sha('a')+`","status":"completed"}`,
		`{"name":"","started_at":"yesterday"}`, `[]`, `null`)
}

func FuzzGenerateJITConfigBody(f *testing.F) {
	fuzzHandler(f, "/repos/octo/gpu-lib/actions/runners/generate-jitconfig",
		[]int{http.StatusCreated, http.StatusBadRequest, http.StatusNotFound, http.StatusConflict, http.StatusUnprocessableEntity},
		`{"name":"r","runner_group_id":1,"labels":["gpu"]}`, `{"name":"r","labels":["gpu"]}`, `{"runner_group_id":"1"}`)
}

func FuzzConnectBody(f *testing.F) {
	fuzzHandler(f, "/_sim/runners/connect",
		[]int{http.StatusOK, http.StatusBadRequest, http.StatusUnauthorized, http.StatusConflict, http.StatusGone},
		`{"jit_config":"eyJydW5uZXJfaWQiOjUsInNlY3JldCI6InMifQ=="}`, `{}`, `{"jit_config":7}`)
}

// Any body to the GraphQL endpoint is answered 200 (data or errors) or 400 (not JSON).
func FuzzGraphQLBody(f *testing.F) {
	fuzzHandler(f, "/graphql", []int{http.StatusOK, http.StatusBadRequest},
		`{"query":"query { repository { pullRequest { timelineItems(last: $last, itemTypes: [HEAD_REF_FORCE_PUSHED_EVENT, PULL_REQUEST_COMMIT]) { nodes { __typename } } } } }","variables":{"owner":"octo","name":"gpu-lib","number":1,"last":5}}`,
		`{"query":"timelineItems(last: $last, itemTypes: [HEAD_REF_FORCE_PUSHED_EVENT, PULL_REQUEST_COMMIT])","variables":{"number":1e300,"last":1}}`,
		`{"query":"{ viewer { login } }"}`, `[]`, `null`)
}

func FuzzPageParams(f *testing.F) {
	f.Add("30", "1")
	f.Add("1000", "-4")
	f.Add("x", "99999999999999999999")
	f.Fuzz(func(t *testing.T, perPage, page string) {
		pp, p := pageParams(url.Values{"per_page": {perPage}, "page": {page}})
		if pp < 1 || pp > maxPerPage || p < 1 {
			t.Fatalf("per_page=%q page=%q gave %d, %d", perPage, page, pp, p)
		}
	})
}
