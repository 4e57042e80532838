package cost

import (
	"encoding/json"
	"strings"
)

// Conclusion is how the GPU job that ran on the accepted pod ended, so the
// cost history can tell a paid failure from a paid success.
type Conclusion string

// Conclusions. A report that states none (an artifact written before
// reports carried it, or a reaper's report) reads as ConclusionUnknown.
const (
	ConclusionSuccess   Conclusion = "success"
	ConclusionFailure   Conclusion = "failure" // GitHub's failure and timed_out
	ConclusionCancelled Conclusion = "cancelled"
	ConclusionSkipped   Conclusion = "skipped"
	ConclusionUnknown   Conclusion = "unknown" // not finished, not found, or another GitHub conclusion
)

// Conclusions lists every conclusion in report order.
var Conclusions = []Conclusion{ConclusionSuccess, ConclusionFailure, ConclusionCancelled, ConclusionSkipped, ConclusionUnknown}

// Valid reports whether c is one of Conclusions; "" (not stated) is not.
func (c Conclusion) Valid() bool {
	for _, v := range Conclusions {
		if c == v {
			return true
		}
	}
	return false
}

// OrUnknown returns c, or ConclusionUnknown when c is not stated.
func (c Conclusion) OrUnknown() Conclusion {
	if c == "" {
		return ConclusionUnknown
	}
	return c
}

// JobConclusion maps a GitHub job's status and conclusion to a Conclusion.
// Only a completed job has one; timed_out is a failure the job did not
// choose; neutral, action_required and anything newer are unknown rather
// than guessed.
func JobConclusion(status, conclusion string) Conclusion {
	if status != "completed" {
		return ConclusionUnknown
	}
	switch strings.ToLower(conclusion) {
	case "success":
		return ConclusionSuccess
	case "failure", "timed_out":
		return ConclusionFailure
	case "cancelled":
		return ConclusionCancelled
	case "skipped":
		return ConclusionSkipped
	}
	return ConclusionUnknown
}

// UnmarshalJSON accepts one of Conclusions; null is not stated, as absent is.
func (c *Conclusion) UnmarshalJSON(b []byte) error {
	*c = ""
	if isNull(b) {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil || !Conclusion(s).Valid() {
		return invalid("%s: want %s, %s, %s, %s or %s", clip(b), ConclusionSuccess, ConclusionFailure,
			ConclusionCancelled, ConclusionSkipped, ConclusionUnknown)
	}
	*c = Conclusion(s)
	return nil
}
