package cost

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Cost artifact naming and schema. The history tool downloads only artifacts
// whose names start with ArtifactNamePrefix and reads ArtifactFileName inside.
const (
	ArtifactSchema     = "runpod-gpu-cost/v1"   // the "schema" value of every artifact this version writes
	ArtifactNamePrefix = "runpod-gpu-cost-"     // see ArtifactName
	ArtifactFileName   = "runpod-gpu-cost.json" // the one file inside the artifact
)

// ArtifactName names a run attempt's cost artifact: "runpod-gpu-cost-<run>-<attempt>".
// The history trusts only a name that also carries the uploading job (JobArtifactName).
func ArtifactName(runID int64, runAttempt int) string {
	return fmt.Sprintf("%s%d-%d", ArtifactNamePrefix, runID, runAttempt)
}

// JobArtifactName names the cost artifact job jobID (its check run id,
// ${{ job.check_run_id }}) uploads for a run attempt:
// "runpod-gpu-cost-<run>-<attempt>-job-<job id>". An artifact carries no
// record of the job that uploaded it, so its name says which job it claims,
// and the history accepts it only when that job is one of the lane's own in
// the attempt's job list and the artifact was created while that job ran.
func JobArtifactName(runID int64, runAttempt int, jobID int64) string {
	return fmt.Sprintf("%s-job-%d", ArtifactName(runID, runAttempt), jobID)
}

// ArtifactJob returns the job a cost artifact's name claims for a run
// attempt: ok only for a name JobArtifactName wrote for that attempt.
func ArtifactJob(name string, runID int64, runAttempt int) (jobID int64, ok bool) {
	rest, found := strings.CutPrefix(name, ArtifactName(runID, runAttempt)+"-job-")
	if !found || rest == "" || rest[0] == '0' || strings.TrimLeft(rest, "0123456789") != "" {
		return 0, false
	}
	id, err := strconv.ParseInt(rest, 10, 64)
	if err != nil || id < 1 {
		return 0, false
	}
	return id, true
}

// Trigger says why a workflow run tested its ref, so the history can report
// repeated automatic runs of a ref separately from manual confirmations.
type Trigger string

// Triggers.
const (
	TriggerAutomatic Trigger = "automatic" // pull request / workflow_run delivery
	TriggerManual    Trigger = "manual"    // workflow_dispatch
)

// TriggerOf classifies a run by its event (GITHUB_EVENT_NAME): a
// workflow_dispatch is a manual confirmation, every other event automatic.
func TriggerOf(eventName string) Trigger {
	if eventName == "workflow_dispatch" {
		return TriggerManual
	}
	return TriggerAutomatic
}

// Run identifies the workflow run attempt a cost artifact belongs to.
type Run struct {
	Repository string  `json:"repository"` // "owner/name"
	ID         int64   `json:"runId"`
	Attempt    int     `json:"runAttempt"`
	TestedRef  string  `json:"testedRef"` // pinned merge SHA or dispatched SHA
	Trigger    Trigger `json:"trigger"`
	PRNumber   int     `json:"prNumber"` // 0 for a manual validation without a PR
}

// Validate checks the run id, attempt and trigger.
func (r Run) Validate() error {
	switch {
	case r.ID < 1:
		return fieldErr("runId", invalid("%d: want a workflow run id of 1 or more", r.ID))
	case r.Attempt < 1:
		return fieldErr("runAttempt", invalid("%d: want a run attempt of 1 or more", r.Attempt))
	case r.Trigger != TriggerAutomatic && r.Trigger != TriggerManual:
		return fieldErr("trigger", invalid("%q: want %s or %s", r.Trigger, TriggerAutomatic, TriggerManual))
	case r.PRNumber < 0:
		return fieldErr("prNumber", invalid("%d: want a pull request number, or 0 for none", r.PRNumber))
	}
	return nil
}

// Artifact is the cost artifact file (schema ArtifactSchema) that cleanup and
// the watchdog upload and the history tool reads.
type Artifact struct {
	Run    Run
	Action string // the action that wrote it, e.g. "cleanup", "watchdog" or "serverless"
	Report Report
	// More are the run attempt's other accepted pods, each its own report:
	// further tiers of a matrix lane, a pod lost to its host and its re-run.
	More []Report
	// Serverless is set by the Serverless lane, whose report holds no pod.
	Serverless *ServerlessSpend
}

// Reports are every report of the artifact, Report first.
func (a Artifact) Reports() []Report { return append([]Report{a.Report}, a.More...) }

type artifactJSON struct {
	Schema     string           `json:"schema"`
	Run        runIn            `json:"run"`
	Action     string           `json:"action"`
	Report     Report           `json:"report"`
	More       []Report         `json:"more,omitempty"`
	Serverless *ServerlessSpend `json:"serverless,omitempty"`
}

type runIn Run

func (r *runIn) UnmarshalJSON(b []byte) error { return decodeFields(b, r) }

// MarshalJSON writes the artifact under ArtifactSchema.
func (a Artifact) MarshalJSON() ([]byte, error) {
	return json.Marshal(artifactJSON{Schema: ArtifactSchema, Run: runIn(a.Run), Action: a.Action, Report: a.Report, More: a.More, Serverless: a.Serverless})
}

// ParseArtifact decodes and validates a cost artifact file. A different schema
// is ErrUnsupportedSchema; keys this version does not know are ignored.
func ParseArtifact(data []byte) (Artifact, error) {
	var head map[string]json.RawMessage
	if err := json.Unmarshal(data, &head); err != nil || head == nil {
		return Artifact{}, fmt.Errorf("cost artifact: %w: want a JSON object", ErrInvalidValue)
	}
	var schema string
	if err := decodeField(head, "schema", &schema, "a string"); err != nil {
		return Artifact{}, fmt.Errorf("cost artifact: %w", err)
	}
	if schema != ArtifactSchema {
		return Artifact{}, fmt.Errorf("cost artifact: %w", fieldErr("schema",
			fmt.Errorf("%w %q: want %q", ErrUnsupportedSchema, clip([]byte(schema)), ArtifactSchema)))
	}
	for _, key := range []string{"run", "report"} {
		if raw, ok := head[key]; !ok || isNull(raw) {
			return Artifact{}, fmt.Errorf("cost artifact: %w", fieldErr(key, invalid("missing; want an object")))
		}
	}
	var in artifactJSON
	if err := decodeFields(data, &in); err != nil {
		return Artifact{}, fmt.Errorf("cost artifact: %w", err)
	}
	a := Artifact{Run: Run(in.Run), Action: in.Action, Report: in.Report, More: in.More, Serverless: in.Serverless}
	if err := a.Run.Validate(); err != nil {
		return Artifact{}, fmt.Errorf("cost artifact: %w", fieldErr("run", err))
	}
	return a, nil
}
