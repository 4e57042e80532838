package config

import (
	"cmp"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// ErrCUDAVersion is matched (errors.Is) by every error from ParseCUDAVersion.
var ErrCUDAVersion = errors.New(`CUDA version must be "major.minor", such as "12.6"`)

// maxCUDAComponentDigits bounds each component so parsing can never overflow
// and fuzzed input cannot build absurd versions.
const maxCUDAComponentDigits = 3

// CUDAVersion is a CUDA API version such as 12.6, compared numerically
// (12.10 is above 12.9). The zero value means "not set".
type CUDAVersion struct {
	Major int
	Minor int
}

// ParseCUDAVersion parses "major.minor" (decimal, no sign, no leading zeros,
// major at least 1, at most three digits each), the form RunPod's
// minCudaVersion and the config use.
func ParseCUDAVersion(s string) (CUDAVersion, error) {
	majorText, minorText, ok := strings.Cut(s, ".")
	if !ok {
		return CUDAVersion{}, fmt.Errorf("%q: %w", s, ErrCUDAVersion)
	}
	major, ok := parseCUDAComponent(majorText)
	if !ok || major == 0 {
		return CUDAVersion{}, fmt.Errorf("%q: %w", s, ErrCUDAVersion)
	}
	minor, ok := parseCUDAComponent(minorText)
	if !ok {
		return CUDAVersion{}, fmt.Errorf("%q: %w", s, ErrCUDAVersion)
	}
	return CUDAVersion{Major: major, Minor: minor}, nil
}

// parseCUDAComponent accepts only canonical decimal digits, so every version
// has exactly one spelling ("12.06" would otherwise silently equal "12.6").
func parseCUDAComponent(s string) (int, bool) {
	if s == "" || len(s) > maxCUDAComponentDigits || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// String returns "major.minor", or "" for the zero value.
func (v CUDAVersion) String() string {
	if v.IsZero() {
		return ""
	}
	return fmt.Sprintf("%d.%d", v.Major, v.Minor)
}

// IsZero reports whether v is unset.
func (v CUDAVersion) IsZero() bool { return v == CUDAVersion{} }

// Compare returns -1, 0 or +1 as v is below, equal to or above o.
func (v CUDAVersion) Compare(o CUDAVersion) int {
	if v.Major != o.Major {
		return cmp.Compare(v.Major, o.Major)
	}
	return cmp.Compare(v.Minor, o.Minor)
}

// AtLeast reports whether v >= o.
func (v CUDAVersion) AtLeast(o CUDAVersion) bool { return v.Compare(o) >= 0 }

// MarshalText encodes v as "major.minor" (a JSON string).
func (v CUDAVersion) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// UnmarshalText parses "major.minor".
func (v *CUDAVersion) UnmarshalText(text []byte) error {
	parsed, err := ParseCUDAVersion(string(text))
	if err != nil {
		return err
	}
	*v = parsed
	return nil
}

// MarshalYAML encodes v as a string, quoted by the encoder, because a plain
// 12.10 would read back as the float 12.1.
func (v CUDAVersion) MarshalYAML() (any, error) { return v.String(), nil }

// UnmarshalYAML accepts only a YAML string: an unquoted 12.10 is the float
// 12.1 before this code ever sees it, so numbers are refused, not guessed at.
func (v *CUDAVersion) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != strTag {
		return fmt.Errorf("line %d: %w (quote it)", n.Line, ErrCUDAVersion)
	}
	return v.UnmarshalText([]byte(n.Value))
}

// valid reports whether v could have come from ParseCUDAVersion, for configs
// built in code rather than parsed.
func (v CUDAVersion) valid() bool {
	const limit = 1000 // maxCUDAComponentDigits decimal digits
	return v.Major >= 1 && v.Major < limit && v.Minor >= 0 && v.Minor < limit
}
