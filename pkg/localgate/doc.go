// Package localgate lets a maintainer's own GPU stand in for a rented pod.
//
// Two halves share this package:
//
//   - The local command ([Run]) checks that the maintainer's checkout is clean
//     and at the pull request's head, runs the GPU lane command in a fresh
//     detached worktree of that commit, posts the SHA-bound evidence comment
//     ([Evidence.Comment]) and dispatches the relay workflow on the default
//     branch with the inputs pr-number, sha and comment-id. It refuses a
//     fork PR unless the maintainer passes AllowFork (-allow-fork): the
//     fork's code would run on their machine. The lane never sees the
//     command's GitHub token (LaneEnv).
//   - The relay ([Relay]) runs in that workflow with nothing but the
//     workflow's token. It executes no pull-request code: it re-verifies the
//     dispatcher's role, the pull request (open, from this repository or a
//     fork, labelled gpu-validated-locally, head at the dispatched SHA), the comment (on that
//     pull request, by an admin or maintainer, first line the marker for that
//     SHA), reads the pull request a second time, and only then publishes the
//     "CI GPU gate" check with external_id local-gpu-gate:v1:<sha>, which the
//     reuse lookup never treats as reusable.
//
// The relay exists because branch protection pins the gate to the GitHub
// Actions app: a maintainer's own token can create neither a check run nor a
// status that satisfies it.
//
// # Evidence comment format (v1)
//
// The first line binds the comment to one commit; everything the relay reads
// is a "- Key: `value`" line below it (other lines are prose and ignored):
//
//	<!-- runpod-gpu local-gpu-gate:v1 sha=<40 or 64 lowercase hex> -->
//	### Local GPU validation passed for `<sha>`
//
//	- GPU: `NVIDIA GeForce RTX 4090`
//	- Driver: `550.54.14`
//	- CUDA: `12.4`
//	- Duration: `12m3s`
//	- Log SHA-256: `<sha256 of the lane's combined stdout and stderr>`
//	- Command: `make gpu-test`
//
// The marker is an HTML comment so it stays invisible when GitHub renders the
// comment; anyone can type it, which is why the relay checks the comment
// author's role, not just the marker.
package localgate
