package config

import (
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/org/runpod-gpu/pkg/cudaver"
)

// ErrCUDAVersion is matched (errors.Is) by every error from ParseCUDAVersion.
var ErrCUDAVersion = cudaver.ErrSyntax

// CUDAVersion is a CUDA API version such as 12.6, compared numerically
// (12.10 is above 12.9), in pkg/cudaver's grammar, the one the startup script
// and the pod's proof use. The zero value means "not set". It is a type of its
// own only for its YAML rules.
type CUDAVersion cudaver.Version

// ParseCUDAVersion parses "major.minor" as cudaver.Parse does, the form
// RunPod's minCudaVersion and the config use.
func ParseCUDAVersion(s string) (CUDAVersion, error) {
	v, err := cudaver.Parse(s)
	return CUDAVersion(v), err
}

// String returns "major.minor", or "" for the zero value.
func (v CUDAVersion) String() string { return cudaver.Version(v).String() }

// IsZero reports whether v is unset.
func (v CUDAVersion) IsZero() bool { return cudaver.Version(v).IsZero() }

// Compare returns -1, 0 or +1 as v is below, equal to or above o.
func (v CUDAVersion) Compare(o CUDAVersion) int {
	return cudaver.Version(v).Compare(cudaver.Version(o))
}

// AtLeast reports whether v >= o.
func (v CUDAVersion) AtLeast(o CUDAVersion) bool { return v.Compare(o) >= 0 }

// MarshalText encodes v as "major.minor" (a JSON string).
func (v CUDAVersion) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// UnmarshalText parses "major.minor".
func (v *CUDAVersion) UnmarshalText(text []byte) error {
	return (*cudaver.Version)(v).UnmarshalText(text)
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
func (v CUDAVersion) valid() bool { return cudaver.Version(v).Valid() }
