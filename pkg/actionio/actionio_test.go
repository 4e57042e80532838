package actionio

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/golden"
)

type runner struct {
	env    map[string]string
	stdout bytes.Buffer
	io     *IO
}

func newRunner(t *testing.T, inputs map[string]string) *runner {
	dir := t.TempDir()
	r := &runner{env: map[string]string{
		"GITHUB_OUTPUT":       filepath.Join(dir, "output"),
		"GITHUB_STEP_SUMMARY": filepath.Join(dir, "summary"),
	}}
	for k, v := range inputs {
		r.env["INPUT_"+strings.ToUpper(k)] = v
	}
	r.io = New(&r.stdout, func(k string) string { return r.env[k] }, nil)
	return r
}

func (r *runner) file(t *testing.T, key string) string {
	b, err := os.ReadFile(r.env[key])
	if os.IsNotExist(err) {
		return ""
	}
	assert.NilError(t, err)
	return string(b)
}

func TestInputs(t *testing.T) {
	r := newRunner(t, map[string]string{
		"runpod-api-key": "  rpa_SECRET  ", "keep-failed-pods": "True", "pr-number": "42", "bad-bool": "yes",
		"attempts": "9", "labels": "a\n\n b \n", "timeout-seconds": "420",
	})
	type inputs struct {
		PRNumber string        `input:"pr-number"`
		Keep     bool          `input:"keep-failed-pods" default:"false"`
		Absent   bool          `input:"absent" default:"true"`
		Timeout  time.Duration `input:"timeout-seconds" default:"60" min:"1" max:"3600"`
		Labels   []string      `input:"labels"`
		Key      string        `input:"runpod-api-key,secret"`
	}
	in, err := ReadInputs[inputs](r.io)
	assert.NilError(t, err)
	assert.Equal(t, in.PRNumber, "42")
	_, err = ReadInputs[struct {
		Missing string `input:"missing,required"`
	}](r.io)
	assert.ErrorContains(t, err, "input missing: a value (the input is required)")

	assert.Check(t, in.Keep)
	assert.Check(t, in.Absent)
	_, err = ReadInputs[struct {
		Bad bool `input:"bad-bool" default:"false"`
	}](r.io)
	assert.ErrorContains(t, err, `input bad-bool = "yes": want true or false`)

	_, err = ReadInputs[struct {
		Attempts int64 `input:"attempts" default:"6" min:"1" max:"8"`
	}](r.io)
	assert.ErrorContains(t, err, `input attempts = "9": want an integer from 1 to 8`)
	assert.Equal(t, in.Timeout, 420*time.Second)
	assert.DeepEqual(t, in.Labels, []string{"a", "b"})

	key := in.Key
	assert.Equal(t, key, "rpa_SECRET")
	r.io.Infof("calling RunPod with %s", key)
	golden.Assert(t, r.stdout.String(), "inputs.golden")
}

func TestSHA(t *testing.T) {
	full := strings.Repeat("0a", 20)
	tests := []struct {
		name, value string
		required    bool
		want        string
		wantErr     string
	}{
		{name: "full SHA", value: full, want: full},
		{name: "empty optional", value: ""},
		{name: "empty required", value: "", required: true, wantErr: "input sha: a full commit SHA (40 lower-case hex digits, or 64 in a SHA-256 repository) (the input is required)"},
		{name: "short", value: "0a0a0a0", wantErr: `input sha = "0a0a0a0": want a full commit SHA (40 lower-case hex digits, or 64 in a SHA-256 repository)`},
		{name: "upper case", value: strings.ToUpper(full), wantErr: "want a full commit SHA (40 lower-case hex digits, or 64 in a SHA-256 repository)"},
		{name: "a branch name", value: "refs/heads/main", wantErr: `input sha = "refs/heads/main"`},
		{name: "41 digits", value: full + "0", wantErr: "want a full commit SHA"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRunner(t, map[string]string{"sha": tc.value})
			in, err := ReadInputs[struct {
				SHA CommitSHA `input:"sha"`
			}](r.io)
			if err == nil && tc.required {
				err = RequireSHA("sha", in.SHA)
			}
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, string(in.SHA), tc.want)
		})
	}
}

