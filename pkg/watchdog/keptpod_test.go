package watchdog

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/startup"
)

// The watchdog ends its watch when the GPU job ends; it deletes the pod then,
// except a pod cleanup keeps for the maintainer: its tests ran and failed,
// and its record is a keep-failed lane's pod with 22/tcp and the key. The
// runner's registration goes all the same. Any other pod is deleted as always.
func TestKeptPodIsReachableTheWatchdogLeavesItToCleanup(t *testing.T) {
	const key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOm1QqZ6pN3wV0b1v8bJcE1bWJm4W8jB9N7mR6Gd1tXb"
	tests := []struct {
		name       string
		keepFailed bool
		ports      []string
		key        string
		conclusion string
		wantKept   bool
	}{
		{name: "tests failed, keep-failed with the maintainer's SSH: left to cleanup", keepFailed: true, ports: []string{startup.SSHPort}, key: key, conclusion: "failure", wantKept: true},
		{name: "tests passed: deleted", keepFailed: true, ports: []string{startup.SSHPort}, key: key, conclusion: "success"},
		{name: "cancelled: deleted", keepFailed: true, ports: []string{startup.SSHPort}, key: key, conclusion: "cancelled"},
		{name: "no key: deleted", keepFailed: true, ports: []string{startup.SSHPort}, conclusion: "failure"},
		{name: "no port: deleted", keepFailed: true, key: key, conclusion: "failure"},
		{name: "not a keep-failed pod: deleted", ports: []string{startup.SSHPort}, key: key, conclusion: "failure"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			tags := ownership.Tags{Repository: "octo/gpu", Workflow: ".github/workflows/gpu.yml", RunID: runID, Attempt: 1, Candidate: 1, KeepFailed: tc.keepFailed}
			h.pods.record.Name, h.pods.record.Env, h.pods.record.Ports = tags.PodName(), tags.Env(), tc.ports
			if tc.key != "" {
				h.pods.record.Env[startup.DebugKeyEnv] = tc.key
			}
			h.gh.jobs = func(since time.Duration) ([]*github.WorkflowJob, error) {
				if since < 300*time.Second {
					return job("in_progress", "in_progress"), nil
				}
				jobs := job("completed", "completed")
				jobs[1].Conclusion = github.String(tc.conclusion)
				return jobs, nil
			}
			res, err := h.run()
			assert.NilError(t, err)
			assert.Check(t, is.Equal(res.Outcome, OutcomeJobFinished))
			assert.Check(t, is.Equal(res.KeptForSSH, tc.wantKept))
			assert.Check(t, is.Equal(res.Deleted, !tc.wantKept))
			assert.Check(t, is.Equal(strings.Contains(h.j.String(), "DELETE "+podID), !tc.wantKept), h.j.String())
			summary := res.Summary(err)
			assert.Check(t, is.Equal(strings.Contains(summary, "cleanup keeps it for the maintainer"), tc.wantKept), summary)
			assert.Check(t, !strings.Contains(summary, "deletion unconfirmed"), summary)
		})
	}
}
