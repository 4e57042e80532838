// Package inputform is the one place each kind of outside value is checked:
// a commit SHA, a label, a ref, a branch or artifact name, a price, a name
// shown to people, a pod id, a GPU type, a tier, an image reference. Action
// inputs (an actionio form:"…" tag) and the command line's flags use the
// same forms, so a value refused by one is refused by all, with the same words.
package inputform

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/lazyre"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/wire"
)

// Form is one kind of value: what it must look like, and the check.
type Form struct {
	// Expected says what a value must be, for an error after "want".
	Expected string
	// Valid reports whether a non-empty value has the form.
	Valid func(string) bool
}

// Kinds of value, as an actionio form:"…" tag names them.
const (
	SHA        = "sha"
	Label      = "label"
	Ref        = "ref"
	Branch     = "branch"
	Artifact   = "artifact"
	Price      = "price"
	Name       = "name"
	RunnerName = "runner-label"
	PodID      = "pod-id"
	GPUType    = "gpu-type"
	Tier       = "tier"
	Image      = "image"
)

// SHAForm is what a commit SHA must be.
const SHAForm = "a full commit SHA (40 lower-case hex digits, or 64 in a SHA-256 repository)"

// Bounds of the free-text kinds.
const (
	maxLabelLength = 50 // GitHub's limit on a label name
	maxNameLength  = 100
	maxRefLength   = 255
)

var (
	// podIDRE is what a RunPod pod id looks like: "xedezhzb9la3ye" (v1's 14
	// lower-case letters and digits), "pod_abc123" (the v2 contract's example).
	podIDRE    = lazyre.Regexp{Pattern: `^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`}
	branchRE   = lazyre.Regexp{Pattern: `^[A-Za-z0-9_][A-Za-z0-9._/-]{0,254}$`}
	artifactRE = lazyre.Regexp{Pattern: `^[A-Za-z0-9_][A-Za-z0-9._-]{0,199}$`}
	runnerRE   = lazyre.Regexp{Pattern: `^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`}
	// podImageRE is an image name RunPod pulls as written: unlike the lane's
	// image key (config.ImageForm, which provision resolves through the
	// registry's own host), Docker Hub shorthand such as runpod/pytorch counts.
	podImageRE = lazyre.Regexp{Pattern: `^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*(?::[0-9]{1,5})?/)?` +
		`[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*` +
		`(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$`}
)

// Forms are the kinds, by name.
var Forms = map[string]Form{
	SHA: {Expected: SHAForm, Valid: wire.IsCommitSHA},
	Label: {Expected: fmt.Sprintf("a GitHub label name: 1 to %d characters on one line, no control characters or <>", maxLabelLength),
		Valid: func(s string) bool { return oneLine(s, maxLabelLength) }},
	Ref: {Expected: fmt.Sprintf("a ref such as refs/heads/main or owner/repo/.github/workflows/gpu.yml@refs/heads/main: at most %d characters, no spaces, control characters, <> or ..", maxRefLength),
		Valid: validRef},
	Branch: {Expected: "a branch name such as main: letters, digits and ._/- (not starting with . or -, no .., //, trailing / or .lock), at most 255 characters",
		Valid: validBranch},
	Artifact: {Expected: "an artifact name of 1 to 200 letters, digits and ._- (no /, no ..), not starting with . or -",
		Valid: func(s string) bool { return artifactRE.MatchString(s) && !strings.Contains(s, "..") }},
	Price: {Expected: PriceForm, Valid: func(s string) bool { _, ok := ParsePrice(s); return ok }},
	Name: {Expected: fmt.Sprintf("a name of 1 to %d characters on one line, no control characters or <>", maxNameLength),
		Valid: func(s string) bool { return oneLine(s, maxNameLength) }},
	RunnerName: {Expected: "a runner label of 1 to 64 letters, digits and ._- (provision's runner-label output)", Valid: runnerRE.MatchString},
	PodID:      {Expected: "a RunPod pod id: letters, digits, _ and - (at most 64), such as xedezhzb9la3ye", Valid: ValidPodID},
	GPUType:    {Expected: config.GPUIDForm, Valid: config.ValidGPUID},
	Tier:       {Expected: "a tier " + strings.TrimPrefix(config.TierNameForm, "a "), Valid: config.ValidTierName},
	Image: {Expected: "an image reference [registry/]path[:tag][@sha256:<64 hex>] such as runpod/pytorch:2.4.0 or " + config.DefaultImage + " (at most 255 characters)",
		Valid: func(s string) bool { return len(s) <= 255 && podImageRE.MatchString(s) }},
}

// ValidPodID reports whether id has the shape of a RunPod pod id.
func ValidPodID(id string) bool { return podIDRE.MatchString(id) }

// PriceForm is what an hourly price given as text must be.
const PriceForm = "a positive number of USD per hour up to 1000, or 0 or empty when unknown"

// MaxPricePerHour bounds an hourly price: RunPod's dearest offers are a few
// dollars a GPU, and 1e308 would make every sum infinite.
const MaxPricePerHour = 1000

// ParsePrice reads an hourly price in USD: a finite number from 0 to
// MaxPricePerHour, to the nearest micro-dollar per hour; ok is false for
// anything else (NaN, -1, 1e308, "$1").
func ParsePrice(s string) (price money.Rate, ok bool) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > MaxPricePerHour {
		return 0, false
	}
	return money.PerHour(v), true
}

// Error is a value that does not have its kind's form.
type Error struct {
	Value, Expected string
}

func (e *Error) Error() string { return fmt.Sprintf("%q: want %s", e.Value, e.Expected) }

// Check returns an *Error when value (not empty) does not have kind's form;
// an unknown kind (a programming error, which Known lets a caller catch) checks nothing.
func Check(kind, value string) error {
	f, ok := Forms[kind]
	if !ok || f.Valid(value) {
		return nil
	}
	return &Error{Value: value, Expected: f.Expected}
}

// Known reports whether kind names a form.
func Known(kind string) bool { _, ok := Forms[kind]; return ok }

// oneLine reports whether s is 1 to max characters of valid UTF-8 without
// control characters (a newline would start a workflow command in a log)
// or the angle brackets of HTML markup.
func oneLine(s string, max int) bool {
	if !utf8.ValidString(s) || utf8.RuneCountInString(s) > max || strings.TrimSpace(s) == "" {
		return false
	}
	return !strings.ContainsFunc(s, func(r rune) bool {
		return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || r == '<' || r == '>'
	})
}

func validRef(s string) bool {
	if !oneLine(s, maxRefLength) || strings.Contains(s, "..") {
		return false
	}
	return !strings.ContainsFunc(s, unicode.IsSpace)
}

// validBranch is git check-ref-format's rules for a branch, on a narrower
// alphabet: no shell, glob or ref-expression characters at all.
func validBranch(s string) bool {
	switch {
	case !branchRE.MatchString(s), strings.Contains(s, ".."), strings.Contains(s, "//"), strings.Contains(s, "/."),
		strings.HasSuffix(s, "/"), strings.HasSuffix(s, "."), strings.HasSuffix(s, ".lock"):
		return false
	}
	return true
}