func TestOutputRefusesInjection(t *testing.T) {
	r := newRunner(t, map[string]string{"token": "ghs_tok"})
	r.io.Mask(r.io.input("token"))
	assert.NilError(t, r.io.setOutput("pod-id", "abc123"))
	assert.ErrorContains(t, r.io.setOutput("title", "x\nreused=true"), "contains a newline")
	assert.ErrorContains(t, r.io.setOutput("title", "a"+fileCommandDelimiter+"b"), "file-command delimiter")
	assert.ErrorContains(t, r.io.setOutput("leak", "Bearer ghs_tok"), "contains a secret")
	out := r.file(t, "GITHUB_OUTPUT")
	assert.Check(t, is.Contains(out, "pod-id<<"))
	assert.Check(t, !strings.Contains(out, "reused"))
	assert.Check(t, !strings.Contains(out, "ghs_tok"))
	assert.Check(t, is.Equal(strings.Count(out, "<<"), 1), "only pod-id was written:\n%s", out)

	delete(r.env, "GITHUB_OUTPUT")
	assert.ErrorContains(t, r.io.setOutput("pod-id", "x"), "GITHUB_OUTPUT is not set")
	r.env["GITHUB_OUTPUT"] = filepath.Join(t.TempDir(), "no", "such", "dir", "out")
	assert.ErrorContains(t, r.io.setOutput("pod-id", "x"), "output pod-id")
}

func TestSummaryIsRedactedAndCapped(t *testing.T) {
	r := newRunner(t, nil)
	r.io.Mask("jit-CONFIG-value")
	assert.NilError(t, r.io.AddSummary("config: jit-CONFIG-value\n"))
	assert.NilError(t, r.io.AddSummary(strings.Repeat("x", MaxSummaryBytes)))
	assert.NilError(t, r.io.AddSummary("after the cap\n"))
	s := r.file(t, "GITHUB_STEP_SUMMARY")
	assert.Check(t, !strings.Contains(s, "jit-CONFIG-value"))
	assert.Check(t, is.Contains(s, "config: ***"))
	assert.Check(t, is.Contains(s, "summary truncated"))
	assert.Check(t, !strings.Contains(s, "after the cap"))
	assert.Check(t, len(s) <= MaxSummaryBytes+64, "len %d", len(s)) // the library adds a newline per call
	delete(r.env, "GITHUB_STEP_SUMMARY")
	assert.ErrorContains(t, r.io.AddSummary("x"), "GITHUB_STEP_SUMMARY is not set")
}

// testOutputs is a typed result as an action writes it.
type testOutputs struct {
	B       string `output:"b"`
	A       string `output:"a"`
	Bad     string `output:"bad"`
	C       bool   `output:"c"`
	N       int64  `output:"n"`
	Absent  string `output:"absent,omitempty"`
	Present string `output:"present,omitempty"`
	Note    string // untagged: not an output
}

func TestWriteOutputsInNameOrderAndReportsEachFailure(t *testing.T) {
	r := newRunner(t, nil)
	err := WriteOutputs(r.io, testOutputs{B: "2", A: "1", Bad: "x\ny", C: true, N: -3, Present: "p", Note: "not written"})
	assert.ErrorContains(t, err, "output bad")
	out := r.file(t, "GITHUB_OUTPUT")
	var order []string
	for _, l := range strings.Split(out, "\n") {
		if name, _, ok := strings.Cut(l, "<<"); ok {
			order = append(order, name)
		}
	}
	assert.DeepEqual(t, order, []string{"a", "b", "c", "n", "present"})
	assert.Check(t, is.Contains(out, "\ntrue\n"))
	assert.Check(t, is.Contains(out, "\n-3\n"))
	assert.Check(t, !strings.Contains(out, "not written"))
}

func TestWriteOutputsRefusesUntypedResults(t *testing.T) {
	r := newRunner(t, nil)
	tests := []struct {
		name    string
		write   func() error
		wantErr string
	}{
		{"a map", func() error { return WriteOutputs(r.io, map[string]string{"a": "1"}) }, "map[string]string is not a struct"},
		{"a float field", func() error {
			return WriteOutputs(r.io, struct {
				F float64 `output:"f"`
			}{})
		}, "F is a float64: want a string, bool or integer"},
		{"an unknown option", func() error {
			return WriteOutputs(r.io, struct {
				S string `output:"s,omitzero"`
			}{})
		}, `tag "s,omitzero"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.ErrorContains(t, tc.write(), tc.wantErr)
		})
	}
	assert.Check(t, is.Equal(r.file(t, "GITHUB_OUTPUT"), ""), "nothing is written")
}

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
