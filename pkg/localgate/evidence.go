package localgate

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/org/runpod-gpu/pkg/lazyre"
	"github.com/org/runpod-gpu/pkg/wire"
)

// Marker parts: "<!-- runpod-gpu local-gpu-gate:v1 sha=<sha> -->". The version
// lets a later format coexist without an old relay misreading it.
const (
	markerPrefix = "<!-- runpod-gpu local-gpu-gate:v1 sha="
	markerSuffix = " -->"
)

// MaxDuration bounds the lane duration an evidence comment may state.
const MaxDuration = 1000 * time.Hour

// maxFieldBytes bounds each evidence value, keeping a comment far below
// GitHub's 65536-character limit whatever the lane command is.
const maxFieldBytes = 2000

var (
	digestRE    = lazyre.Regexp{Pattern: `^[0-9a-f]{64}$`}
	cudaRE      = lazyre.Regexp{Pattern: `^[0-9]{1,3}\.[0-9]{1,3}$`}
	evidenceKey = []string{keyGPU, keyDriver, keyCUDA, keyDuration, keyLogDigest, keyCommand}
)

// The evidence line keys, in the order Comment writes them.
const (
	keyGPU       = "GPU"
	keyDriver    = "Driver"
	keyCUDA      = "CUDA"
	keyDuration  = "Duration"
	keyLogDigest = "Log SHA-256"
	keyCommand   = "Command"
)

// Marker returns the evidence comment's first line for sha. It does not
// validate sha; Evidence.Comment does.
func Marker(sha string) string { return markerPrefix + sha + markerSuffix }

// ParseMarker returns the commit SHA a marker line names. A trailing "\r"
// (GitHub may store CRLF line ends) is ignored; anything else must match exactly.
func ParseMarker(line string) (string, error) {
	line = strings.TrimSuffix(line, "\r")
	rest, ok := strings.CutPrefix(line, markerPrefix)
	if !ok {
		return "", fmt.Errorf("first line %q is not a local-gate marker; want %q", clipText(line), Marker("<commit sha>"))
	}
	sha, ok := strings.CutSuffix(rest, markerSuffix)
	if !ok {
		return "", fmt.Errorf("marker %q does not end with %q", clipText(line), markerSuffix)
	}
	if !wire.IsCommitSHA(sha) {
		return "", fmt.Errorf("marker sha %q: want a full lowercase commit SHA", clipText(sha))
	}
	return sha, nil
}

// Evidence is what a local GPU validation states about one commit.
type Evidence struct {
	SHA         string        // the validated commit
	GPUName     string        // nvidia-smi's name, "2 x <name>" for several identical GPUs
	Driver      string        // NVIDIA driver version, e.g. "550.54.14"
	CUDAVersion string        // the driver's CUDA API version, e.g. "12.4"
	Duration    time.Duration // lane wall time, whole seconds
	LogSHA256   string        // sha256 of the lane's combined stdout and stderr, lowercase hex
	Command     string        // the lane command as FormatCommand shows it
}

// Validate checks every field is present and safe to put on one Markdown line.
func (e Evidence) Validate() error {
	if !wire.IsCommitSHA(e.SHA) {
		return fmt.Errorf("evidence sha %q: want a full lowercase commit SHA", clipText(e.SHA))
	}
	for _, f := range []struct{ key, value string }{
		{keyGPU, e.GPUName}, {keyDriver, e.Driver}, {keyCUDA, e.CUDAVersion}, {keyCommand, e.Command},
	} {
		if err := checkField(f.key, f.value); err != nil {
			return err
		}
	}
	if !cudaRE.MatchString(e.CUDAVersion) {
		return fmt.Errorf("evidence CUDA %q: want a version such as 12.4", clipText(e.CUDAVersion))
	}
	if e.Duration < 0 || e.Duration > MaxDuration || e.Duration%time.Second != 0 {
		return fmt.Errorf("evidence duration %s: want whole seconds from 0 to %s", e.Duration, MaxDuration)
	}
	if !digestRE.MatchString(e.LogSHA256) {
		return fmt.Errorf("evidence log SHA-256 %q: want 64 lowercase hex digits", clipText(e.LogSHA256))
	}
	return nil
}

// checkField accepts a non-empty, single-line, printable value without
// surrounding whitespace (which Markdown would not show).
func checkField(key, value string) error {
	switch {
	case value == "":
		return fmt.Errorf("evidence %s is empty", key)
	case len(value) > maxFieldBytes:
		return fmt.Errorf("evidence %s is %d bytes; want at most %d", key, len(value), maxFieldBytes)
	case !utf8.ValidString(value):
		return fmt.Errorf("evidence %s %q is not valid UTF-8", key, clipText(value))
	case strings.TrimSpace(value) != value:
		return fmt.Errorf("evidence %s %q has leading or trailing whitespace", key, clipText(value))
	case strings.IndexFunc(value, unicode.IsControl) >= 0:
		return fmt.Errorf("evidence %s %q contains a control character (a newline would end the line)", key, clipText(value))
	}
	return nil
}

