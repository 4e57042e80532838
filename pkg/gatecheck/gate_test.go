package gatecheck

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/golden"

	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
)

var (
	head   = strings.Repeat("a", 40)
	merge  = strings.Repeat("b", 40)
	merge2 = strings.Repeat("c", 40) // the merge ref after the base moved
)

const ourApp = 4242

var payloadSHA = strings.Repeat("d", 64)

func TestExternalIDRoundTrip(t *testing.T) {
	for _, k := range Kinds {
		s, err := FormatExternalID(merge, k)
		assert.NilError(t, err)
		assert.Equal(t, s, "runpod-gpu-gate:v1:"+merge+":"+string(k))
		id, err := ParseExternalID(s)
		assert.NilError(t, err)
		assert.DeepEqual(t, id, ExternalID{TestedRef: merge, Kind: k})
	}
}

func TestParseExternalIDRejects(t *testing.T) {
	tests := []struct{ in, wantErr string }{
		{"", "want prefix"},
		{"runpod-gpu-gate:v2:" + merge + ":paid", "want prefix"},
		{"local-gpu-gate:v1:" + merge, "want prefix"},
		{"runpod-gpu-gate:v1:" + merge, "want \"runpod-gpu-gate:v1:\"<ref>:<kind>"},
		{"runpod-gpu-gate:v1::paid", "tested ref \"\""},
		{"runpod-gpu-gate:v1:main:paid", "tested ref \"main\""},
		{"runpod-gpu-gate:v1:" + strings.ToUpper(merge) + ":paid", "full lowercase commit SHA"},
		{"runpod-gpu-gate:v1:" + merge + ":free", `kind "free"`},
		{"runpod-gpu-gate:v1:" + merge + ":paid:extra", `kind "paid:extra"`},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			_, err := ParseExternalID(tc.in)
			assert.ErrorContains(t, err, tc.wantErr)
		})
	}
	_, err := FormatExternalID("", KindPaid)
	assert.ErrorContains(t, err, "tested ref")
	_, err = FormatExternalID(merge, "weird")
	assert.ErrorContains(t, err, "want one of paid, reused, failed, not-required, local, skipped")
	local, err := LocalExternalID(merge)
	assert.NilError(t, err)
	assert.Equal(t, local, "local-gpu-gate:v1:"+merge)
}

func FuzzParseExternalID(f *testing.F) {
	f.Add("runpod-gpu-gate:v1:" + merge + ":paid")
	f.Add("runpod-gpu-gate:v1::")
	f.Add("local-gpu-gate:v1:" + merge)
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseExternalID(s)
		if err != nil {
			return
		}
		if id.String() != s {
			t.Fatalf("ParseExternalID(%q) round-trips to %q", s, id.String())
		}
	})
}

var t0 = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

// gateRun builds a check run as GitHub returns it.
func gateRun(id int64, name, externalID, status, conclusion string, app int64, completed time.Time) *github.CheckRun {
	r := &github.CheckRun{
		ID: github.Int64(id), Name: github.String(name), HeadSHA: github.String(head),
		ExternalID: github.String(externalID), Status: github.String(status),
		HTMLURL: github.String(fmt.Sprintf("https://github.com/o/r/runs/%d", id)),
		App:     &github.App{ID: github.Int64(app)},
	}
	if conclusion != "" {
		r.Conclusion = github.String(conclusion)
	}
	if !completed.IsZero() {
		r.CompletedAt = &github.Timestamp{Time: completed}
	}
	return r
}

func ok(id int64, ref string, k Kind, at time.Time) *github.CheckRun {
	return gateRun(id, DefaultCheckName, ExternalIDPrefix+ref+":"+string(k), "completed", "success", ourApp, at)
}

