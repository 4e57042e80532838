package cost

import (
	"encoding/json"
	"fmt"
)

// MaxAttemptsValue bounds a rejected-attempts value: a plan has a handful of
// candidates, so anything longer is not provision's output.
const MaxAttemptsValue = 64 << 10

// FormatAttempts renders attempts as provision's rejected-attempts output and
// cleanup's input of the same name: one compact JSON array of the attempt
// objects the attempt log lines carry. encoding/json escapes control
// characters, so the value is a single line, as action outputs must be.
func FormatAttempts(attempts []Attempt) string {
	if attempts == nil {
		attempts = []Attempt{}
	}
	b, err := json.Marshal(attempts)
	if err != nil { // values of this package always encode
		return "[]"
	}
	return string(b)
}

// ParseAttempts reads a rejected-attempts value: what FormatAttempts writes,
// each attempt validated, none accepted (the accepted pod is reported on its
// own), none listed twice. An empty value is an error too: the caller tells
// "not passed" apart before parsing. Errors name the key path and say what is
// expected.
func ParseAttempts(value string) ([]Attempt, error) {
	if len(value) > MaxAttemptsValue {
		return nil, invalid("%d bytes: want at most %d (a JSON array of provision's rejected attempts)", len(value), MaxAttemptsValue)
	}
	var raw []json.RawMessage
	if err := json.Unmarshal([]byte(value), &raw); err != nil || raw == nil {
		return nil, invalid("%s: want a JSON array of provision's rejected attempts, as its rejected-attempts output writes", clip([]byte(value)))
	}
	out := make([]Attempt, 0, len(raw))
	seen := map[string]bool{}
	for i, item := range raw {
		var a Attempt
		if err := json.Unmarshal(item, &a); err != nil {
			return nil, fieldErr(fmt.Sprintf("[%d]", i), err)
		}
		if a.Outcome == OutcomeAccepted {
			return nil, fieldErr(fmt.Sprintf("[%d].outcome", i), invalid("%q: want a rejected or failed attempt; the accepted pod is reported on its own", a.Outcome))
		}
		if a.PodID != "" && seen[a.PodID] {
			return nil, fieldErr(fmt.Sprintf("[%d].podId", i), invalid("%q: listed twice; want each pod once, so it is not counted twice", a.PodID))
		}
		seen[a.PodID] = a.PodID != ""
		out = append(out, a)
	}
	return out, nil
}