// Comment renders the evidence comment: the marker line, a heading and one
// "- Key: `value`" line per field (see the package documentation).
func (e Evidence) Comment() (string, error) {
	if err := e.Validate(); err != nil {
		return "", err
	}
	values := map[string]string{
		keyGPU: e.GPUName, keyDriver: e.Driver, keyCUDA: e.CUDAVersion,
		keyDuration: e.Duration.String(), keyLogDigest: e.LogSHA256, keyCommand: e.Command,
	}
	var b strings.Builder
	b.WriteString(Marker(e.SHA) + "\n")
	fmt.Fprintf(&b, "### Local GPU validation passed for `%s`\n\n", e.SHA)
	for _, key := range evidenceKey {
		fmt.Fprintf(&b, "- %s: %s\n", key, codeSpan(values[key]))
	}
	b.WriteString("\nThe GPU lane ran on a maintainer's machine in a clean worktree of exactly this commit. " +
		"The local-gate relay re-verifies this comment and publishes the CI GPU gate for this commit only; " +
		"a new push needs a new local run.\n")
	return b.String(), nil
}

// ParseEvidence reads an evidence comment written by Comment. Lines other
// than the marker and the known "- Key: `value`" lines are ignored, so a
// maintainer may add notes; a known key twice is an error.
func ParseEvidence(body string) (Evidence, error) {
	lines := strings.Split(body, "\n")
	sha, err := ParseMarker(lines[0])
	if err != nil {
		return Evidence{}, err
	}
	values := map[string]string{}
	for _, line := range lines[1:] {
		line = strings.TrimSuffix(line, "\r")
		key, raw, ok := evidenceLine(line)
		if !ok {
			continue
		}
		if _, dup := values[key]; dup {
			return Evidence{}, fmt.Errorf("evidence line %q appears twice", key)
		}
		v, err := parseCodeSpan(raw)
		if err != nil {
			return Evidence{}, fmt.Errorf("evidence line %q: %w", key, err)
		}
		values[key] = v
	}
	var missing []string
	for _, key := range evidenceKey {
		if _, ok := values[key]; !ok {
			missing = append(missing, key)
		}
	}
	if len(missing) > 0 {
		return Evidence{}, fmt.Errorf("evidence lines missing: %s", strings.Join(missing, ", "))
	}
	d, err := time.ParseDuration(values[keyDuration])
	if err != nil {
		return Evidence{}, fmt.Errorf("evidence duration %q: want a Go duration such as 12m3s", clipText(values[keyDuration]))
	}
	e := Evidence{
		SHA: sha, GPUName: values[keyGPU], Driver: values[keyDriver], CUDAVersion: values[keyCUDA],
		Duration: d, LogSHA256: values[keyLogDigest], Command: values[keyCommand],
	}
	if err := e.Validate(); err != nil {
		return Evidence{}, err
	}
	return e, nil
}

// evidenceLine splits "- Key: rest" for a known key.
func evidenceLine(line string) (key, rest string, ok bool) {
	item, ok := strings.CutPrefix(line, "- ")
	if !ok {
		return "", "", false
	}
	for _, k := range evidenceKey {
		if rest, ok := strings.CutPrefix(item, k+": "); ok {
			return k, rest, true
		}
	}
	return "", "", false
}

// codeSpan wraps v in a Markdown code span that shows it verbatim: the fence
// is one backtick longer than any run inside, and a space pads a value that
// starts or ends with a backtick (CommonMark strips one space from each side).
func codeSpan(v string) string {
	fence := strings.Repeat("`", longestRun(v, '`')+1)
	if strings.HasPrefix(v, "`") || strings.HasSuffix(v, "`") {
		return fence + " " + v + " " + fence
	}
	return fence + v + fence
}

// parseCodeSpan undoes codeSpan.
func parseCodeSpan(s string) (string, error) {
	n := 0
	for n < len(s) && s[n] == '`' {
		n++
	}
	fence := s[:n]
	if n == 0 || len(s) < 2*n+1 || !strings.HasSuffix(s, fence) || s[len(s)-n-1] == '`' {
		return "", errors.New("want the value in a code span, e.g. `value`")
	}
	inner := s[n : len(s)-n]
	if len(inner) >= 2 && inner[0] == ' ' && inner[len(inner)-1] == ' ' && strings.Trim(inner, " ") != "" {
		inner = inner[1 : len(inner)-1]
	}
	return inner, nil
}

func longestRun(s string, c byte) int {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}

// FormatCommand shows argv as one line a maintainer can read and mostly
// paste: plain words as they are, anything else Go-quoted (which also turns
// newlines and control characters into escapes).
func FormatCommand(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && strings.IndexFunc(a, needsQuote) < 0 {
			parts[i] = a
		} else {
			parts[i] = fmt.Sprintf("%q", a)
		}
	}
	return strings.Join(parts, " ")
}

func needsQuote(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return false
	}
	return !strings.ContainsRune("-_./=:,+@%", r)
}

// clipText shortens outside text quoted in an error.
func clipText(s string) string {
	const limit = 100
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
