// Package ownership defines how a pod says who created it: environment tags
// naming the repository, the owning workflow, the run id and the run attempt,
// and a pod name derived from the same identity. Provision writes them; cleanup
// and the reaper only ever touch pods whose tags are well formed and whose name
// agrees, so a foreign or hand-made pod is never deleted.
//
// It also holds the other names one job writes and another reads, so that no
// job imports another: the debug-retention artifact name (provision → reaper)
// and the Serverless lane's endpoint and template names (lane → reaper).
package ownership

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/org/runpod-gpu/pkg/lazyre"
)

// Environment variable names of the ownership tags on a pod.
const (
	EnvRepository = "RUNPOD_GPU_REPOSITORY" // owner/name
	EnvOwner      = "RUNPOD_GPU_OWNER"      // OwnerMarker: the suite, and the workflow path
	EnvRunID      = "RUNPOD_GPU_RUN_ID"
	EnvAttempt    = "RUNPOD_GPU_RUN_ATTEMPT"
	EnvCandidate  = "RUNPOD_GPU_CANDIDATE" // the candidate number N of label <prefix>-c<N>
	EnvKeepFailed = "RUNPOD_GPU_KEEP_FAILED"
)

// markerPrefix starts every owner marker, so pods of other tools never match.
const markerPrefix = "runpod-gpu:"

// NamePrefix starts every pod name this suite creates.
const NamePrefix = "rgpu"

// Tags identify the workflow attempt that owns a pod.
type Tags struct {
	Repository string // owner/name
	Workflow   string // workflow path, e.g. .github/workflows/gpu.yml
	RunID      int64
	Attempt    int
	Candidate  int
	KeepFailed bool
}

var (
	repoRE     = lazyre.Regexp{Pattern: `^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`}
	workflowRE = lazyre.Regexp{Pattern: `^\.github/workflows/[A-Za-z0-9_./-]+\.ya?ml$`}
)

// Validate checks every tag is well formed.
func (t Tags) Validate() error {
	switch {
	case !repoRE.MatchString(t.Repository):
		return fmt.Errorf("ownership: repository %q: want owner/name", t.Repository)
	case !workflowRE.MatchString(t.Workflow) || strings.Contains(t.Workflow, ".."):
		return fmt.Errorf("ownership: workflow %q: want a path under .github/workflows/", t.Workflow)
	case t.RunID <= 0:
		return fmt.Errorf("ownership: run id %d: want a positive number", t.RunID)
	case t.Attempt <= 0:
		return fmt.Errorf("ownership: run attempt %d: want a positive number", t.Attempt)
	case t.Candidate <= 0:
		return fmt.Errorf("ownership: candidate %d: want a positive number", t.Candidate)
	}
	return nil
}

// PodName is the run-unique pod name, rgpu-<run>-<attempt>-c<N>; reconciling a
// lost create looks for exactly this name. ParsePodName reads it back.
func (t Tags) PodName() string {
	return fmt.Sprintf("%s-%d-%d-c%d", NamePrefix, t.RunID, t.Attempt, t.Candidate)
}

// PodNamePattern describes the pod names of one run attempt,
// rgpu-<run>-<attempt>-c<N>, for messages about a name that is not one.
func PodNamePattern(runID int64, attempt int) string {
	return fmt.Sprintf("%s-%d-%d-c<N>", NamePrefix, runID, attempt)
}

// ParsePodName reads a name Tags.PodName writes: the run id, attempt and
// candidate, each a positive decimal without sign or leading zero. ok is false
// for any other name, so a hand-made pod never passes for one of a run's.
func ParsePodName(name string) (runID int64, attempt, candidate int, ok bool) {
	rest, found := strings.CutPrefix(name, NamePrefix+"-")
	if !found {
		return 0, 0, 0, false
	}
	runText, rest, found1 := strings.Cut(rest, "-")
	attemptText, candidateText, found2 := strings.Cut(rest, "-c")
	if !found1 || !found2 {
		return 0, 0, 0, false
	}
	run, ok1 := positiveDecimal(runText, 64)
	att, ok2 := positiveDecimal(attemptText, strconv.IntSize)
	cand, ok3 := positiveDecimal(candidateText, strconv.IntSize)
	if !ok1 || !ok2 || !ok3 {
		return 0, 0, 0, false
	}
	return run, int(att), int(cand), true
}

// positiveDecimal parses s as a canonical positive decimal that fits a signed
// integer of bitSize bits.
func positiveDecimal(s string, bitSize int) (int64, bool) {
	if s == "" || s[0] == '0' || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, bitSize)
	return n, err == nil
}

// OwnerMarker is the value of EnvOwner.
func (t Tags) OwnerMarker() string { return markerPrefix + t.Workflow }

// Env returns the tags as pod environment variables.
func (t Tags) Env() map[string]string {
	return map[string]string{
		EnvRepository: t.Repository,
		EnvOwner:      t.OwnerMarker(),
		EnvRunID:      strconv.FormatInt(t.RunID, 10),
		EnvAttempt:    strconv.Itoa(t.Attempt),
		EnvCandidate:  strconv.Itoa(t.Candidate),
		EnvKeepFailed: strconv.FormatBool(t.KeepFailed),
	}
}

// FromPod reads the tags of a pod from its name and environment. It fails
// unless every tag is well formed and the name agrees with them: such a pod is
// not ours to touch.
func FromPod(name string, env map[string]string) (Tags, error) {
	marker := env[EnvOwner]
	workflow, ok := strings.CutPrefix(marker, markerPrefix)
	if !ok {
		return Tags{}, fmt.Errorf("ownership: owner marker %q: not a runpod-gpu pod", marker)
	}
	runID, err1 := strconv.ParseInt(env[EnvRunID], 10, 64)
	attempt, err2 := strconv.Atoi(env[EnvAttempt])
	candidate, err3 := strconv.Atoi(env[EnvCandidate])
	if err1 != nil || err2 != nil || err3 != nil {
		return Tags{}, fmt.Errorf("ownership: run id %q, attempt %q or candidate %q is not a number", env[EnvRunID], env[EnvAttempt], env[EnvCandidate])
	}
	t := Tags{Repository: env[EnvRepository], Workflow: workflow, RunID: runID, Attempt: attempt, Candidate: candidate,
		KeepFailed: env[EnvKeepFailed] == "true"}
	if err := t.Validate(); err != nil {
		return Tags{}, err
	}
	if name != t.PodName() {
		return Tags{}, fmt.Errorf("ownership: pod name %q disagrees with its tags (want %q)", name, t.PodName())
	}
	return t, nil
}

// SameAttempt reports whether t belongs to the given repository, run and attempt.
func (t Tags) SameAttempt(repository string, runID int64, attempt int) bool {
	return strings.EqualFold(t.Repository, repository) && t.RunID == runID && t.Attempt == attempt
}
