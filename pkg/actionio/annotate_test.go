package actionio

import (
	"testing"

	"gotest.tools/v3/assert"
)

func TestErrorAt(t *testing.T) {
	tests := []struct {
		name string
		at   Annotation
		msg  string
		want string
	}{
		{name: "key in a file", at: Annotation{Title: "config error", File: ".github/runpod-gpu.yml", Line: 5, Column: 3}, msg: "min_vram_gbs: want a known key",
			want: "::error col=3,file=.github/runpod-gpu.yml,line=5,title=config error::min_vram_gbs: want a known key\n"},
		{name: "line without column", at: Annotation{File: "c.yml", Line: 2}, msg: "bad",
			want: "::error file=c.yml,line=2::bad\n"},
		{name: "file only", at: Annotation{File: "c.yml"}, msg: "missing gpu_tiers",
			want: "::error file=c.yml::missing gpu_tiers\n"},
		{name: "a line needs a file", at: Annotation{Line: 4, Column: 1}, msg: "x",
			want: "::error::x\n"},
		// Property and message syntax is escaped: a value cannot end the command early.
		{name: "escaped", at: Annotation{Title: "a: b, c", File: "x,y:z.yml", Line: 1}, msg: "100% wrong\nsecond line",
			want: "::error file=x%2Cy%3Az.yml,line=1,title=a%3A b%2C c::100%25 wrong%0Asecond line\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRunner(t, nil)
			r.io.ErrorAt(tc.at, "%s", tc.msg)
			assert.Equal(t, r.stdout.String(), tc.want)
		})
	}
}

func TestErrorAtIsRedacted(t *testing.T) {
	r := newRunner(t, map[string]string{"runpod-api-key": "rpa_SECRET"})
	r.io.Mask(r.io.input("runpod-api-key"))
	r.stdout.Reset()
	r.io.ErrorAt(Annotation{File: "c.yml", Line: 1}, "token rpa_SECRET leaked")
	assert.Equal(t, r.stdout.String(), "::error file=c.yml,line=1::token *** leaked\n")
}

func TestGroupsNeverNest(t *testing.T) {
	r := newRunner(t, nil)
	endPlan := r.io.Phase("plan")
	r.io.Infof("candidate 1")
	inner := r.io.Phase("inner") // GitHub cannot nest: a plain line
	inner()
	inner() // ending twice ends once
	endPlan()
	endPlan()
	r.io.EndGroup() // unmatched: nothing
	r.io.Group("attempt 1")
	r.io.EndGroup()
	assert.Equal(t, r.stdout.String(), "::group::plan\ncandidate 1\ninner\n::endgroup::\n::group::attempt 1\n::endgroup::\n")
}
