// Package gate is the gate job: Authorize decides whether a tested ref still
// needs a paid GPU run (role, fork approval, paths, an earlier reusable gate),
// and Conclude publishes the "CI GPU gate" check run that ends a workflow run.
//
// The check run's record and protocol (external id, kinds, content, reuse
// lookup, claim) live in pkg/gatecheck, which the other jobs that read or
// write a gate import instead of this job.
package gate
