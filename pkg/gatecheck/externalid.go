// Package gatecheck is the record and protocol of the "CI GPU gate" check run
// that branch protection requires, shared by every job that reads or writes
// one: the gate job (pkg/gate), provision, the local-gate relay and the
// history. It holds the external id and marker formats and their parsers, the
// gate kinds, the check's content and Publish, the reuse lookup of an earlier
// gate (DecideReuse), the in-progress claim that lets overlapping lanes pay
// once (ClaimOrWait), and the tested-tree key with its lane digest.
//
// A gate records what it validated in its external_id,
// "runpod-gpu-gate:v1:<tested ref>:<kind>", so a later delivery of the same
// trigger can reuse an earlier paid success instead of paying again.
package gatecheck

import (
	"fmt"
	"strings"

	"github.com/org/runpod-gpu/pkg/wire"
)

// Kind is the outcome a gate records.
type Kind string

// The gate kinds. Only paid, serverless and reused successes can be reused.
const (
	KindPaid        Kind = "paid"         // a pod ran the GPU tests
	KindReused      Kind = "reused"       // an earlier paid (or reused) success for the same ref
	KindFailed      Kind = "failed"       // the paid path ran and failed
	KindNotRequired Kind = "not-required" // the change touches no GPU path
	KindLocal       Kind = "local"        // a maintainer's local GPU validated it (relay)
	KindSkipped     Kind = "skipped"      // the paid path was skipped (closed PR, label, …)
	// KindServerless: one Serverless job ran the GPU tests (the second lane);
	// its gate records the SHA-256 of the payload the job carried.
	KindServerless Kind = "serverless"
)

// Kinds lists every known kind in a stable order.
var Kinds = []Kind{KindPaid, KindReused, KindFailed, KindNotRequired, KindLocal, KindSkipped, KindServerless}

// Known reports whether k is one of Kinds.
func (k Kind) Known() bool {
	for _, v := range Kinds {
		if k == v {
			return true
		}
	}
	return false
}

// Reusable reports whether a successful gate of this kind lets a later run skip paying.
// A serverless success counts like a paid one: both ran the configured GPU
// tests on a real GPU for exactly this tested ref.
func (k Kind) Reusable() bool { return k == KindPaid || k == KindReused || k == KindServerless }

// Prefixes of the markers. The local relay's marker deliberately differs so the
// reuse lookup can never mistake a local validation for a paid one.
const (
	ExternalIDPrefix = "runpod-gpu-gate:v1:"
	LocalIDPrefix    = "local-gpu-gate:v1:"
)

// LocalLabel marks a PR a maintainer validated on a local GPU: every paid job
// is skipped and the paid gate publishes nothing.
const LocalLabel = "gpu-validated-locally"

// DefaultCheckName is the check run name branch protection requires.
const DefaultCheckName = "CI GPU gate"

// ExternalID is a parsed gate marker.
type ExternalID struct {
	TestedRef string
	Kind      Kind
}

// String formats the marker, e.g. "runpod-gpu-gate:v1:<sha>:paid".
func (id ExternalID) String() string {
	return ExternalIDPrefix + id.TestedRef + ":" + string(id.Kind)
}

// Validate checks the ref is a full commit SHA and the kind is known.
func (id ExternalID) Validate() error {
	if !wire.IsCommitSHA(id.TestedRef) {
		return fmt.Errorf("gate external_id: tested ref %q: want a full lowercase commit SHA", id.TestedRef)
	}
	if !id.Kind.Known() {
		return fmt.Errorf("gate external_id: kind %q: want one of %s", id.Kind, KindList())
	}
	return nil
}

// FormatExternalID validates and formats a marker.
func FormatExternalID(testedRef string, kind Kind) (string, error) {
	id := ExternalID{TestedRef: testedRef, Kind: kind}
	if err := id.Validate(); err != nil {
		return "", err
	}
	return id.String(), nil
}

// ParseExternalID parses a marker written by FormatExternalID; anything else,
// including markers of other versions or the local relay, is an error.
func ParseExternalID(s string) (ExternalID, error) {
	rest, ok := strings.CutPrefix(s, ExternalIDPrefix)
	if !ok {
		return ExternalID{}, fmt.Errorf("gate external_id %q: want prefix %q", truncate(s), ExternalIDPrefix)
	}
	ref, kind, ok := strings.Cut(rest, ":")
	if !ok {
		return ExternalID{}, fmt.Errorf("gate external_id %q: want %q<ref>:<kind>", truncate(s), ExternalIDPrefix)
	}
	id := ExternalID{TestedRef: ref, Kind: Kind(kind)}
	if err := id.Validate(); err != nil {
		return ExternalID{}, err
	}
	return id, nil
}

// LocalExternalID is the relay's marker for a locally validated commit.
func LocalExternalID(sha string) (string, error) {
	if !wire.IsCommitSHA(sha) {
		return "", fmt.Errorf("local gate: sha %q: want a full lowercase commit SHA", sha)
	}
	return LocalIDPrefix + sha, nil
}

// KindList names every kind, comma-separated, for error messages.
func KindList() string {
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

func truncate(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}
