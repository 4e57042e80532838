package cost

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/org/runpod-gpu/pkg/wire"
)

// LinePrefix starts every structured log line the actions write, e.g.
// `runpod-gpu::attempt {"attempt":1,…}`. It is not a workflow command (those
// start with "::"), so the runner prints it unchanged.
const LinePrefix = "runpod-gpu::"

// LineKind names what a structured log line carries.
type LineKind string

// Line kinds.
const (
	LineAttempt LineKind = "attempt" // one provision attempt (Attempt)
	LineCost    LineKind = "cost"    // a cost report (Report) from cleanup or the watchdog
	// LineSeal vouches for a cost artifact file (Seal) the job that logs it
	// wrote: the history counts an artifact only when a lane job's log
	// carries its digest, since any job of the run can upload an artifact.
	LineSeal LineKind = "seal"
)

// Line is one structured log line: the single definition shared by the
// actions that write logs and the history tool that reads them.
type Line struct {
	Kind    LineKind
	Attempt Attempt // when Kind is LineAttempt
	Cost    Report  // when Kind is LineCost
	Seal    Seal    // when Kind is LineSeal
}

// Seal is a cost artifact file's SHA-256 as the lane job that wrote it
// logged it. A job's log is written by its own runner only, so the GPU job's
// pull-request code can upload an artifact but cannot seal it.
type Seal struct {
	SHA256 string `json:"sha256"` // lower-case hex of the file's bytes
}

// SealOf returns the seal of a cost artifact file's exact bytes.
func SealOf(file []byte) Seal {
	sum := sha256.Sum256(file)
	return Seal{SHA256: hex.EncodeToString(sum[:])}
}

// SealLine returns the log line that vouches for a cost artifact file.
func SealLine(file []byte) Line { return Line{Kind: LineSeal, Seal: SealOf(file)} }

// AttemptLine returns the log line for a provision attempt.
func AttemptLine(a Attempt) Line { return Line{Kind: LineAttempt, Attempt: a} }

// CostLine returns the log line for a cost report.
func CostLine(r Report) Line { return Line{Kind: LineCost, Cost: r} }

// Format renders the line as `runpod-gpu::<kind> <compact JSON>` on one line
// (encoding/json escapes control characters). Values of this package always
// encode, so Format cannot fail; an unknown kind yields a line ParseLine rejects.
func (l Line) Format() string {
	var payload any = struct{}{}
	switch l.Kind {
	case LineAttempt:
		payload = l.Attempt
	case LineCost:
		payload = l.Cost
	case LineSeal:
		payload = l.Seal
	}
	b, err := json.Marshal(payload)
	if err != nil {
		b = []byte("{}")
	}
	return LinePrefix + string(l.Kind) + " " + string(b)
}

// ParseLine reads one log line. It returns false (and no error) when the line
// is not a structured line at all, and true with an error when it is one but is
// malformed or of an unknown kind. A leading log timestamp, as in downloaded GitHub job
// logs ("2026-10-07T12:00:00.1234567Z runpod-gpu::…"), is skipped.
func ParseLine(s string) (Line, bool, error) {
	rest, ok := cutLinePrefix(strings.TrimRight(s, "\r\n"))
	if !ok {
		return Line{}, false, nil
	}
	kind, payload, _ := strings.Cut(rest, " ")
	line := Line{Kind: LineKind(kind)}
	var dst any
	switch line.Kind {
	case LineAttempt:
		dst = &line.Attempt
	case LineCost:
		dst = &line.Cost
	case LineSeal:
		dst = &line.Seal
	default:
		return Line{}, true, fmt.Errorf("log line: %w %q: want %s, %s or %s", ErrUnknownLineKind, clip([]byte(kind)), LineAttempt, LineCost, LineSeal)
	}
	if !json.Valid([]byte(payload)) {
		return Line{}, true, fmt.Errorf("log line %s%s: %w: want one JSON object after the kind", LinePrefix, kind, ErrInvalidValue)
	}
	if err := json.Unmarshal([]byte(payload), dst); err != nil {
		return Line{}, true, fmt.Errorf("log line %s%s: %w", LinePrefix, kind, err)
	}
	if line.Kind == LineSeal && !isSHA256(line.Seal.SHA256) {
		return Line{}, true, fmt.Errorf("log line %s%s: sha256 %q: %w: want 64 lower-case hex digits", LinePrefix, kind, clip([]byte(line.Seal.SHA256)), ErrInvalidValue)
	}
	return line, true, nil
}

// cutLinePrefix returns what follows LinePrefix, allowing leading blanks and
// one leading timestamp token.
func cutLinePrefix(s string) (string, bool) {
	s = strings.TrimLeft(s, " \t")
	if rest, ok := strings.CutPrefix(s, LinePrefix); ok {
		return rest, true
	}
	stamp, rest, found := strings.Cut(s, " ")
	if !found {
		return "", false
	}
	if _, err := wire.ParseTime(stamp); err != nil {
		return "", false
	}
	return strings.CutPrefix(strings.TrimLeft(rest, " \t"), LinePrefix)
}

// isSHA256 reports whether s is a SHA-256 in lower-case hex.
func isSHA256(s string) bool {
	return len(s) == 64 && strings.Trim(s, "0123456789abcdef") == ""
}
