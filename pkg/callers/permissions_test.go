package callers

import (
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestParsePermissionsAndCoverage(t *testing.T) {
	l, declared, err := ParsePermissions(map[string]any{"actions": "write", "checks": "read"})
	assert.NilError(t, err)
	assert.Check(t, declared)
	assert.Check(t, is.Equal(l.String(), "{actions: write, checks: read}"))
	all, _, err := ParsePermissions("read-all")
	assert.NilError(t, err)
	assert.Check(t, is.Len(all, len(Scopes)))
	_, declared, err = ParsePermissions(nil)
	assert.Check(t, err == nil && !declared)
	_, _, err = ParsePermissions("admin")
	assert.Check(t, is.ErrorContains(err, "want read-all, write-all or a map"))
	_, _, err = ParsePermissions(map[string]any{"actions": "all"})
	assert.Check(t, is.ErrorContains(err, "want read, write or none"))

	assert.Check(t, Covers("write", "read") && Covers("read", "read") && !Covers("read", "write") && !Covers("", "read"))
	assert.Check(t, is.DeepEqual(Missing(Levels{"checks": "read", "actions": "write"}, ChecksApp), Levels{"checks": "write", "contents": "read", "pull_requests": "read", "metadata": "read"}))
	assert.Check(t, is.Len(Missing(OneApp, ChecksApp), 0), "the one App covers the checks App")
	assert.Check(t, is.Len(Missing(OneApp, RunnerApp), 0), "and the runner App")
}

// The suite reference names the copy and its ref.
func TestSplitSuite(t *testing.T) {
	owner, ref, err := SplitSuite("my-org/runpod-gpu@v1")
	assert.NilError(t, err)
	assert.Check(t, is.Equal(owner+" "+ref, "my-org v1"))
	for _, bad := range []string{"my-org/runpod-gpu", "runpod-gpu@v1", "my-org/runpod-gpu@", "my org/runpod-gpu@v1", "a/b/runpod-gpu@v1"} {
		_, _, err := SplitSuite(bad)
		assert.Check(t, err != nil, bad)
	}
}

// The manifests post to the user's or the organization's form, with the
// state GitHub sends back.
func TestCreationURL(t *testing.T) {
	assert.Check(t, is.Equal(CreationURL("https://github.com/", "", "s1"), "https://github.com/settings/apps/new?state=s1"))
	assert.Check(t, is.Equal(CreationURL("https://github.com", "my-org", ""), "https://github.com/organizations/my-org/settings/apps/new"))
	m := Manifests(ManifestOptions{Name: "ci", Suite: "my-org/runpod-gpu", Split: true, OrgRunners: true})
	assert.Assert(t, is.Len(m, 2))
	assert.Check(t, is.Equal(m[1].Name, "ci runners"))
	assert.Check(t, is.Equal(m[1].DefaultPermissions["organization_self_hosted_runners"], "write"), "the App that provisions")
	assert.Check(t, is.Equal(m[0].DefaultPermissions["organization_self_hosted_runners"], ""), "not the checks App")
}

func TestParseSuiteCall(t *testing.T) {
	tests := []struct {
		uses   string
		want   SuiteCall
		wantOK bool
	}{
		{uses: "acme/runpod-gpu/.github/workflows/gpu-lane.yml@v1", want: SuiteCall{Suite: "acme/runpod-gpu", Workflow: "gpu-lane.yml", Ref: "v1"}, wantOK: true},
		{uses: "org/runpod-gpu/.github/workflows/reap.yml@0123456789abcdef0123456789abcdef01234567", want: SuiteCall{Suite: "org/runpod-gpu", Workflow: "reap.yml", Ref: "0123456789abcdef0123456789abcdef01234567"}, wantOK: true},
		{uses: "acme/other/.github/workflows/gpu-lane.yml@v1"},            // not the suite
		{uses: "acme/runpod-gpu/.github/workflows/gpu-lane.yml"},          // no ref
		{uses: "acme/runpod-gpu/.github/workflows/Gpu_Lane.yaml@v1"},      // not a suite file name
		{uses: "./.github/workflows/gpu-lane.yml"},                        // a local call
		{uses: "acme/runpod-gpu/.github/workflows/gpu-lane.yml@v1 extra"}, // trailing words
		{uses: ""},
	}
	for _, tt := range tests {
		got, ok := ParseSuiteCall(tt.uses)
		assert.Check(t, is.Equal(ok, tt.wantOK), tt.uses)
		assert.Check(t, is.DeepEqual(got, tt.want), tt.uses)
	}
}
