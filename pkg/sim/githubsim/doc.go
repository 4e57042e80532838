// Package githubsim is an in-process simulation of the parts of the GitHub REST API that the
// runpod-gpu actions use: JIT runner configs and the runner registry, check runs, pull requests,
// issue comments, collaborator permissions, workflow runs with attempts, jobs and steps,
// artifacts, run logs, workflow dispatch and run cancellation, plus installation tokens for
// GitHub Apps, and the Actions results service (Twirp) through which upload-artifact and
// download-artifact v4 move an artifact's bytes inside a run.
//
// A [Server] is an [net/http.Handler]; serve it with net/http/httptest and point a go-github
// client at it. Responses are shaped as GitHub returns them (nulls included) so go-github v66
// decodes them, lists page with Link headers, and errors carry GitHub's status codes and
// messages. Tests set state up and inspect it through the Server's methods.
//
// The simulation is deterministic: identifiers are sequential, secrets and fault draws come
// from streams seeded by [WithSeed], and every timestamp comes from the clock given to [WithClock].
// Scripted jobs advance only when that clock does; nothing sleeps or runs in the background.
// An External job's steps are reported by whoever really runs them (StartStep, EndStep).
//
// Endpoints under /_sim/ are not GitHub's: they let a stand-in runner connect with its JIT
// config and serve the signed URLs that log and artifact redirects point to and that
// artifacts are uploaded to.
package githubsim
