package rules

// The GitHub App manifests runpod-gpu app posts (pkg/callers) grant exactly
// what the set-up page's permission tables say each App needs.

import (
	"regexp"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/callers"
)

// metaReadmeLevels reads "Checks: read & write, Pull requests: read" as
// installation permissions (metadata: read, which every App has, added).
func metaReadmeLevels(t *testing.T, text string) callers.Levels {
	t.Helper()
	out := callers.Levels{"metadata": "read"}
	for _, part := range strings.Split(strings.Join(strings.Fields(text), " "), ",") {
		part = strings.TrimSpace(strings.ReplaceAll(part, ":", ""))
		level := "read"
		if strings.HasSuffix(part, " read & write") {
			level, part = "write", strings.TrimSuffix(part, " read & write")
		} else {
			part = strings.TrimSuffix(part, " read")
		}
		out[strings.ReplaceAll(strings.ToLower(strings.TrimSpace(part)), " ", "_")] = level
	}
	return out
}

func TestAppManifestsGrantWhatTheReadmeSays(t *testing.T) {
	readme := docText(t, docSetup)
	one := regexp.MustCompile("\\*\\*One App\\*\\* \\(`app-id`\\) gets the union: ([^.]+)\\.").FindStringSubmatch(readme)
	assert.Assert(t, one != nil, "%s: the one-App sentence", docSetup)
	rows := map[string]*regexp.Regexp{
		"checks": regexp.MustCompile("(?m)^\\| checks App \\(`app-id`\\) \\| ([^|]+) \\|"),
		"runner": regexp.MustCompile("(?m)^\\| runner App \\(`runner-app-id`\\) \\| ([^|]+) \\|"),
	}
	checks, runner := rows["checks"].FindStringSubmatch(readme), rows["runner"].FindStringSubmatch(readme)
	assert.Assert(t, checks != nil && runner != nil, "%s: the two-App table", docSetup)
	for _, tc := range []struct {
		name   string
		readme string
		code   callers.Levels
	}{{"one App", one[1], callers.OneApp}, {"checks App", checks[1], callers.ChecksApp}, {"runner App", runner[1], callers.RunnerApp}} {
		assert.Check(t, is.DeepEqual(map[string]string(metaReadmeLevels(t, tc.readme)), map[string]string(tc.code)), tc.name)
	}
}
