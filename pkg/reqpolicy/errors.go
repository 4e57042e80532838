package reqpolicy

import (
	"errors"
	"fmt"
	"time"
)

// ErrWaitExceedsDeadline is matched (errors.Is) by every *WaitError: a required
// pause did not fit the caller's remaining deadline, so the request was not sent
// again.
var ErrWaitExceedsDeadline = errors.New("required wait exceeds the remaining deadline")

// WaitError reports a wait (cooldown, backoff or Retry-After) longer than what is
// left of the request context's deadline. It is returned at once, without
// sleeping, so the caller can end its attempt instead of retrying early.
type WaitError struct {
	Wait      time.Duration // the pause the policy required
	Remaining time.Duration // what was left of the caller's deadline
	Reason    string        // why the pause was required, e.g. "Retry-After after 429 Too Many Requests"
	Status    int           // HTTP status of the last response, 0 when none (cooldown or transport error)
}

func (e *WaitError) Error() string {
	return fmt.Sprintf("wait %s (%s) exceeds the remaining deadline %s", e.Wait, e.Reason, e.Remaining.Round(time.Millisecond))
}

// Is makes errors.Is(err, ErrWaitExceedsDeadline) true.
func (e *WaitError) Is(target error) bool { return target == ErrWaitExceedsDeadline }

// redactedError keeps a transport error's chain (for errors.Is on context
// errors) while its text passes through the Redactor.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