func TestDecide(t *testing.T) {
	failedPaid := gateRun(9, DefaultCheckName, ExternalIDPrefix+merge+":paid", "completed", "failure", ourApp, t0.Add(2*time.Hour))
	tests := []struct {
		name      string
		runs      []*github.CheckRun
		wantReuse bool
		wantID    int64
		wantIn    string
	}{
		{name: "paid success is reusable", runs: []*github.CheckRun{ok(1, merge, KindPaid, t0)}, wantReuse: true, wantID: 1, wantIn: "reusing"},
		{name: "reused success is reusable", runs: []*github.CheckRun{ok(2, merge, KindReused, t0)}, wantReuse: true, wantID: 2},
		{name: "serverless success is reusable", runs: []*github.CheckRun{ok(2, merge, KindServerless, t0)}, wantReuse: true, wantID: 2},
		{name: "serverless failure is not", runs: []*github.CheckRun{
			gateRun(3, DefaultCheckName, ExternalIDPrefix+merge+":serverless", "completed", "failure", ourApp, t0)}, wantID: 3, wantIn: "serverless/failure"},
		{name: "failed kind is not", runs: []*github.CheckRun{ok(3, merge, KindFailed, t0)}, wantID: 3, wantIn: "not a reusable success"},
		{name: "not-required is not", runs: []*github.CheckRun{ok(3, merge, KindNotRequired, t0)}, wantID: 3},
		{name: "skipped is not", runs: []*github.CheckRun{ok(3, merge, KindSkipped, t0)}, wantID: 3},
		{name: "local kind is not", runs: []*github.CheckRun{ok(3, merge, KindLocal, t0)}, wantID: 3},
		{name: "relay marker never counts", runs: []*github.CheckRun{
			gateRun(4, DefaultCheckName, LocalIDPrefix+merge, "completed", "success", ourApp, t0)}, wantIn: "no earlier gate"},
		{name: "another ref never counts", runs: []*github.CheckRun{ok(5, merge2, KindPaid, t0)}, wantIn: "no earlier gate"},
		{name: "gate without marker ignored", runs: []*github.CheckRun{
			gateRun(6, DefaultCheckName, "", "completed", "success", ourApp, t0)}, wantIn: "no earlier gate"},
		{name: "gate from another app ignored", runs: []*github.CheckRun{
			gateRun(7, DefaultCheckName, ExternalIDPrefix+merge+":paid", "completed", "success", 15368, t0)}, wantIn: "no earlier gate"},
		{name: "another name ignored", runs: []*github.CheckRun{
			gateRun(8, "CI GPU gate (old)", ExternalIDPrefix+merge+":paid", "completed", "success", ourApp, t0)}, wantIn: "no earlier gate"},
		{name: "not completed ignored", runs: []*github.CheckRun{
			gateRun(8, DefaultCheckName, ExternalIDPrefix+merge+":paid", "in_progress", "", ourApp, time.Time{})}, wantIn: "no earlier gate"},
		{name: "newer failure hides older success", runs: []*github.CheckRun{ok(1, merge, KindPaid, t0), failedPaid}, wantID: 9, wantIn: "paid/failure"},
		{name: "newer success after a failure reusable", runs: []*github.CheckRun{failedPaid, ok(10, merge, KindPaid, t0.Add(3*time.Hour))}, wantReuse: true, wantID: 10},
		{name: "equal completion times ordered by id", runs: []*github.CheckRun{
			ok(21, merge, KindPaid, t0),
			gateRun(20, DefaultCheckName, ExternalIDPrefix+merge+":failed", "completed", "failure", ourApp, t0),
		}, wantReuse: true, wantID: 21},
		{name: "equal times, higher id failure wins", runs: []*github.CheckRun{
			ok(20, merge, KindPaid, t0),
			gateRun(21, DefaultCheckName, ExternalIDPrefix+merge+":failed", "completed", "failure", ourApp, t0),
		}, wantID: 21},
		{name: "nothing at all", runs: nil, wantIn: "no earlier gate"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := DecideReuse(context.Background(), fakeLister{runs: tc.runs}, ReuseQuery{HeadSHA: head, TestedRef: merge, AppID: ourApp})
			assert.Equal(t, d.Reuse, tc.wantReuse, d.Reason)
			assert.Equal(t, d.CheckID, tc.wantID)
			if tc.wantIn != "" {
				assert.Check(t, is.Contains(d.Reason, tc.wantIn))
			}
			if d.Reuse {
				assert.Check(t, is.Equal(d.CheckURL, fmt.Sprintf("https://github.com/o/r/runs/%d", d.CheckID)))
			}
		})
	}
}

type fakeLister struct {
	runs []*github.CheckRun
	err  error
	boom bool
}

func (f fakeLister) ListCheckRunsForRef(_ context.Context, ref, name string, _ int) ([]*github.CheckRun, error) {
	if f.boom {
		panic("nil map write")
	}
	return f.runs, f.err
}

func TestDecideFailsOpen(t *testing.T) {
	q := ReuseQuery{HeadSHA: head, TestedRef: merge, AppID: ourApp}
	for name, l := range map[string]CheckRunLister{
		"lister error": fakeLister{err: errors.New("502 Bad Gateway")},
		"panic":        fakeLister{boom: true},
		"nil lister":   nil,
	} {
		t.Run(name, func(t *testing.T) {
			d := DecideReuse(context.Background(), l, q)
			assert.Check(t, !d.Reuse)
			assert.Check(t, is.Contains(d.Reason, "running the paid path"))
		})
	}
	d := DecideReuse(context.Background(), fakeLister{runs: []*github.CheckRun{ok(1, merge, KindPaid, t0)}}, ReuseQuery{HeadSHA: head, TestedRef: "HEAD"})
	assert.Check(t, !d.Reuse, "a non-SHA tested ref never reuses")
}

