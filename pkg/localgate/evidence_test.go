package localgate

import (
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	"gotest.tools/v3/golden"
)

func TestCommentGolden(t *testing.T) {
	body := mustComment(t, sampleEvidence(headSHA))
	golden.Assert(t, body, "evidence-comment.golden")

	sha, err := ParseMarker(strings.SplitN(body, "\n", 2)[0])
	assert.NilError(t, err)
	assert.Equal(t, sha, headSHA)
}

func TestEvidenceRoundTrip(t *testing.T) {
	sha256Repo := strings.Repeat("f", 64)
	tests := []struct {
		name   string
		change func(*Evidence)
	}{
		{"sample", func(*Evidence) {}},
		{"sha-256 repository", func(e *Evidence) { e.SHA = sha256Repo }},
		{"several GPUs", func(e *Evidence) { e.GPUName = "2 x NVIDIA H100 80GB HBM3" }},
		{"zero duration", func(e *Evidence) { e.Duration = 0 }},
		{"command with backticks", func(e *Evidence) { e.Command = "sh -c \"echo `date`\"" }},
		{"command ending in backtick", func(e *Evidence) { e.Command = "`weird`" }},
		{"command with a double-backtick run", func(e *Evidence) { e.Command = "a `` b" }},
		{"markdown in the GPU name", func(e *Evidence) { e.GPUName = "**bold** | pipe" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := sampleEvidence(headSHA)
			tc.change(&e)
			got, err := ParseEvidence(mustComment(t, e))
			assert.NilError(t, err)
			assert.DeepEqual(t, got, e)
		})
	}
}

func TestParseEvidenceToleratesNotesAndCRLF(t *testing.T) {
	body := mustComment(t, sampleEvidence(headSHA)) + "\nNotes:\n- flaky test skipped: no\n- GPU temp: fine\n"
	body = strings.ReplaceAll(body, "\n", "\r\n")
	got, err := ParseEvidence(body)
	assert.NilError(t, err)
	assert.DeepEqual(t, got, sampleEvidence(headSHA))
}

func TestParseMarker(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		wantSHA string
		wantErr string
	}{
		{name: "marker", line: Marker(headSHA), wantSHA: headSHA},
		{name: "CRLF", line: Marker(headSHA) + "\r", wantSHA: headSHA},
		{name: "prose", line: "LGTM", wantErr: `first line "LGTM" is not a local-gate marker`},
		{name: "other version", line: "<!-- runpod-gpu local-gpu-gate:v2 sha=" + headSHA + " -->", wantErr: "is not a local-gate marker"},
		{name: "unterminated", line: "<!-- runpod-gpu local-gpu-gate:v1 sha=" + headSHA, wantErr: `does not end with " -->"`},
		{name: "trailing text", line: Marker(headSHA) + " ok", wantErr: `does not end with " -->"`},
		{name: "short sha", line: Marker("abc123"), wantErr: `marker sha "abc123": want a full lowercase commit SHA`},
		{name: "uppercase sha", line: Marker(strings.ToUpper(headSHA)), wantErr: "want a full lowercase commit SHA"},
		{name: "leading space", line: " " + Marker(headSHA), wantErr: "is not a local-gate marker"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sha, err := ParseMarker(tc.line)
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, sha, tc.wantSHA)
		})
	}
}

func TestParseEvidenceRejects(t *testing.T) {
	good := mustComment(t, sampleEvidence(headSHA))
	replace := func(old, new string) string {
		assert.Assert(t, strings.Contains(good, old), "fixture lacks %q", old)
		return strings.Replace(good, old, new, 1)
	}
	tests := []struct {
		name, body, wantErr string
	}{
		{"empty", "", `first line "" is not a local-gate marker`},
		{"no marker", strings.SplitN(good, "\n", 2)[1], "is not a local-gate marker"},
		{"missing line", replace("- CUDA: `12.4`\n", ""), "evidence lines missing: CUDA"},
		{"duplicate line", replace("- GPU:", "- GPU: `A100`\n- GPU:"), `evidence line "GPU" appears twice`},
		{"no code span", replace("- Driver: `550.54.14`", "- Driver: 550.54.14"), `evidence line "Driver": want the value in a code span`},
		{"unbalanced code span", replace("- Driver: `550.54.14`", "- Driver: ``550.54.14`"), `evidence line "Driver": want the value in a code span`},
		{"bad duration", replace("`12m3s`", "`twelve minutes`"), `evidence duration "twelve minutes"`},
		{"fractional duration", replace("`12m3s`", "`1.5s`"), "want whole seconds"},
		{"negative duration", replace("`12m3s`", "`-3s`"), "want whole seconds"},
		{"bad digest", replace("`"+strings.Repeat("d", 64)+"`", "`abc`"), `evidence log SHA-256 "abc": want 64 lowercase hex digits`},
		{"bad CUDA", replace("`12.4`", "`twelve`"), `evidence CUDA "twelve": want a version such as 12.4`},
		{"empty GPU", replace("`NVIDIA GeForce RTX 4090`", "` `"), `evidence GPU " " has leading or trailing whitespace`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseEvidence(tc.body)
			assert.ErrorContains(t, err, tc.wantErr)
		})
	}
}

