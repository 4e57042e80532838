package history

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/google/go-github/v66/github"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/lazyre"
)

// The lane's own jobs, named as in .github/workflows/gpu-lane.yml. Only their
// logs are read: the GPU job runs the pull request's code, which can print
// anything, fake cost lines and gate markers included.
const (
	JobAuthorize = "Authorize"
	JobProvision = "Provision a GPU"
	JobWatchdog  = "Watchdog"
	JobGate      = "Publish the GPU gate"
	JobCleanup   = "Delete the pod and report its cost"
	// JobReputation fetches the reputation record for provision; it runs no
	// pull-request code, so its log is as trustworthy as the others'.
	JobReputation = "Fetch the host reputation"
	// JobServerless is serverless-lane.yml's job that runs the one Serverless
	// job: the pull request's code runs in RunPod's worker, never on its
	// hosted runner, so it uploads the Serverless lane's cost artifact.
	JobServerless = "One Serverless job"
)

// LaneJobs are the jobs whose logs the history trusts: every job of the lane
// but the one on the pod.
var LaneJobs = []string{JobAuthorize, JobProvision, JobWatchdog, JobGate, JobCleanup, JobReputation, JobServerless}

// DefaultRunnerLabelPrefix is the lane's default runner-label-prefix: a job
// whose runs-on label or runner name starts with it ran on a pod.
const DefaultRunnerLabelPrefix = "runpod-gpu"

// DefaultTestStep is the GPU job's test step (gpu-lane.yml's "Run GPU tests").
const DefaultTestStep = "Run GPU tests"

// jobsFile holds the attempt's jobs as GitHub listed them.
const jobsFile = "jobs.json"

// JobInfo is what the history keeps of one job of an attempt: enough to
// tell the lane's own jobs from the one that ran on the pod.
type JobInfo struct {
	ID         int64    `json:"id"`
	Name       string   `json:"name"`
	Labels     []string `json:"labels"`
	RunnerName string   `json:"runnerName"`
	Steps      []string `json:"steps"`
	// StartedAt and CompletedAt bound when the job ran: a cost artifact
	// counts only when it was created in between (zero in evidence
	// collected before jobs carried them).
	StartedAt   time.Time `json:"startedAt,omitzero"`
	CompletedAt time.Time `json:"completedAt,omitzero"`
}

// jobInfos keeps what the history needs of listed jobs.
func jobInfos(jobs []*github.WorkflowJob) []JobInfo {
	out := make([]JobInfo, 0, len(jobs))
	for _, j := range jobs {
		info := JobInfo{ID: j.GetID(), Name: j.GetName(), Labels: append([]string{}, j.Labels...), RunnerName: j.GetRunnerName(), Steps: []string{},
			StartedAt: j.GetStartedAt().UTC(), CompletedAt: j.GetCompletedAt().UTC()}
		for _, s := range j.Steps {
			info.Steps = append(info.Steps, s.GetName())
		}
		out = append(out, info)
	}
	return out
}

func parseJobs(data []byte) ([]JobInfo, error) {
	var jobs []JobInfo
	if err := json.Unmarshal(data, &jobs); err != nil {
		return nil, fmt.Errorf("%s: %w", jobsFile, err)
	}
	return jobs, nil
}

// onPod reports whether the job ran on a pod's runner: a runs-on label or a
// runner name with the lane's label prefix, or the GPU test step. Any of
// them is enough: a job that might have run the pull request's code is not
// the lane's.
func (j JobInfo) onPod() bool {
	prefix := strings.ToLower(DefaultRunnerLabelPrefix)
	for _, l := range append([]string{j.RunnerName}, j.Labels...) {
		if strings.HasPrefix(strings.ToLower(l), prefix) {
			return true
		}
	}
	return slices.Contains(j.Steps, DefaultTestStep)
}

// laneArtifact says why a cost artifact is not the lane's own, or "" when it
// is. An artifact records nothing of the job that uploaded it (any job of the
// run can upload one, the GPU job's pull-request code included), so its name
// claims a job (cost.JobArtifactName) and the claim is checked: that job is
// one of this attempt's, one of the lane's own (LaneJobs, not on a pod), and
// it was running when the artifact was created.
func laneArtifact(f ArtifactFile, k AttemptKey, jobs []JobInfo) string {
	id, ok := cost.ArtifactJob(f.Name, k.RunID, k.Attempt)
	if !ok {
		return "its name claims no job of this attempt (cost-artifact-name without job-check-run-id, or not the lane's)"
	}
	i := slices.IndexFunc(jobs, func(j JobInfo) bool { return j.ID == id })
	if i < 0 {
		return fmt.Sprintf("job %d is not a job of this attempt", id)
	}
	j := jobs[i]
	switch {
	case !laneName(j.Name) || j.onPod():
		return fmt.Sprintf("job %d (%s) is not one of the lane's own jobs", id, j.Name)
	case f.CreatedAt.IsZero() || j.StartedAt.IsZero() || j.CompletedAt.IsZero():
		return "the evidence does not say when it was uploaded or when its job ran (collected by an earlier version; collect into a new directory)"
	case f.CreatedAt.Before(j.StartedAt) || f.CreatedAt.After(j.CompletedAt):
		return fmt.Sprintf("it was created at %s, while job %d (%s) ran from %s to %s", f.CreatedAt.Format(time.RFC3339), id, j.Name,
			j.StartedAt.Format(time.RFC3339), j.CompletedAt.Format(time.RFC3339))
	}
	return ""
}

// laneName reports whether a job name is a lane job's: the name itself, or
// "<caller job> / <name>" when the lane is a called reusable workflow.
func laneName(name string) bool {
	for _, lane := range LaneJobs {
		if name == lane || strings.HasSuffix(name, " / "+lane) {
			return true
		}
	}
	return false
}

// jobTrust decides which job names of a logs archive are the lane's own.
type jobTrust struct {
	trusted, untrusted map[string]bool // normalized job names
}

// newJobTrust trusts the lane jobs that did not run on a pod. A name that an
// untrusted job also has (after normalization) is not trusted: the archive
// could not tell their logs apart.
func newJobTrust(jobs []JobInfo) jobTrust {
	t := jobTrust{trusted: map[string]bool{}, untrusted: map[string]bool{}}
	for _, j := range jobs {
		n := normalizeJobName(j.Name)
		if laneName(j.Name) && !j.onPod() {
			t.trusted[n] = true
		} else {
			t.untrusted[n] = true
		}
	}
	return t
}

// trusts reports whether the archive's job name (a file's "<n>_<job>.txt"
// or a step folder's name) is a trusted lane job's.
func (t jobTrust) trusts(archiveName string) bool {
	n := normalizeJobName(dedupeSuffixRE.ReplaceAllString(archiveName, ""))
	return n != "" && t.trusted[n] && !t.untrusted[n]
}

// dedupeSuffixRE is the " (1)" GitHub adds to a second file of one name.
var dedupeSuffixRE = lazyre.Regexp{Pattern: ` \([0-9]+\)$`}

// normalizeJobName keeps only letters and digits, lower-cased: GitHub drops
// or replaces the characters a file name cannot hold ("/" of a called
// workflow's "caller / job") when it names a job's log file.
func normalizeJobName(name string) string {
	var b strings.Builder
	for _, r := range name {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}
