package githubsim

import (
	"errors"
	"fmt"
	"net/http"
)

// Sentinel errors, matched with errors.Is, for the programmatic API and for the HTTP answers.
var (
	// ErrNotFound means the repository, pull request, run or other object does not exist.
	ErrNotFound = errors.New("not found")
	// ErrAlreadyExists means an object with that unique name or number already exists.
	ErrAlreadyExists = errors.New("already exists")
	// ErrInvalid means a request or setup value was refused; the message names the field.
	ErrInvalid = errors.New("invalid")
	// ErrUnauthorized means a credential (token, App JWT or JIT config) is unknown, expired
	// or malformed.
	ErrUnauthorized = errors.New("unauthorized")
	// ErrForbidden means the caller's identity may not do this (for example a user token
	// creating a check run, which only GitHub Apps may).
	ErrForbidden = errors.New("forbidden")
	// ErrConflict means the object is in a state that refuses the operation (a completed run
	// cannot be cancelled, a busy runner cannot be removed, a JIT config connects once).
	ErrConflict = errors.New("conflict")
	// ErrGone means the object existed but has been removed (an ephemeral runner after its job).
	ErrGone = errors.New("gone")
)

// Error is a refusal from the simulated GitHub: the HTTP status it answers with and a message
// shaped like GitHub's. It wraps one of the sentinel errors above.
type Error struct {
	Status  int
	Message string
	kind    error
	// docURL overrides the documentation_url of the answer; go-github classifies secondary
	// rate limits by it.
	docURL string
}

// Error describes the refusal with its status.
func (e *Error) Error() string { return fmt.Sprintf("githubsim: %s (%d)", e.Message, e.Status) }

// Unwrap returns the sentinel the error belongs to.
func (e *Error) Unwrap() error { return e.kind }

func newError(status int, kind error, format string, args ...any) *Error {
	return &Error{Status: status, Message: fmt.Sprintf(format, args...), kind: kind}
}

// notFound answers like GitHub does for anything missing: a bare "Not Found", so callers
// cannot tell a missing repository from a missing object, with the detail kept for Error().
func notFound(format string, args ...any) *Error {
	return newError(http.StatusNotFound, ErrNotFound, format, args...)
}

func invalid(format string, args ...any) *Error {
	return newError(http.StatusUnprocessableEntity, ErrInvalid, format, args...)
}

func alreadyExists(format string, args ...any) *Error {
	return newError(http.StatusConflict, ErrAlreadyExists, format, args...)
}

func conflict(format string, args ...any) *Error {
	return newError(http.StatusConflict, ErrConflict, format, args...)
}

func forbidden(format string, args ...any) *Error {
	return newError(http.StatusForbidden, ErrForbidden, format, args...)
}

func gone(format string, args ...any) *Error {
	return newError(http.StatusGone, ErrGone, format, args...)
}
