package ownership

import (
	"testing"

	"gotest.tools/v3/assert"
)

func TestDeveloperPodsAreNeverCIPods(t *testing.T) {
	for _, tc := range []struct{ user, want string }{
		{"alice", "alice"},
		{"Bob Smith", "Bob-Smith"},
		{"", "unknown"},
		{"$(rm -rf)", "-rm--rf-"},
	} {
		env := DeveloperEnv(tc.user)
		user, ok := Developer(env)
		assert.Assert(t, ok)
		assert.Equal(t, user, tc.want)
		// Even a name in the CI form with CI-looking tags beside the marker is not ours.
		env[EnvRunID], env[EnvAttempt], env[EnvCandidate], env[EnvRepository] = "1", "1", "1", "o/r"
		_, err := FromPod("rgpu-1-1-c1", env)
		assert.ErrorContains(t, err, "not a runpod-gpu pod")
	}
	ci := Tags{Repository: "o/r", Workflow: ".github/workflows/gpu.yml", RunID: 1, Attempt: 1, Candidate: 1}
	_, ok := Developer(ci.Env())
	assert.Assert(t, !ok)
	_, ok = Developer(map[string]string{EnvOwner: DeveloperMarkerPrefix})
	assert.Assert(t, !ok)
}
