package wire

// IsCommitSHA reports whether s is a full commit SHA as GitHub shows it: 40
// lower-case hex digits (SHA-1), or 64 in a SHA-256 repository. A SHA that
// decides what is tested, reused or deleted is never abbreviated or guessed.
func IsCommitSHA(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
