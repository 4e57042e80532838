package ownership

import (
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestParseServerlessName(t *testing.T) {
	repo := "org/gpu-project"
	tests := []struct {
		name        string
		wantAttempt string
		wantRun     int64
		wantN       int
		wantTpl     bool
		wantOK      bool
	}{
		{name: "rpg-sls-org-gpu-project-9300-2-0badc0de", wantAttempt: "rpg-sls-org-gpu-project-9300-2-0badc0de", wantRun: 9300, wantN: 2, wantOK: true},
		{name: "rpg-sls-org-gpu-project-9300-2-0badc0de-tpl", wantAttempt: "rpg-sls-org-gpu-project-9300-2-0badc0de", wantRun: 9300, wantN: 2, wantTpl: true, wantOK: true},
		{name: "rpg-sls-org-gpu-project-x-9300-2-0badc0de"}, // another repository's slug, org/gpu-project-x
		{name: "rpg-sls-org-gpu-9300-2-0badc0de"},           // org/gpu
		{name: "rpg-sls-org-gpu-project-9300-2-0BADC0DE"},   // not the lane's hex
		{name: "rpg-sls-org-gpu-project-9300-2-0badc0de-x"}, // a suffix the lane never writes
		{name: "rpg-sls-org-gpu-project-09300-2-0badc0de"},  // a leading zero is no run id
		{name: "rpg-sls-org-gpu-project-9300-0-0badc0de"},   // attempts start at 1
		{name: "my-endpoint"},
		{name: "rpg-sls-org-gpu-project-99999999999999999999-1-0badc0de"}, // overflows int64
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			attempt, run, n, tpl, ok := ParseServerlessName(repo, tc.name)
			assert.Equal(t, ok, tc.wantOK)
			assert.Equal(t, attempt, tc.wantAttempt)
			assert.Equal(t, run, tc.wantRun)
			assert.Equal(t, n, tc.wantN)
			assert.Equal(t, tpl, tc.wantTpl)
		})
	}
}

// TestServerlessAttemptNameRoundTrip: every name the lane writes is one the
// reaper reads back; another repository's slug does not read it. (Slugs are
// cut at 32 characters, so two long names can share one: the reaper proves
// ownership by the template's RPG_OWNER, not by the name.)
func TestServerlessAttemptNameRoundTrip(t *testing.T) {
	for _, repo := range []string{"org/gpu-project", "Org/GPU.Project", "a-very-long-organisation-name/and-an-even-longer-repository"} {
		name, err := ServerlessAttemptName(repo, 9300, 2)
		assert.NilError(t, err)
		for _, n := range []string{name, name + "-tpl"} {
			attempt, run, attemptNo, tpl, ok := ParseServerlessName(repo, n)
			assert.Assert(t, ok, n)
			assert.Equal(t, attempt, name)
			assert.Equal(t, run, int64(9300))
			assert.Equal(t, attemptNo, 2)
			assert.Equal(t, tpl, n != name)
		}
		if other := repo + "-x"; RepoSlug(other) != RepoSlug(repo) {
			_, _, _, _, ok := ParseServerlessName(other, name)
			assert.Assert(t, !ok, "%s reads %s's name %s", other, repo, name)
		}
	}
}

// A run id past MaxInt64 is no run id, however well it matches the pattern.
func TestParseServerlessNameOverflowWithinTheDigits(t *testing.T) {
	_, _, _, _, ok := ParseServerlessName("org/gpu-project", "rpg-sls-org-gpu-project-9999999999999999999-1-0badc0de")
	assert.Check(t, !ok, "19 digits past MaxInt64 are no run id")
	_, id, _, _, ok := ParseServerlessName("org/gpu-project", "rpg-sls-org-gpu-project-9223372036854775807-1-0badc0de")
	assert.Check(t, ok)
	assert.Check(t, is.Equal(id, int64(9223372036854775807)))
}