// checksServer serves check runs for head in pages of pageSize with Link headers,
// the way GitHub does, or fails in the requested way.
func checksServer(t *testing.T, runs []*github.CheckRun, pageSize int, mode string) *httptest.Server {
	t.Helper()
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" && r.Header.Get("Authorization") != "token tok" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"message":"Bad credentials"}`))
			return
		}
		switch mode {
		case "500":
			w.WriteHeader(http.StatusInternalServerError)
			return
		case "badjson":
			_, _ = w.Write([]byte(`{"total_count": 1, "check_runs": [ {`))
			return
		}
		assert.Check(t, is.Equal(r.URL.Query().Get("filter"), "all"))
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		page = max(page, 1)
		from, to := (page-1)*pageSize, min(page*pageSize, len(runs))
		if from < len(runs) && to < len(runs) {
			next := *r.URL
			q := next.Query()
			q.Set("page", strconv.Itoa(page+1))
			next.RawQuery = q.Encode()
			w.Header().Set("Link", fmt.Sprintf(`<http://%s%s>; rel="next"`, r.Host, next.RequestURI()))
		}
		body := map[string]any{"total_count": len(runs), "check_runs": runs[min(from, len(runs)):to]}
		_ = json.NewEncoder(w).Encode(body)
	}))
}

func newClient(t *testing.T, url, token string) *ghapi.Client {
	t.Helper()
	policy := reqpolicy.New(reqpolicy.WithMaxAttempts(1))
	c, err := ghapi.New(context.Background(), ghapi.Options{BaseURL: url, Token: token, Owner: "o", Repo: "r", Policy: policy})
	assert.NilError(t, err)
	return c
}

func TestDecideOverHTTP(t *testing.T) {
	// The deciding success sits on the third page behind newer-looking noise.
	var runs []*github.CheckRun
	for i := int64(1); i <= 4; i++ {
		runs = append(runs, ok(100+i, merge2, KindPaid, t0.Add(time.Duration(i)*time.Hour)))
	}
	runs = append(runs, ok(99, merge, KindPaid, t0))
	q := ReuseQuery{HeadSHA: head, TestedRef: merge, AppID: ourApp}

	srv := checksServer(t, runs, 2, "")
	defer srv.Close()
	d := DecideReuse(context.Background(), newClient(t, srv.URL, "tok"), q)
	assert.Check(t, d.Reuse, d.Reason)
	assert.Equal(t, d.CheckID, int64(99))

	bounded := q
	bounded.MaxPages = 2
	d = DecideReuse(context.Background(), newClient(t, srv.URL, "tok"), bounded)
	assert.Check(t, !d.Reuse, "a page bound exceeded must run the paid path")
	assert.Check(t, is.Contains(d.Reason, "running the paid path"))

	for _, mode := range []string{"500", "badjson"} {
		s := checksServer(t, runs, 100, mode)
		d := DecideReuse(context.Background(), newClient(t, s.URL, "tok"), q)
		s.Close()
		assert.Check(t, !d.Reuse, mode)
	}
	d = DecideReuse(context.Background(), newClient(t, srv.URL, "wrong-token"), q)
	assert.Check(t, !d.Reuse, "bad credentials must run the paid path")
}

