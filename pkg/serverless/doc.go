// Package serverless is the suite's second lane: it validates CUDA code with
// one RunPod Serverless job instead of a pod and a runner.
//
// The pieces, each usable alone and tested alone:
//
//   - payload.go: the source-only payload, a deterministic tar.gz whose
//     SHA-256 a person approves before anything is paid for;
//   - jobwire (a package of its own, shared with the pod-side worker): the
//     job's input and output and the checks an archive passes before one byte
//     of it is written (no absolute paths, traversal, links or duplicates;
//     size caps);
//   - receipt.go: the ownership receipt, which records the intent before each
//     create and the ids after, and is never overwritten by another attempt;
//   - ledger.go: the budget ledger shared across attempts (atomic writes, a
//     file lock, per-stage and total caps, reservations never refunded);
//   - settings.go: the endpoint and template settings the lane asks for and
//     verifies in every answer (RunPod was seen turning workersMax 0 into 3);
//   - lane.go: setup → health → run → cleanup over the RunPod clients.
package serverless
