package ownership

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/lazyre"
)

// The debug-retention artifact name is the record that pods of a run attempt
// were kept on purpose: provision writes it (FormatRetentionName), the reaper
// reads it (ParseRetentionName). It lives here, beside the other ownership
// names, so that neither job imports the other.

// RetentionPrefix starts the name of every debug-retention artifact:
// runpod-debug-retained-<run id>-<run attempt>-<pod id>,<pod id>,…
const RetentionPrefix = "runpod-debug-retained-"

// ReapRecordPrefix starts the name of the reaper's decision-record artifact,
// ReapRecordPrefix<run id>-<run attempt> (reap.yml uploads it; the cost
// history reads it to price the pods the reaper deleted).
const ReapRecordPrefix = "runpod-gpu-reap-"

var (
	// ErrNotRetentionName means an artifact name does not start with
	// RetentionPrefix: it is some other artifact.
	ErrNotRetentionName = errors.New("not a debug-retention artifact name")
	// ErrMalformedRetentionName matches a *RetentionNameError.
	ErrMalformedRetentionName = errors.New("malformed debug-retention artifact name")
)

// RetentionNameError reports a name that starts with RetentionPrefix but is
// not one FormatRetentionName writes.
type RetentionNameError struct {
	Name    string
	Problem string
}

// Error names the artifact, the problem and the expected form.
func (e *RetentionNameError) Error() string {
	return fmt.Sprintf("artifact %q: %s; want %s<run id>-<run attempt>-<pod id>[,<pod id>…]", clipName(e.Name), e.Problem, RetentionPrefix)
}

// Is makes errors.Is(err, ErrMalformedRetentionName) hold.
func (e *RetentionNameError) Is(target error) bool { return target == ErrMalformedRetentionName }

// Retention is one debug-retention record: the pods a provision attempt kept
// for inspection instead of deleting them.
type Retention struct {
	RunID   int64
	Attempt int
	PodIDs  []string
}

// Retains reports whether the record keeps podID of the given run attempt.
func (r Retention) Retains(runID int64, attempt int, podID string) bool {
	return r.RunID == runID && r.Attempt == attempt && slices.Contains(r.PodIDs, podID)
}

// podIDRE is what a RunPod pod id looks like; commas and dashes would make
// the name ambiguous, and GitHub refuses some other characters in names.
var podIDRE = lazyre.Regexp{Pattern: `^[A-Za-z0-9]+$`}

// DefaultRetentionCap is how long a retained pod is kept at most by
// default: past it the reaper reclaims it although a record retains it.
const DefaultRetentionCap = 24 * time.Hour

// maxAttempt bounds a run attempt, as GitHub's own numbers are small.
const maxAttempt = 1<<31 - 1

// FormatRetentionName returns the artifact name recording that podIDs of run
// attempt runID/attempt are retained. The ids keep their order.
func FormatRetentionName(runID int64, attempt int, podIDs []string) (string, error) {
	switch {
	case runID <= 0:
		return "", fmt.Errorf("retention name: run id %d: want a positive number", runID)
	case attempt <= 0 || attempt > maxAttempt:
		return "", fmt.Errorf("retention name: run attempt %d: want a positive number", attempt)
	case len(podIDs) == 0:
		return "", errors.New("retention name: no pod ids: want at least one")
	}
	for _, id := range podIDs {
		if !podIDRE.MatchString(id) {
			return "", fmt.Errorf("retention name: pod id %q: want letters and digits only", clipName(id))
		}
	}
	return fmt.Sprintf("%s%d-%d-%s", RetentionPrefix, runID, attempt, strings.Join(podIDs, ",")), nil
}

// ParseRetentionName reads an artifact name written by FormatRetentionName.
// Other artifacts' names fail with ErrNotRetentionName; a name with the
// prefix that FormatRetentionName would not write fails with a
// *RetentionNameError. A parsed name formats back to exactly itself.
func ParseRetentionName(name string) (Retention, error) {
	rest, ok := strings.CutPrefix(name, RetentionPrefix)
	if !ok {
		return Retention{}, ErrNotRetentionName
	}
	malformed := func(problem string) (Retention, error) {
		return Retention{}, &RetentionNameError{Name: name, Problem: problem}
	}
	runText, rest, ok1 := strings.Cut(rest, "-")
	attemptText, ids, ok2 := strings.Cut(rest, "-")
	if !ok1 || !ok2 {
		return malformed("missing a part")
	}
	runID, err := canonicalNumber(runText, 1<<63-1)
	if err != nil {
		return malformed("run id " + err.Error())
	}
	attempt, err := canonicalNumber(attemptText, maxAttempt)
	if err != nil {
		return malformed("run attempt " + err.Error())
	}
	r := Retention{RunID: runID, Attempt: int(attempt), PodIDs: strings.Split(ids, ",")}
	for _, id := range r.PodIDs {
		if !podIDRE.MatchString(id) {
			return malformed(fmt.Sprintf("pod id %q is not letters and digits", clipName(id)))
		}
	}
	return r, nil
}

// canonicalNumber parses a positive decimal without sign or leading zeros.
func canonicalNumber(s string, limit int64) (int64, error) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" || s[0] == '0' {
		return 0, fmt.Errorf("%q is not a positive decimal number", clipName(s))
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > limit {
		return 0, fmt.Errorf("%q is out of range", clipName(s))
	}
	return n, nil
}

// clipName keeps outside text in messages short.
func clipName(s string) string {
	const limit = 120
	if len(s) <= limit {
		return s
	}
	return s[:limit] + "…"
}
