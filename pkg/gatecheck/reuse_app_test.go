package gatecheck

import (
	"context"
	"testing"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
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
