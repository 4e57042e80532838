package cost

import (
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
)

// Line is one structured log line: the single definition shared by the
// actions that write logs and the history tool that reads them.
type Line struct {
	Kind    LineKind
	Attempt Attempt // when Kind is LineAttempt
	Cost    Report  // when Kind is LineCost
}

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
	default:
		return Line{}, true, fmt.Errorf("log line: %w %q: want %s or %s", ErrUnknownLineKind, clip([]byte(kind)), LineAttempt, LineCost)
	}
	if !json.Valid([]byte(payload)) {
		return Line{}, true, fmt.Errorf("log line %s%s: %w: want one JSON object after the kind", LinePrefix, kind, ErrInvalidValue)
	}
	if err := json.Unmarshal([]byte(payload), dst); err != nil {
		return Line{}, true, fmt.Errorf("log line %s%s: %w", LinePrefix, kind, err)
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
