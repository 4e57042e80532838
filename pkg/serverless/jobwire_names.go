package serverless

import "github.com/org/runpod-gpu/pkg/serverless/jobwire"

// The job's wire format lives in package jobwire. These three names remain
// here only because the end-to-end tests under action-tests still spell them
// serverless.X; once those say jobwire.X, this file goes.

// DefaultPayloadLimits is jobwire.DefaultPayloadLimits.
var DefaultPayloadLimits = jobwire.DefaultPayloadLimits

// JobOutput is jobwire.JobOutput.
type JobOutput = jobwire.JobOutput

// SHA256Hex is jobwire.SHA256Hex.
func SHA256Hex(data []byte) string { return jobwire.SHA256Hex(data) }
