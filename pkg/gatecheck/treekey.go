package gatecheck

// The tree key: what a gate validated, independent of which commit carried it.
//
// A merge commit's SHA covers its message, author, dates and parents, so a
// re-push that changes none of the tested files (an amended message, a rebase
// with no change, an unrelated base commit that leaves the merged tree as it
// was) gets a new merge SHA for the very same files. The key is the merge
// commit's tree hash plus a digest of everything that defines the lane around
// those files (the configuration, the test command, the runner image digest,
// the lane's workflow reference and the suite's version): equal keys mean the
// same files tested the same way. It is recorded in a v2 marker
//
//	runpod-gpu-gate:v2:<tested ref>:<kind>:tree:<tree sha>:lane:<lane digest>
//
// that keeps the merge SHA for the record. v1 markers stay valid: a v1 gate is
// reused only for exactly its tested ref, never by tree.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/org/runpod-gpu/pkg/wire"
)

// ExternalIDPrefixV2 starts a marker that carries a tree key.
const ExternalIDPrefixV2 = "runpod-gpu-gate:v2:"

// LaneDefinition is everything besides the tested files that decides what a
// lane's result means. Every field is required: a missing one is doubt, and
// doubt never reuses by tree.
type LaneDefinition struct {
	// Config is the loaded configuration in a canonical encoding (JSON of
	// config.Config), so a comment-only edit of the file keeps the key.
	Config []byte
	// TestCommand is the shell command the GPU job runs.
	TestCommand string
	// ImageDigest is the runner image the pods start from, pinned to its
	// digest ("…@sha256:<64 hex>"): a moved tag is a different lane.
	ImageDigest string
	// Workflow names the lane's workflow file and ref (GITHUB_WORKFLOW_REF,
	// or the caller's own lane-ref input).
	Workflow string
	// Version is the suite's version (version.Version): a new release of
	// the proof or the startup script is a different lane.
	Version string
}

// LaneDigest is the SHA-256 of the lane definition's fields, each length-prefixed
// so no two definitions share an encoding. It fails on a missing field.
func LaneDigest(d LaneDefinition) (string, error) {
	switch {
	case len(d.Config) == 0:
		return "", fmt.Errorf("lane digest: config is empty: want the loaded configuration")
	case strings.TrimSpace(d.TestCommand) == "":
		return "", fmt.Errorf("lane digest: test command is empty: want the command the GPU job runs (input test-command)")
	case !strings.Contains(d.ImageDigest, "@sha256:"):
		return "", fmt.Errorf("lane digest: runner image %q: want a reference pinned to its digest (…@sha256:…)", d.ImageDigest)
	case d.Workflow == "":
		return "", fmt.Errorf("lane digest: workflow is empty: want the lane's workflow file and ref (GITHUB_WORKFLOW_REF or input lane-ref)")
	case d.Version == "":
		return "", fmt.Errorf("lane digest: version is empty: want the suite's version")
	}
	fields, err := json.Marshal([]string{"runpod-gpu-lane/1", string(d.Config), d.TestCommand, d.ImageDigest, d.Workflow, d.Version})
	if err != nil { // strings always marshal; kept so a future field cannot panic
		return "", fmt.Errorf("lane digest: %w", err)
	}
	sum := sha256.Sum256(fields)
	return hex.EncodeToString(sum[:]), nil
}

// TreeKey identifies the tested files and the lane that tested them.
type TreeKey struct {
	Tree string // the merge commit's tree SHA
	Lane string // LaneDigest of the lane definition
}

// String formats the key as "tree:<sha>:lane:<digest>" (the marker's tail and
// the authorize action's tree-key output).
func (k TreeKey) String() string { return "tree:" + k.Tree + ":lane:" + k.Lane }

// Validate checks the tree is a full object SHA and the lane a SHA-256 hex digest.
func (k TreeKey) Validate() error {
	if !wire.IsCommitSHA(k.Tree) {
		return fmt.Errorf("tree key: tree %q: want a full lowercase tree SHA", k.Tree)
	}
	if len(k.Lane) != 64 || !isLowerHex(k.Lane) {
		return fmt.Errorf("tree key: lane %q: want a SHA-256 digest (64 lowercase hex digits)", k.Lane)
	}
	return nil
}

