package localgate

import (
	"errors"
	"fmt"
)

// ErrRefused matches every *RefusedError: a verification failed, so nothing
// was posted, dispatched or published.
var ErrRefused = errors.New("local GPU gate refused")

// Check names one verification of the local command or the relay.
type Check string

// The verifications, in the order the relay runs them.
const (
	CheckRequest        Check = "request"         // the dispatch inputs themselves are malformed
	CheckTrigger        Check = "trigger"         // the relay must run from workflow_dispatch on the default branch
	CheckDispatcherRole Check = "dispatcher-role" // the dispatcher must be admin or maintain
	CheckPRState        Check = "pr-state"        // the pull request must be open
	CheckOrigin         Check = "pr-origin"       // the local command runs a fork PR's code only with AllowFork
	CheckLabel          Check = "label"           // the pull request must carry gatecheck.LocalLabel
	CheckHeadSHA        Check = "head-sha"        // the pull request's head must be the validated commit
	CheckComment        Check = "comment"         // the evidence comment must be on that pull request
	CheckCommentAuthor  Check = "comment-author"  // the comment's author must be admin or maintain
	CheckMarker         Check = "marker"          // the comment's first line must be the marker for the SHA
	CheckEvidence       Check = "evidence"        // the comment's evidence lines must be well formed
	CheckPRUnchanged    Check = "pr-unchanged"    // the second read must match the first
	CheckWorktreeClean  Check = "worktree-clean"  // the local checkout must have no changes
	CheckLocalCommit    Check = "local-commit"    // the local checkout must be at a resolvable commit
)

// RefusedError says which verification failed and why.
type RefusedError struct {
	Check  Check
	Reason string
}

// Error reads "local GPU gate refused (check): reason".
func (e *RefusedError) Error() string {
	return fmt.Sprintf("local GPU gate refused (%s): %s", e.Check, e.Reason)
}

// Is reports whether target is ErrRefused.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

func refuse(check Check, format string, args ...any) error {
	return &RefusedError{Check: check, Reason: fmt.Sprintf(format, args...)}
}

// CheckOf returns the verification that refused err, or "" when err is not a refusal.
func CheckOf(err error) Check {
	var r *RefusedError
	if errors.As(err, &r) {
		return r.Check
	}
	return ""
}
