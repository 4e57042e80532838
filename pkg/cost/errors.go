package cost

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Sentinel errors; callers test for them with errors.Is.
var (
	// ErrUnknownStart means the paid window has no provider start time.
	ErrUnknownStart = errors.New("paid window start unknown")
	// ErrUnknownEnd means the paid window has no confirmed deletion time.
	ErrUnknownEnd = errors.New("paid window end unknown")
	// ErrNegativeInterval means an interval ends before it starts.
	ErrNegativeInterval = errors.New("interval ends before it starts")
	// ErrOverlap means a step starts before the previous step ended or before its job started.
	ErrOverlap = errors.New("steps overlap")
	// ErrBeforeWindow means the job started before the pod's paid window did.
	ErrBeforeWindow = errors.New("starts before the paid window")
	// ErrStageSum means stored stages do not add up to the paid window.
	ErrStageSum = errors.New("stages do not sum to the paid window")
	// ErrUnsupportedSchema means a cost artifact names a schema this version cannot read.
	ErrUnsupportedSchema = errors.New("unsupported cost artifact schema")
	// ErrUnknownLineKind means a structured log line has a kind this version does not define.
	ErrUnknownLineKind = errors.New("unknown structured log line kind")
	// ErrInvalidValue means a value in outside data is not what the key allows.
	ErrInvalidValue = errors.New("invalid value")
)

// IntervalError reports an interval (the paid window, the job or a step) whose
// times are inconsistent. It wraps ErrNegativeInterval, ErrOverlap or ErrBeforeWindow.
type IntervalError struct {
	What       string    // "paid window", "job" or `step "Run tests"`
	Start, End time.Time // the offending interval as given
	Err        error
}

// Error names the interval, its times and the problem.
func (e *IntervalError) Error() string {
	return fmt.Sprintf("%s (%s → %s): %v", e.What,
		e.Start.UTC().Format(time.RFC3339Nano), e.End.UTC().Format(time.RFC3339Nano), e.Err)
}

// Unwrap returns the sentinel error.
func (e *IntervalError) Unwrap() error { return e.Err }

// FieldError reports an unusable value in outside data (a pod record, cost
// artifact or log line), naming the JSON key.
type FieldError struct {
	Key string // JSON key path, e.g. "startedAt" or "stages[2].seconds"
	Err error
}

// Error names the key and the problem.
func (e *FieldError) Error() string { return fmt.Sprintf("key %q: %v", e.Key, e.Err) }

// Unwrap returns the underlying error.
func (e *FieldError) Unwrap() error { return e.Err }

// fieldErr wraps err with the key it came from, prefixing keys of nested errors.
func fieldErr(key string, err error) error {
	var fe *FieldError
	if errors.As(err, &fe) && err == error(fe) {
		sep := "."
		if strings.HasPrefix(fe.Key, "[") {
			sep = ""
		}
		return &FieldError{Key: key + sep + fe.Key, Err: fe.Err}
	}
	return &FieldError{Key: key, Err: err}
}

// invalid builds an ErrInvalidValue error that says what the key expects.
func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidValue, fmt.Sprintf(format, args...))
}
