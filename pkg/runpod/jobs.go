package runpod

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/org/runpod-gpu/pkg/reqpolicy"
)

// DefaultJobBaseURL is the Serverless job host: run, status, health and cancel
// live there, not on the management host.
const DefaultJobBaseURL = "https://api.runpod.ai"

// MaxRunBodyBytes is the documented limit of a /run request body.
const MaxRunBodyBytes = 10 << 20

// Bounds of the job host's answers. A status answer carries the job's output:
// at most a result archive of 6 MiB compressed, 8 MiB as base64, plus 1 MiB
// for everything else; every other answer is small. A larger answer fails at
// once (ErrAnswerTooLarge) instead of being polled again and again.
const (
	MaxJobStatusBytes int64 = 9 << 20
	MaxJobAnswerBytes int64 = 1 << 20
)

// JobState is a Serverless job's status.
type JobState string

// Job states.
const (
	JobInQueue    JobState = "IN_QUEUE"
	JobInProgress JobState = "IN_PROGRESS"
	JobCompleted  JobState = "COMPLETED"
	JobFailed     JobState = "FAILED"
	JobCancelled  JobState = "CANCELLED"
	JobTimedOut   JobState = "TIMED_OUT"
)

// Terminal reports whether the job will not change any more.
func (s JobState) Terminal() bool {
	return s == JobCompleted || s == JobFailed || s == JobCancelled || s == JobTimedOut
}

// JobStatus is the answer of /run and /status/{id}. Output and Error are kept
// raw: a FAILED job may carry artifacts in Output beside its Error.
type JobStatus struct {
	ID            string          `json:"id"`
	Status        JobState        `json:"status"`
	DelayTime     int64           `json:"delayTime,omitempty"`     // ms queued
	ExecutionTime int64           `json:"executionTime,omitempty"` // ms running
	Output        json.RawMessage `json:"output,omitempty"`
	Error         json.RawMessage `json:"error,omitempty"`
	WorkerID      string          `json:"workerId,omitempty"`
}

// ErrorText renders Error as text (a string, or compact JSON).
func (s JobStatus) ErrorText() string { return textOf(s.Error) }

// JobPolicy is the per-job execution policy of /run, in milliseconds.
type JobPolicy struct {
	ExecutionTimeout int64 `json:"executionTimeout,omitempty"`
	TTL              int64 `json:"ttl,omitempty"`
}

// Health is an endpoint's /health answer.
type Health struct {
	Jobs struct {
		Completed  int `json:"completed"`
		Failed     int `json:"failed"`
		InProgress int `json:"inProgress"`
		InQueue    int `json:"inQueue"`
		Retried    int `json:"retried"`
	} `json:"jobs"`
	Workers struct {
		Idle         int `json:"idle"`
		Initializing int `json:"initializing"`
		Ready        int `json:"ready"`
		Running      int `json:"running"`
		Throttled    int `json:"throttled"`
		Unhealthy    int `json:"unhealthy"`
	} `json:"workers"`
}

// Quiet reports whether the endpoint has never had work: nothing queued,
// running, or in its history.
func (h Health) Quiet() bool {
	j := h.Jobs
	return j.Completed == 0 && j.Failed == 0 && j.InProgress == 0 && j.InQueue == 0 && j.Retried == 0
}

// JobClient calls the Serverless job host. It shares the management client's
// policy (and so its redactor) when built with WithPolicy.
type JobClient struct {
	inner *Client
}

// NewJobClient returns a client for the job host baseURL ("" means
// DefaultJobBaseURL) authenticating with apiKey.
func NewJobClient(baseURL, apiKey string, opts ...Option) *JobClient {
	if strings.TrimSpace(baseURL) == "" {
		baseURL = DefaultJobBaseURL
	}
	return &JobClient{inner: New(baseURL, apiKey, opts...)}
}

func jobPath(endpointID string, parts ...string) string {
	p := "/v2/" + url.PathEscape(endpointID)
	for _, s := range parts {
		p += "/" + url.PathEscape(s)
	}
	return p
}

// checkJobIDs refuses an endpoint or job id that cannot stand in a job's path.
func checkJobIDs(op, endpointID, jobID string) error {
	if err := checkID(op, "endpoint", endpointID); err != nil {
		return err
	}
	return checkID(op, "job", jobID)
}

// Health reads an endpoint's job and worker counts. It is read-only and
// retried within the policy; ErrUnauthorized means the key does not reach the job host.
func (j *JobClient) Health(ctx context.Context, endpointID string) (*Health, error) {
	op := "health of endpoint " + endpointID
	if err := checkID(op, "endpoint", endpointID); err != nil {
		return nil, err
	}
	var h Health
	if err := j.inner.getJSON(ctx, call{op: op, method: http.MethodGet, path: jobPath(endpointID, "health"), limit: MaxJobAnswerBytes}, &h); err != nil {
		return nil, err
	}
	return &h, nil
}

// Run submits one job. The policy would send it again after a 429; the
// Serverless lane sends it with reqpolicy.WithAttemptLimit(ctx, 1), so that a
// job is never submitted twice: a transport or server error leaves the job's
// existence unknown and is never answered by a second submission.
// Bodies over MaxRunBodyBytes are refused before sending.
func (j *JobClient) Run(ctx context.Context, endpointID string, input any, policy JobPolicy) (*JobStatus, error) {
	op := "run job on endpoint " + endpointID
	if err := checkID(op, "endpoint", endpointID); err != nil {
		return nil, err
	}
	body := struct {
		Input  any       `json:"input"`
		Policy JobPolicy `json:"policy"`
	}{input, policy}
	encoded, err := json.Marshal(body)
	if err != nil {
		return nil, invalidArgument(op, "encode input: %v", err)
	}
	if len(encoded) >= MaxRunBodyBytes {
		return nil, invalidArgument(op, "request body is %d bytes: the /run limit is %d", len(encoded), MaxRunBodyBytes)
	}
	var st JobStatus
	if err := j.inner.getJSON(ctx, call{op: op, method: http.MethodPost, path: jobPath(endpointID, "run"), body: json.RawMessage(encoded), limit: MaxJobAnswerBytes}, &st); err != nil {
		return nil, err
	}
	if strings.TrimSpace(st.ID) == "" {
		return nil, j.inner.unusable(op, "the answer names no job id")
	}
	return &st, nil
}

// Status reads a job's state; a 404 means the job expired or never existed.
func (j *JobClient) Status(ctx context.Context, endpointID, jobID string) (*JobStatus, error) {
	op := fmt.Sprintf("status of job %s", jobID)
	if err := checkJobIDs(op, endpointID, jobID); err != nil {
		return nil, err
	}
	cl := call{op: op, method: http.MethodGet, path: jobPath(endpointID, "status", jobID), limit: MaxJobStatusBytes}
	return getRecord(ctx, j.inner, cl, "job", jobID, func(st *JobStatus) string { return st.ID })
}

// Cancel stops a queued or running job. Cancelling is idempotent, so it is
// retried within the policy.
func (j *JobClient) Cancel(ctx context.Context, endpointID, jobID string) (*JobStatus, error) {
	op := fmt.Sprintf("cancel job %s", jobID)
	if err := checkJobIDs(op, endpointID, jobID); err != nil {
		return nil, err
	}
	var st JobStatus
	if err := j.inner.getJSON(reqpolicy.AllowRetry(ctx), call{op: op, method: http.MethodPost, path: jobPath(endpointID, "cancel", jobID), limit: MaxJobAnswerBytes}, &st); err != nil {
		return nil, err
	}
	return &st, nil
}
