package suitecopy

import (
	"fmt"
	"strings"
)

// MaxOwnerLen is the longest GitHub user or organization name.
const MaxOwnerLen = 39

// OwnerError is an owner name the copy cannot take: Owner is the value,
// Rule the rule it breaks.
type OwnerError struct {
	Owner, Rule string
}

func (e *OwnerError) Error() string {
	return fmt.Sprintf("--to %q: %s", e.Owner, e.Rule)
}

// CheckOwner holds owner to GitHub's rules for user and organization names
// (letters, digits and single hyphens, no hyphen first or last, at most 39
// characters) and to lower case, which ghcr.io's image names require.
func CheckOwner(owner string) error {
	bad := func(rule string) error { return &OwnerError{Owner: owner, Rule: rule} }
	switch {
	case owner == "":
		return bad("want your GitHub user or organization name, e.g. --to acme")
	case len(owner) > MaxOwnerLen:
		return bad(fmt.Sprintf("a GitHub owner name has at most %d characters, this one %d", MaxOwnerLen, len(owner)))
	case strings.HasPrefix(owner, "-") || strings.HasSuffix(owner, "-"):
		return bad("a GitHub owner name cannot begin or end with a hyphen")
	case strings.Contains(owner, "--"):
		return bad("a GitHub owner name has single hyphens only")
	}
	for _, r := range owner {
		switch {
		case r >= 'A' && r <= 'Z':
			return bad(fmt.Sprintf("write it in lower case (%s): image names on ghcr.io are lower case, and GitHub ignores the case of owner names", strings.ToLower(owner)))
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
		default:
			return bad(fmt.Sprintf("a GitHub owner name has only letters, digits and hyphens, not %q", r))
		}
	}
	return nil
}
