package history

import "errors"

// Sentinel errors; callers test for them with errors.Is.
var (
	// ErrInvalidRange means the dates do not form an inclusive UTC date range.
	ErrInvalidRange = errors.New("invalid date range")
	// ErrNoEvidence means an offline regeneration found no saved evidence.
	ErrNoEvidence = errors.New("no saved evidence")
	// ErrInsideRepository means the evidence directory lies inside a git
	// working tree, where downloaded logs could be committed by mistake.
	ErrInsideRepository = errors.New("evidence directory is inside a git repository")
	// ErrCorruptEvidence means a saved evidence file cannot be read back.
	ErrCorruptEvidence = errors.New("corrupt saved evidence")
)
