// Package cudaver is the one grammar for CUDA versions such as "12.6": the
// configuration, the startup script's parameters and the pod-side proof all
// parse with it, so a version one of them accepts the others accept too (a
// floor the proof would refuse is refused before any pod is paid for).
//
// It imports only the standard library's basics, because the proof that
// every candidate pod downloads links it.
package cudaver

import (
	"cmp"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Bounds of each component. The minor stays below 100 because the driver
// reports its version as 1000*major + 10*minor (cuDriverGetVersion), where a
// minor of 100 would read as the next major: "12.100" can never be met or
// reported, so it is refused everywhere instead of paid for and then failed.
const (
	MaxMajor = 999
	MaxMinor = 99
)

// ErrSyntax is matched (errors.Is) by every error from Parse.
var ErrSyntax = errors.New(`want a CUDA version "major.minor" such as "12.6"`)

// Version is a CUDA release, compared numerically (12.10 is above 12.9).
// The zero value means "not set".
type Version struct {
	Major, Minor int
}

// Parse reads "major.minor": decimal digits only, no sign, space or leading
// zero (so every version has exactly one spelling and "12.06" is never read
// as 12.6), major 1 to MaxMajor, minor 0 to MaxMinor.
func Parse(s string) (Version, error) {
	majorText, minorText, ok := strings.Cut(s, ".")
	if !ok {
		return Version{}, fmt.Errorf("%q: %w", s, ErrSyntax)
	}
	major, okMajor := parseComponent(majorText, MaxMajor)
	minor, okMinor := parseComponent(minorText, MaxMinor)
	if !okMajor || !okMinor || major == 0 {
		return Version{}, fmt.Errorf("%q: %w", s, ErrSyntax)
	}
	return Version{Major: major, Minor: minor}, nil
}

// parseComponent accepts canonical decimal digits up to limit.
func parseComponent(s string, limit int) (int, bool) {
	if s == "" || len(s) > len(strconv.Itoa(limit)) || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n <= limit
}

// FromCode decodes the driver API's integer encoding, e.g. 12080 → 12.8.
func FromCode(code int) (Version, error) {
	if code < 1000 || code > MaxMajor*1000+MaxMinor*10 || code%10 != 0 {
		return Version{}, fmt.Errorf("CUDA version code %d: want 1000*major + 10*minor, such as 12080", code)
	}
	return Version{Major: code / 1000, Minor: code % 1000 / 10}, nil
}

// Code is the driver API's integer encoding of v, e.g. 12.8 → 12080.
func (v Version) Code() int { return v.Major*1000 + v.Minor*10 }

// String returns "major.minor", or "" for the zero value.
func (v Version) String() string {
	if v.IsZero() {
		return ""
	}
	return strconv.Itoa(v.Major) + "." + strconv.Itoa(v.Minor)
}

// IsZero reports whether v is unset.
func (v Version) IsZero() bool { return v == Version{} }

// Valid reports whether v is within the grammar's bounds, for versions built
// in code rather than parsed.
func (v Version) Valid() bool {
	return v.Major >= 1 && v.Major <= MaxMajor && v.Minor >= 0 && v.Minor <= MaxMinor
}

// Compare returns -1, 0 or +1 as v is below, equal to or above o.
func (v Version) Compare(o Version) int {
	if v.Major != o.Major {
		return cmp.Compare(v.Major, o.Major)
	}
	return cmp.Compare(v.Minor, o.Minor)
}

// AtLeast reports whether v >= o.
func (v Version) AtLeast(o Version) bool { return v.Compare(o) >= 0 }

// MarshalText encodes v as "major.minor", so reports and JSON show versions
// the way configurations write them.
func (v Version) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// UnmarshalText parses "major.minor".
func (v *Version) UnmarshalText(text []byte) error {
	parsed, err := Parse(string(text))
	if err != nil {
		return err
	}
	*v = parsed
	return nil
}
