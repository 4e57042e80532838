// Package runpod is a client for RunPod's REST v2 management API
// (https://api.runpod.io/v2): the GPU and data-center catalog and pods.
//
// Requests go through one reqpolicy.Policy (retries, shared cooldown, deadline-
// fitting waits, redaction). Pod creation is never re-sent: a lost or 5xx
// create answer may hide a pod that exists, and the caller reconciles by name.
// Every failure is an *APIError whose Kind callers test with errors.Is against
// the Err* sentinels; errors never contain the API key.
//
// Where the live API differs from the published OpenAPI snapshot, the client follows the live API; those deltas
// are marked "Delta N" and gathered in deltas.go.
package runpod