// ParseTreeKey parses "tree:<sha>:lane:<digest>"; "" is no key (nil, nil).
func ParseTreeKey(s string) (*TreeKey, error) {
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, ":")
	if len(parts) != 4 || parts[0] != "tree" || parts[2] != "lane" {
		return nil, fmt.Errorf("tree key %q: want tree:<tree sha>:lane:<lane digest>", truncate(s))
	}
	k := TreeKey{Tree: parts[1], Lane: parts[3]}
	if err := k.Validate(); err != nil {
		return nil, err
	}
	return &k, nil
}

// Marker is a parsed gate marker of either version.
type Marker struct {
	TestedRef string
	Kind      Kind
	// Key is set only by a v2 marker.
	Key *TreeKey
}

// FormatMarker formats a v2 marker when key is set and a v1 marker (exactly
// FormatExternalID) when it is nil.
func FormatMarker(testedRef string, kind Kind, key *TreeKey) (string, error) {
	v1, err := FormatExternalID(testedRef, kind)
	if err != nil || key == nil {
		return v1, err
	}
	if err := key.Validate(); err != nil {
		return "", fmt.Errorf("gate external_id: %w", err)
	}
	return ExternalIDPrefixV2 + testedRef + ":" + string(kind) + ":" + key.String(), nil
}

// ParseMarker parses a v1 or v2 marker; anything else (the local relay's
// marker included) is an error, so it never counts.
func ParseMarker(s string) (Marker, error) {
	rest, ok := strings.CutPrefix(s, ExternalIDPrefixV2)
	if !ok {
		id, err := ParseExternalID(s)
		return Marker{TestedRef: id.TestedRef, Kind: id.Kind}, err
	}
	parts := strings.SplitN(rest, ":", 3)
	if len(parts) != 3 {
		return Marker{}, fmt.Errorf("gate external_id %q: want %q<ref>:<kind>:tree:<sha>:lane:<digest>", truncate(s), ExternalIDPrefixV2)
	}
	id := ExternalID{TestedRef: parts[0], Kind: Kind(parts[1])}
	if err := id.Validate(); err != nil {
		return Marker{}, err
	}
	key, err := ParseTreeKey(parts[2])
	if err != nil {
		return Marker{}, fmt.Errorf("gate external_id: %w", err)
	}
	if key == nil {
		return Marker{}, fmt.Errorf("gate external_id %q: a v2 marker needs its tree key", truncate(s))
	}
	return Marker{TestedRef: id.TestedRef, Kind: id.Kind, Key: key}, nil
}

// String formats the marker back (v2 when it has a key).
func (m Marker) String() string {
	if m.Key == nil {
		return ExternalID{TestedRef: m.TestedRef, Kind: m.Kind}.String()
	}
	return ExternalIDPrefixV2 + m.TestedRef + ":" + string(m.Kind) + ":" + m.Key.String()
}

// sameTests reports whether a gate with marker m validated what q asks for.
// Equal tree keys match whatever the merge SHA (the point of the key). Without
// a key on both sides only the exact tested ref matches, as v1 always did; and
// the exact ref does not match when both keys are known and differ, because
// then the lane itself changed. Doubt never widens a match.
func sameTests(m Marker, q ReuseQuery) bool {
	if m.Key != nil && q.Key != nil {
		return *m.Key == *q.Key
	}
	return m.TestedRef == q.TestedRef
}

func isLowerHex(s string) bool {
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// ForTier is the key of one tier of a matrix lane (matrix_tiers): the same
// tree, and a lane digest of the lane's digest and the tier's name, so a
// tier's own gate is reused only for that tier of the identical lane.
func (k TreeKey) ForTier(tier string) TreeKey {
	sum := sha256.Sum256([]byte("runpod-gpu-tier/1\x00" + k.Lane + "\x00" + tier))
	return TreeKey{Tree: k.Tree, Lane: hex.EncodeToString(sum[:])}
}

// TierCheckName is the check a matrix lane publishes for one tier, the
// record its reuse by tree reads: "<gate name> (<tier>)". Branch protection
// requires the gate itself, which passes only when every tier passed.
func TierCheckName(gateName, tier string) string {
	if gateName == "" {
		gateName = DefaultCheckName
	}
	return gateName + " (" + tier + ")"
}
