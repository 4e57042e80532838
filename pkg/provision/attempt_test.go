package provision

import (
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// Each attempt with a pod records where RunPod placed it (cloud, data center,
// the host's driver), when it ended and what it showed about the host — the
// reputation's evidence. Only a pod that never delivered a runner through its
// host's fault is a failed host; a rejection for the PR's sake blames none.
func TestAttemptsRecordPlacementAndHostVerdict(t *testing.T) {
	eu := func(h *runpodsim.HostProfile) { h.DataCenterID, h.DriverCUDA = "EU-RO-1", "12.9" }
	tests := []struct {
		name  string
		hosts []runpodsim.HostProfile
		// movePR moves the PR's head while the first pod boots.
		movePR bool
		want   []cost.Attempt // the fields compared: GPU, Outcome, Cloud, DataCenter, Driver, Host
	}{
		{
			name:  "a failed proof blames the host, the accepted pod vouches for its own",
			hosts: []runpodsim.HostProfile{host("h1", a4000, oldPTX), host("h2", a5000, eu)},
			want: []cost.Attempt{
				{GPU: a4000, Outcome: cost.OutcomeRejected, Cloud: "SECURE", DataCenter: "US-TX-3", Driver: "12.8", Host: cost.HostFailed},
				{GPU: a5000, Outcome: cost.OutcomeAccepted, Cloud: "SECURE", DataCenter: "EU-RO-1", Driver: "12.9", Host: cost.HostWorked},
			},
		},
		{
			name:   "a pod rejected because the PR moved says nothing about its host",
			hosts:  []runpodsim.HostProfile{host("h1", a4000), host("h2", a5000)},
			movePR: true,
			want: []cost.Attempt{
				{GPU: a4000, Outcome: cost.OutcomeRejected, Cloud: "SECURE", DataCenter: "US-TX-3", Driver: "12.8"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := market(tc.hosts...)
			m.DataCenters = append(m.DataCenters, runpodsim.DataCenter{ID: "EU-RO-1", Name: "EU Romania 1", Region: "EUROPE",
				CountryCode: "RO", NetworkVolumeTypes: []string{"STANDARD"}, Compliance: []string{}})
			s := newScenario(t, cloud.Options{Market: m}, nil)
			if tc.movePR {
				s.obs.onCreate = func(string) {
					_ = s.cloud.GitHub.UpdatePullRequest(cloud.Repository, s.pr, func(p *githubsim.PullRequestSpec) { p.HeadSHA = movedHead })
				}
			}
			started := s.clock.Now()
			res, _ := s.run(t)
			var got []cost.Attempt
			for _, a := range res.Attempts {
				assert.Check(t, !a.At.Before(started) && !a.At.After(s.clock.Now()), "attempt %d ended at %v", a.Number, a.At)
				got = append(got, cost.Attempt{GPU: a.GPU, Outcome: a.Outcome, Cloud: a.Cloud, DataCenter: a.DataCenter, Driver: a.Driver, Host: a.Host})
			}
			assert.DeepEqual(t, got, tc.want)

			// The record survives provision's rejected-attempts output, which cleanup reads.
			var rejected []cost.Attempt
			for _, a := range res.Attempts {
				if a.Outcome != cost.OutcomeAccepted {
					rejected = append(rejected, a)
				}
			}
			back, err := cost.ParseAttempts(cost.FormatAttempts(rejected))
			assert.NilError(t, err)
			assert.Check(t, is.DeepEqual(back, rejected))
		})
	}
}
