package gatecheck

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
)

// A gate counts only when the app that published it is the one trusted: a
// query without an app id trusts GitHub Actions (token mode), never any app.
func TestDecideTrustsOnlyTheNamedApp(t *testing.T) {
	const otherApp = 999
	gateFrom := func(id, app int64) *github.CheckRun {
		return gateRun(id, DefaultCheckName, ExternalIDPrefix+merge+":paid", "completed", "success", app, t0)
	}
	tests := []struct {
		name      string
		queryApp  int64
		runs      []*github.CheckRun
		wantReuse bool
		wantID    int64
		wantIn    string
	}{
		{name: "token mode ignores another app's success", runs: []*github.CheckRun{gateFrom(1, otherApp)}, wantIn: "no earlier gate"},
		{name: "token mode ignores an App's success", runs: []*github.CheckRun{gateFrom(1, ourApp)}, wantIn: "no earlier gate"},
		{name: "token mode reuses GitHub Actions' gate", runs: []*github.CheckRun{gateFrom(1, otherApp), gateFrom(2, GitHubActionsAppID)},
			wantReuse: true, wantID: 2},
		{name: "named App ignores GitHub Actions", queryApp: ourApp, runs: []*github.CheckRun{gateFrom(1, GitHubActionsAppID)}, wantIn: "no earlier gate"},
		{name: "named App ignores another app", queryApp: ourApp, runs: []*github.CheckRun{gateFrom(1, otherApp)}, wantIn: "no earlier gate"},
		{name: "named App reuses its own gate", queryApp: ourApp, runs: []*github.CheckRun{gateFrom(1, otherApp), gateFrom(2, ourApp)},
			wantReuse: true, wantID: 2},
		{name: "gate with no app object ignored", runs: []*github.CheckRun{{
			ID: github.Int64(3), Name: github.String(DefaultCheckName), ExternalID: github.String(ExternalIDPrefix + merge + ":paid"),
			Status: github.String("completed"), Conclusion: github.String("success"), CompletedAt: &github.Timestamp{Time: t0},
		}}, wantIn: "no earlier gate"},
		{name: "negative app id runs the paid path", queryApp: -1, runs: []*github.CheckRun{gateFrom(1, GitHubActionsAppID)},
			wantIn: "gate app id -1 is not an app id: running the paid path"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := DecideReuse(context.Background(), fakeLister{runs: tc.runs}, ReuseQuery{HeadSHA: head, TestedRef: merge, AppID: tc.queryApp})
			assert.Equal(t, d.Reuse, tc.wantReuse, d.Reason)
			assert.Equal(t, d.CheckID, tc.wantID)
			if tc.wantIn != "" {
				assert.Check(t, is.Contains(d.Reason, tc.wantIn))
			}
		})
	}
}

func TestTrustedGateApp(t *testing.T) {
	tests := []struct {
		name           string
		gateApp, appID int64
		want           int64
	}{
		{name: "token mode trusts GitHub Actions", want: GitHubActionsAppID},
		{name: "App mode trusts the App", appID: ourApp, want: ourApp},
		{name: "an explicit gate app wins", gateApp: 777, appID: ourApp, want: 777},
		{name: "an explicit gate app in token mode", gateApp: 777, want: 777},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, TrustedGateApp(tc.gateApp, tc.appID), tc.want)
		})
	}
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

// pmLister records the page bound of each listing.
type pmLister struct{ pages []int }

func (l *pmLister) ListCheckRunsForRef(_ context.Context, _, _ string, maxPages int) ([]*github.CheckRun, error) {
	l.pages = append(l.pages, maxPages)
	return nil, nil
}

// The reuse lookup reads at most MaxPages pages, DefaultMaxPages when unset.
func TestDecideReusePageBound(t *testing.T) {
	for _, tc := range []struct{ given, want int }{{0, DefaultMaxPages}, {-1, DefaultMaxPages}, {2, 2}} {
		l := &pmLister{}
		d := DecideReuse(context.Background(), l, ReuseQuery{HeadSHA: pmHead, TestedRef: pmMerge, MaxPages: tc.given})
		assert.Equal(t, d.Reuse, false)
		assert.DeepEqual(t, l.pages, []int{tc.want})
	}
}
