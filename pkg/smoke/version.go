package smoke

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
)

// Version is a CUDA release, major.minor: "12.8" as configurations write it and 12080
// (1000*major + 10*minor) as cuDriverGetVersion reports it.
type Version struct {
	Major, Minor int
}

// Bounds keep Code unambiguous: a minor of 100 would collide with the next major.
const (
	maxVersionMajor = 999
	maxVersionMinor = 99
)

// ParseVersion parses "MAJOR.MINOR" (or "MAJOR", meaning MAJOR.0), e.g. "12.6".
// Leading zeros, signs and spaces inside the number are rejected so that "12.08" is
// never silently read as 12.8.
func ParseVersion(s string) (Version, error) {
	majorText, minorText, hasMinor := strings.Cut(strings.TrimSpace(s), ".")
	major, err := parseVersionPart(majorText, maxVersionMajor)
	if err != nil {
		return Version{}, fmt.Errorf("CUDA version %q: want MAJOR.MINOR such as 12.8", s)
	}
	minor := 0
	if hasMinor {
		if minor, err = parseVersionPart(minorText, maxVersionMinor); err != nil {
			return Version{}, fmt.Errorf("CUDA version %q: want MAJOR.MINOR such as 12.8", s)
		}
	}
	if major == 0 {
		return Version{}, fmt.Errorf("CUDA version %q: major version must be at least 1", s)
	}
	return Version{Major: major, Minor: minor}, nil
}

// parseVersionPart accepts a plain decimal without sign or leading zero, at most limit.
func parseVersionPart(s string, limit int) (int, error) {
	if s == "" || len(s) > 3 || (len(s) > 1 && s[0] == '0') {
		return 0, strconv.ErrSyntax
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, strconv.ErrSyntax
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > limit {
		return 0, strconv.ErrRange
	}
	return n, nil
}

// VersionFromCode decodes the driver API's integer encoding, e.g. 12080 → 12.8.
func VersionFromCode(code int) (Version, error) {
	if code < 1000 || code > maxVersionMajor*1000+maxVersionMinor*10 || code%10 != 0 {
		return Version{}, fmt.Errorf("CUDA version code %d: want 1000*major + 10*minor, such as 12080", code)
	}
	return Version{Major: code / 1000, Minor: code % 1000 / 10}, nil
}

// Code is the driver API's integer encoding of v, e.g. 12.8 → 12080.
func (v Version) Code() int { return v.Major*1000 + v.Minor*10 }

// String formats v as "MAJOR.MINOR".
func (v Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// Compare returns -1, 0 or +1 as v is older than, equal to or newer than w.
func (v Version) Compare(w Version) int {
	switch {
	case v.Major != w.Major:
		return cmp.Compare(v.Major, w.Major)
	default:
		return cmp.Compare(v.Minor, w.Minor)
	}
}

// AtLeast reports whether v is w or newer.
func (v Version) AtLeast(w Version) bool { return v.Compare(w) >= 0 }

// MarshalText writes v as "MAJOR.MINOR" so reports show versions the way configs do.
func (v Version) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// UnmarshalText parses "MAJOR.MINOR".
func (v *Version) UnmarshalText(b []byte) error {
	parsed, err := ParseVersion(string(b))
	if err != nil {
		return err
	}
	*v = parsed
	return nil
}