func TestEvidenceValidate(t *testing.T) {
	tests := []struct {
		name    string
		change  func(*Evidence)
		wantErr string
	}{
		{"branch as sha", func(e *Evidence) { e.SHA = "main" }, `evidence sha "main"`},
		{"newline in GPU", func(e *Evidence) { e.GPUName = "A100\n- GPU: `H100`" }, "evidence GPU \"A100\\n- GPU: `H100`\" contains a control character"},
		{"padded driver", func(e *Evidence) { e.Driver = " 550 " }, "has leading or trailing whitespace"},
		{"missing command", func(e *Evidence) { e.Command = "" }, "evidence Command is empty"},
		{"huge command", func(e *Evidence) { e.Command = strings.Repeat("x", maxFieldBytes+1) }, "evidence Command is 2001 bytes; want at most 2000"},
		{"invalid UTF-8", func(e *Evidence) { e.GPUName = "\xff" }, "is not valid UTF-8"},
		{"sub-second duration", func(e *Evidence) { e.Duration = 1500 * time.Millisecond }, "evidence duration 1.5s: want whole seconds"},
		{"too long", func(e *Evidence) { e.Duration = MaxDuration + time.Second }, "want whole seconds from 0 to 1000h0m0s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := sampleEvidence(headSHA)
			tc.change(&e)
			_, err := e.Comment()
			assert.ErrorContains(t, err, tc.wantErr)
		})
	}
}

func TestFormatCommand(t *testing.T) {
	tests := []struct {
		argv []string
		want string
	}{
		{[]string{"make", "gpu-test"}, "make gpu-test"},
		{[]string{"go", "test", "-run=TestCUDA", "./pkg/..."}, "go test -run=TestCUDA ./pkg/..."},
		{[]string{"sh", "-c", "pytest -k 'cuda and not slow'"}, `sh -c "pytest -k 'cuda and not slow'"`},
		{[]string{"printf", "a\nb", ""}, `printf "a\nb" ""`},
	}
	for _, tc := range tests {
		assert.Equal(t, FormatCommand(tc.argv), tc.want)
	}
}

func FuzzParseMarker(f *testing.F) {
	f.Add(Marker(headSHA))
	f.Add(Marker(strings.Repeat("f", 64)) + "\r")
	f.Add("<!-- runpod-gpu local-gpu-gate:v1 sha= -->")
	f.Fuzz(func(t *testing.T, line string) {
		sha, err := ParseMarker(line)
		if err != nil {
			return
		}
		if got := Marker(sha); got != strings.TrimSuffix(line, "\r") {
			t.Fatalf("ParseMarker(%q) = %q, which formats back as %q", line, sha, got)
		}
	})
}

func FuzzParseEvidence(f *testing.F) {
	good, _ := sampleEvidence(headSHA).Comment()
	f.Add(good)
	f.Add(strings.ReplaceAll(good, "\n", "\r\n"))
	f.Add(Marker(headSHA) + "\n- GPU: ``` `` ```\n- Command: ` `")
	f.Fuzz(func(t *testing.T, body string) {
		e, err := ParseEvidence(body)
		if err != nil {
			return
		}
		// Whatever parses is valid evidence and survives a round trip.
		again, err := e.Comment()
		if err != nil {
			t.Fatalf("parsed evidence %+v does not render: %v", e, err)
		}
		back, err := ParseEvidence(again)
		if err != nil || back != e {
			t.Fatalf("round trip of %+v: got %+v, %v", e, back, err)
		}
	})
}

func FuzzEvidenceComment(f *testing.F) {
	f.Add("NVIDIA A100", "550.54.14", "make gpu-test", int64(723))
	f.Add("`a`", "``", "x `` y", int64(0))
	f.Fuzz(func(t *testing.T, gpu, driver, command string, seconds int64) {
		e := sampleEvidence(headSHA)
		e.GPUName, e.Driver, e.Command, e.Duration = gpu, driver, command, time.Duration(seconds)*time.Second
		body, err := e.Comment()
		if err != nil {
			return
		}
		back, err := ParseEvidence(body)
		if err != nil || back != e {
			t.Fatalf("round trip of %+v: got %+v, %v\n%s", e, back, err, body)
		}
	})
}
