package config

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

func TestNearestKey(t *testing.T) {
	top := fieldNames(configType)
	tests := []struct {
		unknown string
		known   []string
		want    string
	}{
		{unknown: "min_vram_gbs", known: top, want: "min_vram_gb"},                // one letter too many
		{unknown: "minvram_gb", known: top, want: "min_vram_gb"},                  // underscore dropped
		{unknown: "min_vrma_gb", known: top, want: "min_vram_gb"},                 // neighbours swapped
		{unknown: "minVramGB", known: top, want: "min_vram_gb"},                   // camel case
		{unknown: "min-vram-gb", known: top, want: "min_vram_gb"},                 // dashes
		{unknown: "gpu_tier", known: top, want: "gpu_tiers"},                      // singular
		{unknown: "startup_timeout", known: top, want: "startup_timeout_seconds"}, // unit left off
		{unknown: "lifetime", known: top, want: "lifetime_seconds"},
		{unknown: "gpu_id", known: []string{"name", "gpu_ids"}, want: "gpu_ids"},
		// Not close: a guess would mislead.
		{unknown: "max_attempts", known: top, want: ""},
		{unknown: "experimental", known: []string{"full", "baseline"}, want: ""},
		{unknown: "mount", known: []string{"size_gb", "path"}, want: ""},
		{unknown: "vram", known: top, want: ""},
		{unknown: "", known: top, want: ""},
		// A prefix of two keys is ambiguous.
		{unknown: "startup", known: top, want: ""},
		// Equally close to two keys: no guess.
		{unknown: "ab", known: []string{"aa", "bb"}, want: ""},
		// Bounded work on hostile input.
		{unknown: strings.Repeat("min_vram_gb", 10000), known: top, want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.unknown[:min(len(tc.unknown), 40)], func(t *testing.T) {
			assert.Equal(t, nearestKey(tc.unknown, tc.known), tc.want)
		})
	}
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{a: "", b: "", want: 0},
		{a: "abc", b: "", want: 3},
		{a: "kitten", b: "sitting", want: 3},
		{a: "minvramgbs", b: "minvramgb", want: 1},
		{a: "ab", b: "ba", want: 1},
		{a: "ca", b: "abc", want: 3}, // optimal string alignment, not full Damerau
	}
	for _, tc := range tests {
		assert.Equal(t, editDistance(tc.a, tc.b), tc.want, "%q %q", tc.a, tc.b)
		assert.Equal(t, editDistance(tc.b, tc.a), tc.want, "%q %q", tc.b, tc.a)
	}
}

// TestParsePositions pins the column each problem points at: a GitHub
// annotation puts its marker there, at the offending key or list item.
func TestParsePositions(t *testing.T) {
	tests := []struct {
		file       string
		wantKey    string
		wantLine   int
		wantColumn int
	}{
		{file: "unknown-key-typo", wantKey: "min_vram_gbs", wantLine: 5, wantColumn: 1},
		{file: "unknown-nested-key", wantKey: "gpu_tiers[0].gpu_id", wantLine: 4, wantColumn: 5},
		{file: "unknown-volume-key", wantKey: "volume.(unknown key)", wantLine: 7, wantColumn: 3},
		{file: "bad-tier-name", wantKey: "gpu_tiers[0].name", wantLine: 3, wantColumn: 5},
		{file: "duplicate-region", wantKey: "regions[1]", wantLine: 5, wantColumn: 19},
		// A missing key points at its enclosing key.
		{file: "nvrtc-missing-sha", wantKey: "nvrtc.full.sha256", wantLine: 6, wantColumn: 3},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			_, err := Parse(readTestdata(t, "invalid/"+tc.file+".yml"), tc.file+".yml")
			problems := fieldErrors(err)
			assert.Assert(t, len(problems) > 0, "got %v", err)
			p := problems[0]
			assert.Equal(t, p.Key, tc.wantKey)
			assert.Equal(t, p.Line, tc.wantLine)
			assert.Equal(t, p.Column, tc.wantColumn)
		})
	}
}

func TestSuggestionFollowsMessage(t *testing.T) {
	input := "gpu_tiers:\n  - name: ada\n    gpu_ids: [x]\nminvram_gb: 24\n"
	_, err := Parse([]byte(input), "s.yml")
	problems := fieldErrors(err)
	assert.Assert(t, len(problems) == 1, "got %v", err)
	assert.Equal(t, problems[0].Suggestion, "min_vram_gb")
	assert.Assert(t, strings.HasSuffix(err.Error(), ", gpu_paths; did you mean `min_vram_gb`?"), err.Error())
}