func TestContentGolden(t *testing.T) {
	pod := &PodEvidence{ID: "pod7h9k2m4n6p", GPU: "NVIDIA RTX A6000", Tier: "ampere", PricePerHour: 0.49, StartupSeconds: 95, Attempts: 2, CostMarkdown: "cost report"}
	sls := &ServerlessEvidence{PayloadSHA256: payloadSHA, WorkerSHA256: strings.Repeat("e", 64), JobID: "job-1", JobStatus: "COMPLETED", GPUPool: "AMPERE_16", CUDAExecuted: true}
	cases := map[Kind]Evidence{
		KindPaid:        {Pod: pod},
		KindReused:      {ReusedCheckURL: "https://github.com/o/r/runs/99"},
		KindFailed:      {Pod: pod, Reason: "tests exited 1", RunID: 12345},
		KindNotRequired: {},
		KindLocal:       {LocalEvidenceURL: "https://github.com/o/r/pull/7#issuecomment-1"},
		KindSkipped:     {Reason: "the PR is closed"},
		KindServerless:  {Serverless: sls},
	}
	for _, k := range Kinds {
		t.Run(string(k), func(t *testing.T) {
			e := cases[k]
			e.Kind, e.HeadSHA, e.TestedRef, e.RunURL, e.CompletedAt = k, head, merge, "https://github.com/o/r/actions/runs/12345", t0
			in, err := Content(e)
			assert.NilError(t, err)
			got := fmt.Sprintf("name: %s\nconclusion: %s\nexternal_id: %s\ntitle: %s\n---\n%s---\n%s\n", in.Name, in.Conclusion, in.ExternalID, in.Title, in.Summary, in.Text)
			golden.Assert(t, got, "content-"+string(k)+".golden")
		})
	}
	_, err := Content(Evidence{Kind: KindReused, HeadSHA: head, TestedRef: merge})
	assert.ErrorContains(t, err, "must link the earlier check")
	_, err = Content(Evidence{Kind: KindPaid, HeadSHA: head, TestedRef: merge})
	assert.ErrorContains(t, err, "must name the accepted pod")
	_, err = Content(Evidence{Kind: KindPaid, HeadSHA: "main", TestedRef: merge, Pod: pod})
	assert.ErrorContains(t, err, "head SHA")
}

// TestServerlessContent: a serverless success stands on the payload's
// checksum and the CUDA proof; a failure of the lane still records the payload.
func TestServerlessContent(t *testing.T) {
	good := ServerlessEvidence{PayloadSHA256: payloadSHA, JobID: "job-1", JobStatus: "COMPLETED", GPUPool: "AMPERE_16", CUDAExecuted: true}
	with := func(f func(*ServerlessEvidence)) *ServerlessEvidence { s := good; f(&s); return &s }
	tests := []struct {
		name        string
		kind        Kind
		sls         *ServerlessEvidence
		wantErr     string
		wantSummary []string
		wantTitle   string
	}{
		{name: "success records the payload", kind: KindServerless, sls: &good, wantTitle: "GPU tests passed in one Serverless job on AMPERE_16",
			wantSummary: []string{"Payload SHA-256: `" + payloadSHA + "`", "| `job-1` | COMPLETED | AMPERE_16 | true |"}},
		{name: "success without evidence", kind: KindServerless, wantErr: "a serverless gate must name its job"},
		{name: "success without payload", kind: KindServerless, sls: with(func(s *ServerlessEvidence) { s.PayloadSHA256 = "" }), wantErr: "must record the payload SHA-256"},
		{name: "success with a short payload sum", kind: KindServerless, sls: with(func(s *ServerlessEvidence) { s.PayloadSHA256 = "abc" }), wantErr: `"abc" is not 64 lowercase hex`},
		{name: "success without the CUDA proof", kind: KindServerless, sls: with(func(s *ServerlessEvidence) { s.CUDAExecuted = false }), wantErr: "needs the worker's CUDA proof"},
		{name: "failure records the payload", kind: KindFailed, sls: with(func(s *ServerlessEvidence) { s.JobStatus, s.CUDAExecuted = "FAILED", false }),
			wantTitle: "GPU tests failed", wantSummary: []string{"Payload SHA-256: `" + payloadSHA + "`", "| FAILED |"}},
		{name: "failure before any payload", kind: KindFailed, sls: &ServerlessEvidence{}, wantTitle: "GPU tests failed",
			wantSummary: []string{"Payload SHA-256: `(no payload was built)`"}},
		{name: "failure with an upper-case payload sum", kind: KindFailed, sls: with(func(s *ServerlessEvidence) { s.PayloadSHA256 = strings.ToUpper(payloadSHA) }),
			wantErr: "want 64 lowercase hex digits"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in, err := Content(Evidence{Kind: tc.kind, HeadSHA: head, TestedRef: merge, Serverless: tc.sls, CompletedAt: t0})
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, in.Title, tc.wantTitle)
			assert.Equal(t, in.ExternalID, ExternalIDPrefix+merge+":"+string(tc.kind))
			for _, want := range tc.wantSummary {
				assert.Check(t, is.Contains(in.Summary, want))
			}
		})
	}
}

func TestClipKeepsInsideGitHubLimit(t *testing.T) {
	long := strings.Repeat("é", MaxOutputBytes) // two bytes each
	got := clip(long)
	assert.Check(t, len(got) <= MaxOutputBytes, "len %d", len(got))
	assert.Check(t, is.Contains(got, "truncated to fit"))
	assert.Check(t, strings.ToValidUTF8(got, "?") == got, "cut inside a rune")
	assert.Equal(t, clip("short"), "short")
}
