// Package serverless is the suite's second lane: it validates CUDA code with
// one RunPod Serverless job instead of a pod and a runner.
//
// The pieces, each usable alone and tested alone:
//
//   - payload.go: the source-only payload, a deterministic tar.gz whose
//     SHA-256 a person approves before anything is paid for, never carrying
//     the CredentialPatterns;
//   - jobwire (a package of its own, shared with the pod-side worker): the
//     job's input and output and the checks an archive passes before one byte
//     of it is written (no absolute paths, traversal, links, duplicates or
//     control characters; size caps);
//   - receipt.go: the ownership receipt, which records what setup asked for,
//     the intent before each create and the ids after, and is never
//     overwritten by another attempt;
//   - ledger.go: the budget ledger shared across attempts (atomic writes, a
//     file lock, a checksum, per-stage and total caps, reservations never
//     refunded, one open attempt at a time); carry.go keeps one ledger for a
//     repository across CI runs through an artifact;
//   - settings.go: the endpoint and template settings the lane asks for and
//     verifies in every answer (RunPod was seen turning workersMax 0 into 3),
//     and the exclusion of the pool's other cards;
//   - lane.go, setup.go, run.go, cleanup.go: setup → health → run → cleanup
//     over the RunPod clients; report.go: an attempt's summary and cost.
package serverless
